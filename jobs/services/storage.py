"""Stored files (documents, page images, thumbnails, built exports): reading, writing, removing, sweeping.

Files live in Django's ``default`` storage: files under MEDIA_ROOT, or objects in an S3-compatible
store (``STORAGE_URL``, ocrsite.object_store) that web and worker machines share with no common disk.
This module is the one place that opens stored data other than through a model's FileField: a
worker's local copy of an original, a whole-or-nothing write, a download's stream or presigned URL.

Page images are written before the row that names them commits (the row must
not name a file that is not there yet), so a worker killed in between leaves
files that nothing references. The sweep removes those, but only once they are
older than any page being stored right now could be.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import PurePosixPath

from boto3.exceptions import Boto3Error
from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone
from django.utils.http import content_disposition_header
from s3transfer.exceptions import RetriesExceededError

from jobs.errors import StoreUnavailable
from jobs.models import Document, ExportFile, PageResult
from jobs.services.quotas import stored_bytes_change

logger = logging.getLogger(__name__)

# Built exports (jobs.services.exports) are kept by no row (their ExportFile rows only count
# their bytes, and go with them): the sweep expires them an hour after they were made, stale
# versions included. So are uploads left spooling in ".uploading" (FILE_UPLOAD_TEMP_DIR) by a
# web process killed mid-upload.
EXPORTS_FOLDER = "exports"
SWEPT_FOLDERS = ("pages", "documents", EXPORTS_FOLDER, ".uploading")
GRACE = timedelta(hours=1)
# A worker retries a store that is down for OCR_STORE_RETRY_SECONDS, the back-off doubling from
# STORE_RETRY_DELAY_SECONDS up to STORE_RETRY_MAX_DELAY_SECONDS.
STORE_RETRY_DELAY_SECONDS = 0.5
STORE_RETRY_MAX_DELAY_SECONDS = 8
COPY_CHUNK_BYTES = 1024 * 1024


def storage_is_local() -> bool:
    """Whether stored files are files on this machine (the file system storage)."""
    try:
        default_storage.path("")
    except NotImplementedError:
        return False
    return True


@contextmanager
def stored_local_path(name: str) -> Iterator[str]:
    """A path on this machine to the stored file ``name``, for readers that need one (pdfium).

    The stored file itself on the file system; from an object store, a temporary copy streamed
    a chunk at a time (never whole in memory), removed when the block ends.
    """
    if storage_is_local():
        yield default_storage.path(name)
        return
    with tempfile.NamedTemporaryFile(suffix=PurePosixPath(name).suffix, prefix="stored-") as local:
        with default_storage.open(name, "rb") as stored:
            obj = getattr(stored, "obj", None)  # django-storages' S3File: boto3 streams the object to the file
            if obj is not None:
                obj.download_fileobj(local)
            else:
                shutil.copyfileobj(stored, local, COPY_CHUNK_BYTES)
        local.flush()
        yield local.name


def store_whole(name: str, content: bytes) -> None:
    """Store ``content`` under ``name`` so that a reader never finds it half written."""
    if not storage_is_local():  # an object store writes an object whole or not at all
        default_storage.save(name, ContentFile(content))
        return
    partial = default_storage.save(f"{name}.{os.getpid()}.part", ContentFile(content))
    # The waiting request must never stream a file that is still being written.
    os.replace(default_storage.path(partial), default_storage.path(name))


def stored_chunks(name: str) -> tuple[Iterator[bytes], int]:
    """The stored file ``name`` as chunks read as they are sent, and its size in bytes."""
    handle = default_storage.open(name, "rb")
    obj = getattr(handle, "obj", None)
    if obj is None:  # the file system: read from the file
        return _chunks(handle), default_storage.size(name)
    handle.close()
    response = obj.get()  # S3: the response body itself, not a whole local copy first
    return _chunks(response["Body"]), response["ContentLength"]


def stored_head(name: str, size: int) -> bytes:
    """The first ``size`` bytes of the stored file ``name``."""
    with default_storage.open(name, "rb") as handle:
        obj = getattr(handle, "obj", None)
        if obj is None:
            return handle.read(size)
        return obj.get(Range=f"bytes=0-{size - 1}")["Body"].read()  # S3: not the whole object


def _chunks(handle) -> Iterator[bytes]:
    try:
        while chunk := handle.read(COPY_CHUNK_BYTES):
            yield chunk
    finally:
        handle.close()


def stored_url(name: str, *, filename: str, content_type: str) -> str | None:
    """A presigned URL that downloads ``name`` (as ``filename``) for OCR_DOWNLOAD_URL_SECONDS, or None
    where the store gives none (the file system) or OCR_DOWNLOAD_REDIRECT is off."""
    if not settings.OCR_DOWNLOAD_REDIRECT or storage_is_local():
        return None
    return default_storage.url(name, expire=settings.OCR_DOWNLOAD_URL_SECONDS, parameters={
        "ResponseContentDisposition": content_disposition_header(True, filename),
        "ResponseContentType": content_type,
    })


def store_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` says that the store is down or failing (worth waiting for), not that a request was
    wrong: no connection or a time-out (botocore's client retried each request already), a transfer
    that ran out of retries, a 5xx answer, a socket error mid-transfer. Never on the file system: a local
    disk has no outage to wait out, and a missing or unreadable file is not one."""
    if isinstance(exc, ClientError):
        return exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) >= 500
    if isinstance(exc, OSError):
        return not storage_is_local()
    return isinstance(exc, (BotoCoreError, Boto3Error, RetriesExceededError))


