"""Batches: a ZIP (or several files) in, one job per member, one status, progress and webhook out.

Each member goes through ``job_create`` exactly as an upload does (its checks, quotas, dedup, and its
own short transaction); what it or the archive check (``jobs.services.archives``) refuses becomes one of
the batch's ``errors`` with that error's code, and the other members go on. The options are checked
once, before anything, since they would fail every member alike.

No transaction is held while members are unpacked: on SQLite a transaction is the site's one write
lock. The batch row is written last, with its members, in one short transaction, so no worker can end
the batch while later members are still being unpacked: a job that ends before that finds no batch to
settle, and the batch settles itself as it is written (``batch_settle``); one ending meanwhile waits for
the lock on its job row (taken here), then finds the batch. A request that dies midway leaves the jobs
it made, as uploads of their own. How a batch ends is ``jobs.services.batch_states``.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from jobs import progress
from jobs.errors import ArchiveInvalid, ArchiveTooManyMembers, JobStateError
from jobs.models import AuditEntry, Batch, BatchJob, Job, UserSettings
from jobs.options import JobOptions
from jobs.services.archives import (
    ENTRIES_PER_MEMBER, Budget, clean_member_name, is_zip, member_name_check, zip_files, zip_members, zip_open,
)
from jobs.services.audit import Actor, audit_record
from jobs.services.batch_states import batch_settle
from jobs.services.documents import clean_file_name
from jobs.services.job_types import document_type_named
from jobs.services.lifecycle import job_cancel
from jobs.services.submission import job_create
from ocr_engine.errors import OcrError


def batch_create(
    *,
    owner,
    files: list,
    by: Actor,
    options: JobOptions = JobOptions(),
    admit: Callable[[int], None] = lambda members: None,
) -> Batch:
    """Make a batch of ``files`` (uploads: ZIPs are unpacked, other files are members themselves).

    Raises an OcrError, storing nothing, for options no member could run with, a ZIP that is not one
    (``invalid_archive``), more members than OCR_BATCH_MAX_MEMBERS, or no member at all. ``admit(members)``
    is called once the members are counted, before any is unpacked: the API and the upload form spend
    their submit budget there, one unit per member, and raise to refuse the batch.
    """
    options.check()
    document_type_named(owner=owner, options=options)  # an unknown type refuses the batch, not each member
    most = settings.OCR_BATCH_MAX_MEMBERS
    sources = [(upload, zip_open(upload, max_entries=most * ENTRIES_PER_MEMBER) if is_zip(upload) else None)
               for upload in files]
    count = sum(len(zip_files(archive)) if archive else 1 for _, archive in sources)
    if count > most:
        raise ArchiveTooManyMembers(f"These are {count} files; a batch takes at most {most} (OCR_BATCH_MAX_MEMBERS).")
    if count == 0:
        raise ArchiveInvalid("There is no file in this upload to read.")
    admit(count)
    received = _Received(options.with_(webhook_url=options.webhook_url or _default_webhook_url(owner)), owner=owner)
    budget = Budget(settings.OCR_BATCH_MAX_UNCOMPRESSED_BYTES)
    for upload, archive in sources:
        if archive is None:
            received.add(clean_member_name(upload.name), upload)
            continue
        for member in zip_members(archive, budget):
            if member.error is not None:
                received.refuse(member.name, member.error)
                continue
            with member.upload:  # closed (its spool file deleted) once stored or refused
                received.add(member.name, member.upload)
    with transaction.atomic():
        # The webhook URL has a column of its own, which the batch's answer does not show.
        shown = {name: value for name, value in received.options.as_dict().items() if name != "webhook_url"}
        batch = Batch.objects.create(owner=owner, name=clean_file_name(files[0].name), options=shown,
                                     webhook_url=received.options.webhook_url, errors=received.errors)
        # A job ending now waits for this lock, then finds the batch; one that ended is final below.
        Job.objects.select_for_update().filter(pk__in=[job.pk for _, job in received.jobs]).order_by("pk").exists()
        for name, job in received.jobs:
            BatchJob.objects.get_or_create(batch=batch, job=job, defaults={"member": name})  # equal members: one job
        # The audit log names what it is about by id and owner: the batch's, under BATCH_CREATED.
        audit_record(action=AuditEntry.Action.BATCH_CREATED, job=batch, by=by,
                     detail=f"{batch.members.count()} jobs, {len(batch.errors)} members refused")
        batch_settle(batch)  # its jobs may have ended already, or every member was refused
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


class _Received:
    """The members of a batch being received: the jobs made (each committed on its own) and those refused."""

    def __init__(self, options: JobOptions, *, owner):
        self.options, self.owner = options, owner
        self.jobs: list[tuple[str, Job]] = []
        self.errors: list[dict] = []

    def add(self, name: str, upload) -> None:
        try:
            member_name_check(upload.name)
            job, _ = job_create(owner=self.owner, file=upload, filename=name, options=self.options)
        except OcrError as exc:
            self.refuse(name, exc)
            return
        self.jobs.append((name, job))

    def refuse(self, name: str, error: OcrError) -> None:
        """The member's name once, in ``member``; the detail says why without repeating it."""
        self.errors.append({"member": name, "code": error.code, "detail": error.message})


def _default_webhook_url(owner) -> str:
    own = UserSettings.objects.filter(user=owner).first()
    return own.default_webhook_url if own is not None else ""
