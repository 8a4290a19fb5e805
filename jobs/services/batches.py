"""Batches: a ZIP (or several files) in, one job per member, one status, progress and webhook out.

Each member goes through ``job_create`` exactly as an upload does (its checks, quotas, dedup); what it
or the archive check (``jobs.services.archives``) refuses becomes one of the batch's ``errors`` with
that error's code, and the other members go on. The options are checked once, before anything, since
they would fail every member alike.

The whole batch commits in one transaction: no worker sees a member's job before the batch knows
all of them, so a fast first job cannot end the batch while later members are still being unpacked.
How a batch ends is ``jobs.services.batch_states``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from jobs import progress
from jobs.errors import ArchiveInvalid, ArchiveTooManyMembers, JobStateError
from jobs.models import AuditEntry, Batch, BatchJob, Job, UserSettings
from jobs.services.archives import is_zip, zip_files, zip_members, zip_open
from jobs.services.audit import Actor, audit_record
from jobs.services.batch_states import batch_settle
from jobs.services.documents import clean_file_name
from jobs.services.lifecycle import job_cancel
from jobs.services.submission import job_create, job_options_check
from ocr_engine.config import DEFAULT_LANG, DEFAULT_PIPELINE
from ocr_engine.errors import OcrError


def batch_create(
    *,
    owner,
    files: list,
    by: Actor,
    pipeline: str = DEFAULT_PIPELINE,
    lang: str = DEFAULT_LANG,
    text_layer: str = "auto",
    orientation: str = "auto",
    pages: str | None = None,
    webhook_url: str = "",
) -> Batch:
    """Make a batch of ``files`` (uploads: ZIPs are unpacked, other files are members themselves).

    Raises an OcrError, storing nothing, for options no member could run with, a ZIP that is not one
    (``invalid_archive``), more members than OCR_BATCH_MAX_MEMBERS, or no member at all.
    """
    job_options_check(pipeline=pipeline, lang=lang, text_layer=text_layer, orientation=orientation, pages=pages,
                      webhook_url=webhook_url)
    sources = [(upload, zip_open(upload) if is_zip(upload) else None) for upload in files]
    count = sum(len(zip_files(archive)) if archive else 1 for _, archive in sources)
    if count > settings.OCR_BATCH_MAX_MEMBERS:
        raise ArchiveTooManyMembers(f"These are {count} files; a batch takes at most "
                                    f"{settings.OCR_BATCH_MAX_MEMBERS} (OCR_BATCH_MAX_MEMBERS).")
    if count == 0:
        raise ArchiveInvalid("There is no file in this upload to read.")
    options = {"pipeline": pipeline, "lang": lang, "text_layer": text_layer, "orientation": orientation,
               "pages": pages or ""}
    with transaction.atomic():
        batch = Batch.objects.create(owner=owner, name=clean_file_name(files[0].name), options=options,
                                     webhook_url=webhook_url or _default_webhook_url(owner))
        for upload, archive in sources:
            if archive is None:
                _add_member(batch, upload.name, upload, options)
                continue
            for member in zip_members(archive):
                if member.error is not None:
                    _refuse(batch, member.name, member.error)
                    continue
                with member.upload:  # closed (its spool file deleted) once stored or refused
                    _add_member(batch, member.name, member.upload, options)
        batch.save(update_fields=["errors"])
        # The audit log names what it is about by id and owner: the batch's, under BATCH_CREATED.
        audit_record(action=AuditEntry.Action.BATCH_CREATED, job=batch, by=by,
                     detail=f"{batch.members.count()} jobs, {len(batch.errors)} members refused")
        batch_settle(batch)  # reused jobs may have ended already, or every member was refused
    return batch


def batch_cancel(*, batch: Batch, by: Actor) -> Batch:
    """Cancel the batch's active jobs (each as ``job_cancel`` does) and the batch; no batch webhook follows."""
    with transaction.atomic():
        if Batch.objects.filter(pk=batch.pk).exclude(status__in=Batch.FINAL_STATUSES).update(
                status=Batch.Status.CANCELED, finished_at=timezone.now()) == 0:
            batch.refresh_from_db()
            raise JobStateError(f"Only an active batch can be canceled; this batch is {batch.status}.")
    for job in batch.jobs.filter(status__in=Job.ACTIVE_STATUSES):
        try:
            job_cancel(job=job, by=by)
        except OcrError:
            pass  # it ended meanwhile
    batch.refresh_from_db()
    progress.publish_batch(batch)
    return batch


def _add_member(batch: Batch, name: str, upload, options: dict) -> None:
    try:
        job, reused = job_create(owner=batch.owner, file=upload, filename=name, webhook_url=batch.webhook_url,
                                 **options)
    except OcrError as exc:
        _refuse(batch, name, exc)
        return
    if reused:
        # An earlier job may be ending right now, in a transaction that cannot see this batch yet: locked
        # until this one commits, it ends after that (and settles this batch), or has ended before the lock.
        Job.objects.select_for_update().filter(pk=job.pk).first()
    BatchJob.objects.get_or_create(batch=batch, job=job, defaults={"member": name})  # two equal members: one job


def _refuse(batch: Batch, name: str, error: OcrError) -> None:
    batch.errors.append({"member": name, "code": error.code, "detail": error.message})


def _default_webhook_url(owner) -> str:
    own = UserSettings.objects.filter(user=owner).first()
    return own.default_webhook_url if own is not None else ""
