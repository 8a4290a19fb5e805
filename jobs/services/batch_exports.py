"""A batch's exports as one ZIP: the chosen formats of each job that succeeded, one folder-less file each
(``fields.json`` and ``fields.csv``, jobs.services.fields_exports, also as one ``batch.fields.*`` of all).

Each file is the job's own export (``jobs.selectors.results.job_export``, corrections applied), named as
its download is (the document's stem and the format's extension; a second file of the same name gets
`` (2)``). Up to ``OCR_EXPORT_INLINE_MAX_PAGES`` pages in all it is built in the request; above, by a
worker (``build_batch_export``) exactly as a long job's export is (``jobs.services.exports``): named by
a version of every job's result, swept an hour after it was made, a 202 while it is being built, and
counted in the owner's storage quota meanwhile (an ``ExportFile`` of the batch's first exported job, so
deleting that job uncounts it too). The formats are sorted, so ``txt,md`` and ``md,txt`` are one file.
"""

from __future__ import annotations

import hashlib
import io
import zipfile

from django.conf import settings
from django.core.files.storage import default_storage
from django.db.models import Sum

from jobs.models import AuditEntry, Batch, Job
from jobs.selectors import results
from jobs.selectors.batches import batch_jobs
from jobs.services.audit import Actor, audit_record
from jobs.services.exports import build_done, export_counted, export_name, file_built_by_worker
from jobs.services.fields_exports import (
    FIELDS_FORMATS,
    fields_file_name,
    fields_version,
    job_fields_file,
    jobs_fields_file,
)
from jobs.services.storage import EXPORTS_FOLDER, store_whole
from ocr_engine import exports
from ocr_engine.errors import UnsupportedOption

BUILD_TASK = "jobs.tasks.build_batch_export"


def batch_export_formats(spec: str) -> list[str]:
    """``"txt,pdf"`` as a sorted list of formats; raises UnsupportedOption for an unknown or missing one."""
    formats = sorted({part.strip() for part in (spec or "").split(",") if part.strip()})
    known = [*exports.FORMATS, *FIELDS_FORMATS]
    unknown = [fmt for fmt in formats if fmt not in known]
    if not formats or unknown:
        raise UnsupportedOption(f"format must list one or more of {', '.join(known)}, comma-separated"
                                + (f"; {', '.join(unknown)} is not one." if unknown else "."))
    return formats


def batch_export_is_inline(batch: Batch) -> bool:
    pages = _exported_jobs(batch).aggregate(pages=Sum("pages_done"))["pages"] or 0
    return pages <= settings.OCR_EXPORT_INLINE_MAX_PAGES


def batch_export_zip(batch: Batch, formats: list[str]) -> bytes:
    buffer = io.BytesIO()
    taken: set[str] = set()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for job in _exported_jobs(batch):
            for fmt in formats:
                if fmt in FIELDS_FORMATS:
                    content, filename = job_fields_file(job, fmt), fields_file_name(job, fmt)
                else:
                    content, _, filename = results.job_export(job, fmt)
                archive.writestr(_unique(filename, taken), content)
        for fmt in formats:
            if fmt in FIELDS_FORMATS:  # and the whole batch's fields in one file, a row per value
                archive.writestr(_unique(f"batch.{fmt}", taken), jobs_fields_file(_exported_jobs(batch), fmt))
    return buffer.getvalue()


def batch_export_file(batch: Batch, formats: list[str]) -> str | None:
    """The storage name of the batch's ZIP, built by a worker if need be; None while it is being built."""
    name = _export_name(batch, formats)
    return file_built_by_worker(name, BUILD_TASK, str(batch.pk), formats, name, group=f"export-batch-{batch.pk}")


def batch_export_served(*, batch: Batch, formats: list[str], by: Actor) -> None:
    """One audit entry per download, under the batch's id (as BATCH_CREATED): the formats and how many jobs."""
    audit_record(action=AuditEntry.Action.EXPORTED, job=batch, by=by,
                 detail=f"batch {','.join(formats)}, {_exported_jobs(batch).count()} jobs")


def build_batch_export(*, batch_id: str, formats: list[str], name: str) -> None:
    """Worker: build the batch's ZIP and store it under ``name``, whole or not at all."""
    try:
        batch = Batch.objects.filter(pk=batch_id).first()
        if batch is not None and not default_storage.exists(name):
            content = batch_export_zip(batch, formats)
            store_whole(name, content)
            first = _exported_jobs(batch).first()
            if first is not None:
                export_counted(first.pk, name, len(content))
    finally:
        build_done(name)


def _exported_jobs(batch: Batch):
    return batch_jobs(batch).filter(status=Job.Status.SUCCEEDED)


def _export_name(batch: Batch, formats: list[str]) -> str:
    versions = [export_name(job, fmt) for job in _exported_jobs(batch) for fmt in formats]
    if any(fmt in FIELDS_FORMATS for fmt in formats):  # fields change without a page changing
        versions.append(fields_version(_exported_jobs(batch)))
    version = hashlib.sha256(repr(versions).encode()).hexdigest()[:20]
    return f"{EXPORTS_FOLDER}/batch-{batch.pk}/{version}.zip"


def _unique(filename: str, taken: set[str]) -> str:
    stem, dot, extension = filename.partition(".")
    candidate, number = filename, 1
    while candidate in taken:
        number += 1
        candidate = f"{stem} ({number}){dot}{extension}"
    taken.add(candidate)
    return candidate
