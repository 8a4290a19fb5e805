"""Exports of long jobs are built on a worker, not in the web process.

An export reads every page of the job (the searchable PDF also re-encodes every
page image): for a long job that is seconds of CPU and hundreds of MB in the
process that answers requests. Up to ``OCR_EXPORT_INLINE_MAX_PAGES`` pages it is
built in the request; above, ``export_file`` queues ``build_export`` on the
default cluster and waits up to ``OCR_EXPORT_WAIT_SECONDS`` for the file, which
the request then streams from storage. A worker that has not finished by then
leaves the client a 202 with ``Retry-After``; the next request finds the file (or,
while the build runs, waits for it again without queueing a second one).

The file is named by a version of the job's result (pages and every
correction and edit, undone ones included), so a reviewer's change makes the
next request build a new one. Built files are swept with the orphans
(``jobs.services.storage``): an hour after they were made, nothing keeps them. While they are
stored, an ``ExportFile`` row counts their bytes against the owner's storage quota.
"""

from __future__ import annotations

import hashlib
import time

from django.conf import settings
from django.core.cache import cache
from django.core.files.storage import default_storage
from django.db import transaction
from django_q.tasks import async_task

from jobs.models import AuditEntry, ExportFile, Job, LineCorrection, PageEdit, PageResult
from jobs.selectors import results
from jobs.services.audit import Actor, audit_record
from jobs.services.quotas import stored_bytes_change
from jobs.services.storage import EXPORTS_FOLDER, store_whole

BUILD_TASK = "jobs.tasks.build_export"
POLL_SECONDS = 0.2


def export_is_inline(job: Job) -> bool:
    return job.pages.count() <= settings.OCR_EXPORT_INLINE_MAX_PAGES


def export_name(job: Job, fmt: str, *, pdfa: str | None = None) -> str:
    """Where the ``fmt`` export (PDF/A-``pdfa`` if given) of the job's current result is (or will be) stored."""
    pages = PageResult.objects.filter(job=job)
    version = hashlib.sha256(repr((
        list(pages.order_by("pk").values_list("pk", "updated_at")),
        list(LineCorrection.objects.filter(page__job=job).order_by("pk").values_list("pk", "corrected_at")),
        list(PageEdit.objects.filter(page__job=job).order_by("pk").values_list("pk", "undone_at")),
    )).encode()).hexdigest()[:20]
    return f"{EXPORTS_FOLDER}/{job.pk}/{version}.{export_kind(fmt, pdfa)}"


def export_kind(fmt: str, pdfa: str | None = None) -> str:
    """The export's name among the job's files and in the audit log: "pdf-pdfa2b" is another file than "pdf"."""
    return f"{fmt}-pdfa{pdfa}" if pdfa else fmt


def export_file(job: Job, fmt: str, *, pdfa: str | None = None) -> str | None:
    """The storage name of the job's ``fmt`` export (PDF/A-``pdfa`` if given), built by a worker if need be;
    None if it is not built by the end of the wait (the worker goes on: ask again)."""
    name = export_name(job, fmt, pdfa=pdfa)
    return file_built_by_worker(name, BUILD_TASK, str(job.pk), fmt, name, pdfa, group=f"export-{job.pk}")


def file_built_by_worker(name: str, task: str, *args, group: str) -> str | None:
    """``name`` once it is in storage, queueing ``task(*args)`` to build it unless it is there or being
    built; None if it is not there by the end of OCR_EXPORT_WAIT_SECONDS. The task calls ``build_done(name)``."""
    if default_storage.exists(name):
        return name
    # One build per version, however often the client asks while it runs (each 202 is asked again);
    # the claim outlives a lost worker until the broker hands its task out again (Q_RETRY).
    if cache.add(_build_claim(name), True, timeout=settings.Q_RETRY):
        async_task(task, *args, cluster=settings.Q_CLUSTER["name"], group=group)
    deadline = time.monotonic() + settings.OCR_EXPORT_WAIT_SECONDS
    while time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
        if default_storage.exists(name):
            return name
    return None


def build_done(name: str) -> None:
    """Built or failed: the next request finds the file, or queues a new build."""
    cache.delete(_build_claim(name))


def export_served(*, job: Job, fmt: str, by: Actor) -> None:
    """Record that ``by`` downloaded the ``fmt`` export (or result.json) of the job."""
    audit_record(action=AuditEntry.Action.EXPORTED, job=job, by=by, detail=fmt)


def _build_claim(name: str) -> str:
    return f"export-build:{name}"


def build_export(*, job_id: str, fmt: str, name: str, pdfa: str | None = None) -> None:
    """Worker: render the ``fmt`` export (PDF/A-``pdfa`` if given) and store it under ``name``, whole or not at all."""
    try:
        _build(job_id, fmt, name, pdfa)
    finally:
        build_done(name)


def _build(job_id: str, fmt: str, name: str, pdfa: str | None) -> None:
    if default_storage.exists(name):
        return  # an earlier request's task already built it
    job = Job.objects.filter(pk=job_id).first()
    if job is None:
        return
    content, _, _ = results.job_export(job, fmt, pdfa=pdfa)
    store_whole(name, content)
    export_counted(job_id, name, len(content))


def export_counted(job_id, name: str, size: int) -> None:
    """Count a stored export (a batch's ZIP too, by its first job) against the job owner's storage quota,
    once; a file of a job deleted meanwhile goes."""
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(pk=job_id).first()  # job_delete counts under this lock too
        if job is None:
            default_storage.delete(name)
            return
        _, created = ExportFile.objects.get_or_create(name=name, defaults={"job": job, "size_bytes": size})
        if created:
            stored_bytes_change(job.owner_id, size)
