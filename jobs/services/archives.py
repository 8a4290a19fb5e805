"""Unpacking a batch's ZIP: each member checked, and spooled to disk as an upload, or refused with a typed error.

Nothing of the archive's own account of a member is trusted for a limit: its sizes are measured while
it is decompressed, and reading stops as soon as one is passed, so a bomb costs at most the limit it
crosses. A member is refused (an ``OcrError`` naming why, which the batch lists) when its name climbs
out of the archive or is absolute, it is a symbolic link, it is encrypted, it is an archive itself,
it unpacks to more than ``OCR_BATCH_MAX_RATIO`` times its packed size (past the first MiB, which any
small file may reach) or past what is left of ``OCR_BATCH_MAX_UNCOMPRESSED_BYTES`` for the batch, or
is larger than an upload may be (``OCR_MAX_UPLOAD_BYTES``). Every other check is the upload's own
(``job_create``). A refused member leaves nothing behind: its spool file is deleted.
"""

from __future__ import annotations

import hashlib
import stat
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files.uploadedfile import TemporaryUploadedFile

from jobs.errors import (
    ArchiveBomb, ArchiveEncrypted, ArchiveInvalid, ArchiveNested, ArchivePathUnsafe, ArchiveSymlink,
)
from ocr_engine.errors import CorruptFile, FileTooLarge, OcrError

CHUNK_BYTES = 256 * 1024
RATIO_FREE_BYTES = 1024 * 1024  # below this a member's ratio is not judged: tiny files compress well
ARCHIVE_SUFFIXES = {".zip", ".tar", ".gz", ".tgz", ".bz2", ".tbz2", ".xz", ".txz", ".zst", ".7z", ".rar", ".jar"}
ARCHIVE_SIGNATURES = (b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"7z\xbc\xaf\x27\x1c",
                      b"Rar!\x1a\x07", b"\x28\xb5\x2f\xfd")
TAR_MAGIC_OFFSET = 257  # "ustar" in a tar header
ENCRYPTED_FLAG = 0x1  # general purpose bit 0 (APPNOTE 4.4.4)
# macOS's Finder adds a resource-fork copy of every file under this folder: not the user's documents.
SKIPPED_FOLDERS = ("__MACOSX/",)


@dataclass
class Member:
    """One file of the archive: spooled (``upload``) when it passed, or the reason it was refused."""

    name: str
    upload: TemporaryUploadedFile | None = None
    error: OcrError | None = None


def is_zip(upload) -> bool:
    """Whether the upload is sent as a ZIP: named ``.zip``, or starting like one without any file suffix.

    By name first: Office documents, EPUBs and JARs are ZIPs inside, and are files to refuse, not unpack.
    """
    suffix = PurePosixPath(str(getattr(upload, "name", "") or "")).suffix.lower()
    if suffix:
        return suffix == ".zip"
    upload.seek(0)
    head = upload.read(4)
    upload.seek(0)
    return head == b"PK\x03\x04"


def zip_open(upload) -> zipfile.ZipFile:
    """Open the upload as a ZIP (its central directory only); raises ArchiveInvalid."""
    try:
        return zipfile.ZipFile(upload)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError):
        raise ArchiveInvalid(f"{getattr(upload, 'name', 'The file')} is not a ZIP archive that can be read.") from None


