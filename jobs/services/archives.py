"""Unpacking a batch's ZIP: each member checked, and spooled to disk as an upload, or refused with a typed error.

Nothing of the archive's own account of a member is trusted for a limit: its sizes are measured while
it is decompressed, and reading stops as soon as one is passed, so a bomb costs at most the limit it
crosses. Before ``zipfile`` reads the central directory, its size and entry count are read from the
end-of-central-directory record (``zip_open``), so a directory of a million entries is refused unread.
A member is refused (an ``OcrError`` naming why, which the batch lists) when its name climbs
out of the archive, is absolute, longer than ``MAX_NAME_BYTES`` or malformed, it is a symbolic link, it
is encrypted, it is compressed by another method than stored or deflated (``zipfile`` inflates bzip2 and
LZMA whole in one ``read()``, past any limit), it is an archive itself, it unpacks to more than
``OCR_BATCH_MAX_RATIO`` times its packed size (past the first MiB, which any small file may reach) or past
what is left of ``OCR_BATCH_MAX_UNCOMPRESSED_BYTES`` for the request (every byte inflated spends it, a
refused member's too), or is larger than an upload may be (``OCR_MAX_UPLOAD_BYTES``). Every other check is
the upload's own (``job_create``). A refused member leaves nothing behind: its spool file is deleted.
"""

from __future__ import annotations

import hashlib
import stat
import struct
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files.uploadedfile import TemporaryUploadedFile

from jobs.errors import (
    ArchiveBomb, ArchiveEncrypted, ArchiveInvalid, ArchiveNameInvalid, ArchiveNested, ArchivePathUnsafe,
    ArchiveSymlink, ArchiveTooManyMembers, ArchiveUnsupportedCompression,
)
from ocr_engine.errors import CorruptFile, FileTooLarge, OcrError

CHUNK_BYTES = 256 * 1024
RATIO_FREE_BYTES = 1024 * 1024  # below this a member's ratio is not judged: tiny files compress well
NESTED = "It is an archive inside the archive; batches unpack one level. Send its files in the outer ZIP."
ARCHIVE_SUFFIXES = {".zip", ".tar", ".gz", ".tgz", ".bz2", ".tbz2", ".xz", ".txz", ".zst", ".7z", ".rar", ".jar"}
ARCHIVE_SIGNATURES = (b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"7z\xbc\xaf\x27\x1c",
                      b"Rar!\x1a\x07", b"\x28\xb5\x2f\xfd")
TAR_MAGIC_OFFSET = 257  # "ustar" in a tar header
ENCRYPTED_FLAG = 0x1  # general purpose bit 0 (APPNOTE 4.4.4)
# macOS's Finder adds a resource-fork copy of every file under this folder: not the user's documents.
SKIPPED_FOLDERS = ("__MACOSX/",)
UNPACKED_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)  # inflated a chunk at a time
MAX_NAME_BYTES = 255  # a file name on the file systems we store on
SHOWN_NAME_CHARS = 255  # a refused member's name as the batch lists it, cut past this
# The directory may hold more entries than members: folders, and macOS Finder's copy of each file.
ENTRIES_PER_MEMBER = 3
DIRECTORY_BYTES_PER_ENTRY = 1024  # an entry is 46 bytes, its name, extra fields and comment
# The end-of-central-directory records (APPNOTE 4.3.16, 4.3.14, 4.3.15), as zipfile finds them.
EOCD = struct.Struct("<4s4H2LH")
EOCD_SIGNATURE = b"PK\x05\x06"
EOCD_MAX_COMMENT = 0xFFFF
ZIP64_LOCATOR = struct.Struct("<4sLQL")
ZIP64_LOCATOR_SIGNATURE = b"PK\x06\x07"
ZIP64_EOCD = struct.Struct("<4sQ2H2L4Q")
ZIP64_EOCD_SIGNATURE = b"PK\x06\x06"


@dataclass
class Budget:
    """What is left of ``OCR_BATCH_MAX_UNCOMPRESSED_BYTES`` for one request: every byte inflated spends it."""

    left: int


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


