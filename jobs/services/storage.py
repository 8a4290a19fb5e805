"""Stored files (documents, page images, thumbnails, built exports): removing them, and sweeping orphans.

Page images are written before the row that names them commits (the row must
not name a file that is not there yet), so a worker killed in between leaves
files that nothing references. The sweep removes those, but only once they are
older than any page being stored right now could be.
"""

from __future__ import annotations

import logging
import os
from datetime import timedelta

from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone

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


def storage_delete(names: list[str], *, folder: str | None = None) -> None:
    """Delete ``names`` from the default storage, then ``folder`` if it is now empty."""
    for name in names:
        default_storage.delete(name)
    if folder is None:
        return
    try:  # FileSystemStorage leaves the emptied per-job folder behind
        os.rmdir(default_storage.path(folder))
    except (NotImplementedError, OSError):
        pass


def storage_delete_folder(folder: str) -> None:
    """Delete the files directly in ``folder`` and the folder (built exports: one level)."""
    if default_storage.exists(folder):
        storage_delete([f"{folder}/{name}" for name in default_storage.listdir(folder)[1]], folder=folder)


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


def _files(*folders: str):
    pending = [folder for folder in folders if default_storage.exists(folder)]
    while pending:
        folder = pending.pop()
        subfolders, files = default_storage.listdir(folder)
        pending.extend(f"{folder}/{sub}" for sub in subfolders)
        yield from (f"{folder}/{name}" for name in files)