def store_retrying(call, *args, **kwargs):
    """``call(*args, **kwargs)``, retried while the store is down; StoreUnavailable after OCR_STORE_RETRY_SECONDS.

    Every call here must be safe to repeat (a page's store is: its transaction rolled back)."""
    deadline = time.monotonic() + settings.OCR_STORE_RETRY_SECONDS
    delay = STORE_RETRY_DELAY_SECONDS
    while True:
        try:
            return call(*args, **kwargs)
        except Exception as exc:
            if not store_unavailable(exc):
                raise
            if time.monotonic() + delay > deadline:
                raise StoreUnavailable(f"The file store did not answer for {settings.OCR_STORE_RETRY_SECONDS} s ({exc}); "
                                       "nothing is lost: retry the job once the store is back.") from exc
            logger.warning("The file store failed in %s, retrying in %.1f s: %s", call.__name__, delay, exc)
            time.sleep(delay)
            delay = min(delay * 2, STORE_RETRY_MAX_DELAY_SECONDS)


def storage_delete(names: list[str], *, folder: str | None = None) -> None:
    """Delete ``names`` from the default storage, then ``folder`` if it is now empty."""
    for name in names:
        default_storage.delete(name)
    if folder is None:
        return
    if storage_is_local():  # FileSystemStorage leaves the emptied per-job folder behind (a store has none)
        try:
            os.rmdir(default_storage.path(folder))
        except OSError:
            pass


def storage_delete_folder(folder: str) -> None:
    """Delete the files directly in ``folder`` and the folder (built exports: one level)."""
    storage_delete([f"{folder}/{name}" for name in _listdir(folder)[1]], folder=folder)


def orphan_files_sweep(*, grace: timedelta = GRACE) -> list[str]:
    """Delete files under the stored folders that no Document or PageResult names; return their names."""
    referenced = set(Document.objects.values_list("file", flat=True))
    for image, thumbnail in PageResult.objects.values_list("image", "thumbnail"):
        referenced.update((image, thumbnail))
    cutoff = timezone.now() - grace
    removed = [name for name in _files(*SWEPT_FOLDERS)
               if name not in referenced and default_storage.get_modified_time(name) < cutoff]
    _exports_uncount([name for name in removed if name.startswith(f"{EXPORTS_FOLDER}/")])
    for name in removed:
        default_storage.delete(name)
    if removed:
        logger.info("removed %d orphan file(s)", len(removed))
    return removed


def _exports_uncount(names: list[str]) -> None:
    """Built exports about to be deleted no longer count against their owners' storage quotas.

    Before the files go: a sweep killed in between leaves files no row counts, which the next one deletes.
    """
    with transaction.atomic():
        for export in ExportFile.objects.filter(name__in=names).select_related("job").select_for_update():
            stored_bytes_change(export.job.owner_id, -export.size_bytes)
            export.delete()


def _listdir(folder: str) -> tuple[list[str], list[str]]:
    """(subfolders, files) of ``folder``; none where it is missing (an object store has no folders
    to look for, only names under a prefix)."""
    try:
        return default_storage.listdir(folder)
    except FileNotFoundError:
        return [], []


def _files(*folders: str):
    pending = list(folders)
    while pending:
        folder = pending.pop()
        subfolders, files = _listdir(folder)
        pending.extend(f"{folder}/{sub}" for sub in subfolders)
        yield from (f"{folder}/{name}" for name in files)