def zip_open(upload, *, max_entries: int) -> zipfile.ZipFile:
    """Open the upload as a ZIP (its central directory only); raises ArchiveInvalid, or ArchiveTooManyMembers
    when the end-of-central-directory record counts more than ``max_entries`` entries (or a directory
    larger than they would need), before zipfile reads the directory."""
    entries, directory_bytes = _directory_size(upload)
    if entries > max_entries or directory_bytes > max_entries * DIRECTORY_BYTES_PER_ENTRY:
        raise ArchiveTooManyMembers(f"{clean_member_name(getattr(upload, 'name', 'The ZIP'))} lists {entries} "
                                    f"entries in {directory_bytes} bytes; a batch takes at most "
                                    f"{settings.OCR_BATCH_MAX_MEMBERS} files (OCR_BATCH_MAX_MEMBERS).")
    try:
        return zipfile.ZipFile(upload)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError):
        raise ArchiveInvalid(f"{clean_member_name(getattr(upload, 'name', 'The file'))} is not a ZIP archive "
                             "that can be read.") from None


def zip_files(archive: zipfile.ZipFile) -> list[zipfile.ZipInfo]:
    """The archive's entries that are members of a batch: not folders, not Finder's copies."""
    return [info for info in archive.infolist() if not info.is_dir() and not info.filename.startswith(SKIPPED_FOLDERS)]


def zip_members(archive: zipfile.ZipFile, budget: Budget) -> Iterator[Member]:
    """Each member in archive order, spooled or refused; the caller closes each ``upload``."""
    for info in zip_files(archive):
        member = Member(name=clean_member_name(info.orig_filename))
        try:
            _check_entry(info)
            member.upload = _spool(archive, info, budget)
        except OcrError as exc:
            member.error = exc
        yield member


def member_name_check(name: str) -> None:
    """Raise ArchiveNameInvalid for a name longer than MAX_NAME_BYTES, empty, or holding NUL or controls."""
    if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        raise ArchiveNameInvalid(f"Its name is longer than {MAX_NAME_BYTES} bytes; it was not unpacked.")
    if not name.strip() or not all(ch.isprintable() for ch in name):
        raise ArchiveNameInvalid("Its name is empty or holds characters no file name may (NUL, control "
                                 "characters); it was not unpacked.")


def clean_member_name(name: str) -> str:
    """``name`` as the batch lists it: printable (others as U+FFFD) and cut to SHOWN_NAME_CHARS."""
    shown = "".join(ch if ch.isprintable() else "\ufffd" for ch in str(name))
    return shown if len(shown) <= SHOWN_NAME_CHARS else shown[:SHOWN_NAME_CHARS - 1] + "\u2026"


def _directory_size(upload) -> tuple[int, int]:
    """The central directory's entry count and size in bytes, from the end-of-central-directory record
    (ZIP64's where there is one), found as zipfile finds it (``zipfile._EndRecData``): reads the last 64 KiB."""
    upload.seek(0, 2)
    size = upload.tell()
    record, at = None, -1
    if size >= EOCD.size:
        upload.seek(size - EOCD.size)
        tail = upload.read(EOCD.size)
        if tail.startswith(EOCD_SIGNATURE) and tail.endswith(b"\0\0"):
            record, at = tail, size - EOCD.size
        else:
            start = max(size - EOCD_MAX_COMMENT - EOCD.size, 0)
            upload.seek(start)
            tail = upload.read()
            found = tail.rfind(EOCD_SIGNATURE)
            if found >= 0 and len(tail) - found >= EOCD.size:
                record, at = tail[found:found + EOCD.size], start + found
    upload.seek(0)
    if record is None:
        raise ArchiveInvalid(f"{clean_member_name(getattr(upload, 'name', 'The file'))} is not a ZIP archive "
                             "that can be read.")
    fields = EOCD.unpack(record)
    entries, directory_bytes = fields[4], fields[5]
    if at >= ZIP64_LOCATOR.size + ZIP64_EOCD.size:
        upload.seek(at - ZIP64_LOCATOR.size)
        if ZIP64_LOCATOR.unpack(upload.read(ZIP64_LOCATOR.size))[0] == ZIP64_LOCATOR_SIGNATURE:
            upload.seek(at - ZIP64_LOCATOR.size - ZIP64_EOCD.size)
            zip64 = ZIP64_EOCD.unpack(upload.read(ZIP64_EOCD.size))
            if zip64[0] == ZIP64_EOCD_SIGNATURE:
                entries, directory_bytes = zip64[7], zip64[8]
        upload.seek(0)
    return entries, directory_bytes