def zip_files(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The archive's entries that are members of a batch: not folders, not Finder's copies."""
    return [info for info in archive.infolist() if not info.is_dir() and not info.filename.startswith(SKIPPED_FOLDERS)]


def zip_members(archive: zipfile.ZipFile) -> Iterator[Member]:
    """Each member in archive order, spooled or refused; the caller closes each ``upload``.

    ``OCR_BATCH_MAX_UNCOMPRESSED_BYTES`` counts the members that passed: a refused bomb does not use
    up the others' share.
    """
    budget = settings.OCR_BATCH_MAX_UNCOMPRESSED_BYTES
    for info in zip_files(archive):
        member = Member(name=info.filename)
        try:
            _check_entry(info)
            member.upload = _spool(archive, info, budget)
            budget -= member.upload.size
        except OcrError as exc:
            member.error = exc
        yield member


def _check_entry(info: zipfile.ZipInfo) -> None:
    """What the directory entry alone tells: the name, the kind of file, encryption, a nested archive's suffix."""
    name = info.filename.replace("\\", "/")
    path = PurePosixPath(name)
    if name.startswith("/") or (len(name) > 1 and name[1] == ":") or ".." in path.parts:
        raise ArchivePathUnsafe(f"{info.filename} names a place outside the archive; it was not unpacked.")
    if stat.S_ISLNK(info.external_attr >> 16):  # Unix mode bits in the high half (APPNOTE 4.4.15)
        raise ArchiveSymlink(f"{info.filename} is a symbolic link, not a file; it was not followed.")
    if info.flag_bits & ENCRYPTED_FLAG:
        raise ArchiveEncrypted(f"{info.filename} is encrypted; send it unencrypted.")
    if path.suffix.lower() in ARCHIVE_SUFFIXES:
        raise ArchiveNested(f"{info.filename} is an archive inside the archive; batches unpack one level. "
                            "Send its files in the outer ZIP.")


def _spool(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: int) -> TemporaryUploadedFile:
    """Decompress the member to a temporary upload, measuring as it goes; deleted again if refused."""
    upload = TemporaryUploadedFile(PurePosixPath(info.filename).name, "application/octet-stream", 0, None)
    try:
        upload.sha256 = _copy(archive, info, upload, budget)  # as jobs.uploads hashes a streamed upload
        upload.size = upload.tell()
        upload.seek(0)
        return upload
    except BaseException:
        upload.close()  # a TemporaryUploadedFile's file is deleted on close
        raise


def _copy(archive: zipfile.ZipFile, info: zipfile.ZipInfo, out, budget: int) -> str:
    digest = hashlib.sha256()
    largest_ratio = max(info.compress_size, 1) * settings.OCR_BATCH_MAX_RATIO
    written = 0
    try:
        with archive.open(info) as member:
            while chunk := member.read(CHUNK_BYTES):
                if written == 0:
                    _check_not_archive(info.filename, chunk)
                written += len(chunk)
                if written > RATIO_FREE_BYTES and written > largest_ratio:
                    raise ArchiveBomb(f"{info.filename} unpacks to more than {settings.OCR_BATCH_MAX_RATIO} times "
                                      "its packed size (OCR_BATCH_MAX_RATIO); it was not unpacked.")
                if written > budget:
                    raise ArchiveBomb(f"{info.filename} takes the batch past "
                                      f"{settings.OCR_BATCH_MAX_UNCOMPRESSED_BYTES} unpacked bytes "
                                      "(OCR_BATCH_MAX_UNCOMPRESSED_BYTES); it was not unpacked.")
                if written > settings.OCR_MAX_UPLOAD_BYTES:
                    raise FileTooLarge(f"{info.filename} is larger than {settings.OCR_MAX_UPLOAD_BYTES} bytes, "
                                       "the largest file an upload may be.")
                digest.update(chunk)
                out.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
        # A bad CRC (its header lied about its size), a cut stream, an unknown compression method.
        raise CorruptFile(f"{info.filename} could not be unpacked: {exc}.") from None
    return digest.hexdigest()


def _check_not_archive(name: str, head: bytes) -> None:
    """An archive under another file name, by its signature."""
    if head.startswith(ARCHIVE_SIGNATURES) or head[TAR_MAGIC_OFFSET:TAR_MAGIC_OFFSET + 5] == b"ustar":
        raise ArchiveNested(f"{name} is an archive inside the archive; batches unpack one level. "
                            "Send its files in the outer ZIP.")
