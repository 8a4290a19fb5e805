"""Documents: check an upload before anything is stored, then store it.

The web process checks what it can afford per request: type by signature,
size, page count and pixels from the headers, the page range. Decoding every
image page (a truncated file) is the worker's first step (``job_run``), which
fails the job with the same error codes.
"""

from __future__ import annotations

import errno
import mimetypes
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Union

from django.conf import settings
from django.core.files import File
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import TemporaryUploadedFile

from jobs.errors import StorageFull
from jobs.models import Document
from ocr_engine.inputs import Limits, open_document

# What callers may hand in: bytes, a path, or a file object (Django's
# UploadedFile: large uploads are already on disk and are read from there).
Upload = Union[bytes, str, os.PathLike, IO[bytes]]


@dataclass(frozen=True)
class CheckedDocument:
    """An upload that passed every input check; nothing of it is stored yet."""

    source: bytes | Path
    filename: str
    media_type: str
    size_bytes: int
    sha256: str
    page_count: int
    page_numbers: list[int]  # the pages the spec selects (all when no spec)
    spooled: TemporaryUploadedFile | None = None  # an upload's own temporary file: moved into storage, not copied


def upload_limits() -> Limits:
    return Limits(
        max_file_bytes=settings.OCR_MAX_UPLOAD_BYTES,
        max_pages=settings.OCR_MAX_PAGES,
        max_pixels=settings.OCR_MAX_PIXELS,
    )


def document_check(*, file: Upload, filename: str, pages: str | None = None) -> CheckedDocument:
    """Check type, size, limits and the page range from headers; raises an OcrError subclass. Writes nothing."""
    source = _source(file)
    with open_document(source, limits=upload_limits(), filename=filename, decode=False) as doc:
        return CheckedDocument(
            source=source,
            filename=clean_file_name(filename),
            media_type=doc.media_type,
            size_bytes=doc.size_bytes,
            sha256=getattr(file, "sha256", None) or doc.sha256,  # an upload was hashed as it came in (jobs.uploads)
            page_count=doc.page_count,
            page_numbers=doc.select_pages(pages or None),
            spooled=file if isinstance(file, TemporaryUploadedFile) else None,
        )


def document_store(*, owner, checked: CheckedDocument, document: Document | None = None) -> Document:
    """Store a checked upload's file under a random name; returns its Document, not yet saved.

    ``document``: the row to fill (a ``file_url`` job's, made before its file
    was downloaded); a new one by default. The caller saves the row in its
    transaction, and deletes the file if that fails. Storing the file outside
    the transaction keeps a large upload from holding the database's write
    lock (SQLite has one for the whole file)."""
    document = document or Document(owner=owner)
    document.original_name = checked.filename
    document.sha256 = checked.sha256
    document.media_type = checked.media_type
    document.size_bytes = checked.size_bytes
    document.page_count = checked.page_count
    name = uuid.uuid4().hex + (mimetypes.guess_extension(checked.media_type) or "")
    try:
        if checked.spooled is not None:
            document.file.save(name, checked.spooled, save=False)  # a rename where it spooled on the media volume
        elif isinstance(checked.source, bytes):
            document.file.save(name, ContentFile(checked.source), save=False)
        else:
            with open(checked.source, "rb") as fh:
                document.file.save(name, File(fh), save=False)
    except OSError as exc:
        # A partial file must not stay behind; the storage never told us its name.
        partial = document.file.field.generate_filename(document, name)
        if default_storage.exists(partial):
            default_storage.delete(partial)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StorageFull("The server has no room to store this file now; try again later.") from None
        raise
    return document


def _source(file: Upload) -> bytes | Path:
    if isinstance(file, (bytes, bytearray, memoryview)):
        return bytes(file)
    if isinstance(file, (str, os.PathLike)):
        return Path(file)
    if hasattr(file, "temporary_file_path"):
        return Path(file.temporary_file_path())
    file.seek(0)
    return file.read()


def clean_file_name(filename: str) -> str:
    """``filename`` as a Document's name: printable, without folders, at most 255 characters."""
    # Control characters (CR/LF, NUL) would break response headers and
    # PostgreSQL text; names come from uploads and from remote servers.
    printable = "".join(ch for ch in (filename or "") if ch.isprintable())
    name = os.path.basename(printable.replace("\\", "/")).strip()
    return (name or "document")[:255]