def _check_entry(info: zipfile.ZipInfo) -> None:
    """What the directory entry alone tells: the name, the kind of file, encryption, a nested archive's suffix."""
    member_name_check(info.orig_filename)
    name = info.filename.replace("\\", "/")
    path = PurePosixPath(name)
    if name.startswith("/") or (len(name) > 1 and name[1] == ":") or ".." in path.parts:
        raise ArchivePathUnsafe("It names a place outside the archive; it was not unpacked.")
    if stat.S_ISLNK(info.external_attr >> 16):  # Unix mode bits in the high half (APPNOTE 4.4.15)
        raise ArchiveSymlink("It is a symbolic link, not a file; it was not followed.")
    if info.flag_bits & ENCRYPTED_FLAG:
        raise ArchiveEncrypted("It is encrypted; send it unencrypted.")
    if info.compress_type not in UNPACKED_METHODS:
        raise ArchiveUnsupportedCompression(f"It is compressed with method {info.compress_type}; batches unpack "
                                            "stored and deflated members only. Zip it again with deflate.")
    if path.suffix.lower() in ARCHIVE_SUFFIXES:
        raise ArchiveNested(NESTED)


def _spool(archive: zipfile.ZipFile, info: zipfile.ZipInfo, budget: Budget) -> TemporaryUploadedFile:
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


def _copy(archive: zipfile.ZipFile, info: zipfile.ZipInfo, out, budget: Budget) -> str:
    digest = hashlib.sha256()
    largest_ratio = max(info.compress_size, 1) * settings.OCR_BATCH_MAX_RATIO
    written = 0
    past_budget = ArchiveBomb(f"It takes the batch past {settings.OCR_BATCH_MAX_UNCOMPRESSED_BYTES} unpacked bytes "
                              "(OCR_BATCH_MAX_UNCOMPRESSED_BYTES); it was not unpacked.")
    if budget.left <= 0:
        raise past_budget
    try:
        with archive.open(info) as member:
            while chunk := member.read(CHUNK_BYTES):
                budget.left -= len(chunk)  # spent whether the member passes or not
                if written == 0:
                    _check_not_archive(chunk)
                written += len(chunk)
                if written > RATIO_FREE_BYTES and written > largest_ratio:
                    raise ArchiveBomb(f"It unpacks to more than {settings.OCR_BATCH_MAX_RATIO} times its packed "
                                      "size (OCR_BATCH_MAX_RATIO); it was not unpacked.")
                if budget.left < 0:
                    raise past_budget
                if written > settings.OCR_MAX_UPLOAD_BYTES:
                    raise FileTooLarge(f"It is larger than {settings.OCR_MAX_UPLOAD_BYTES} bytes, "
                                       "the largest file an upload may be.")
                digest.update(chunk)
                out.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError):
        # A bad CRC (its header lied about its size), a cut stream. Not the exception's text: it names the member.
        raise CorruptFile("It could not be unpacked: its data is damaged or cut short.") from None
    return digest.hexdigest()


def _check_not_archive(head: bytes) -> None:
    """An archive under another file name, by its signature."""
    if head.startswith(ARCHIVE_SIGNATURES) or head[TAR_MAGIC_OFFSET:TAR_MAGIC_OFFSET + 5] == b"ustar":
        raise ArchiveNested(NESTED)
