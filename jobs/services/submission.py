"""Submitting work: options and file are validated, then Document + Job + queue entry commit together.

A ``file_url`` submission commits its Document before the file is there; a worker
downloads and checks it (jobs.services.fetching).
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from jobs import progress
from jobs.models import Document, Job, UserSettings
from jobs.options import JobOptions
from jobs.queue import cluster_for, enqueue_job
from jobs.services.documents import CheckedDocument, Upload, clean_file_name, document_check, document_store
from jobs.services.job_types import document_type_named, job_type_name
from jobs.services.quotas import Quotas, Usage, queued_url_jobs_check, quota_check, stored_bytes_change
from jobs.urlguard import check_public_url, file_name


def job_create(
    *,
    owner,
    file: Upload,
    filename: str,
    options: JobOptions = JobOptions(),
) -> tuple[Job, bool]:
    """Queue an OCR job; returns ``(job, reused)``.

    Everything is checked before anything is written (raises an OcrError
    subclass). The same file with the same options from the same user within
    OCR_DEDUP_WINDOW_SECONDS returns that earlier job (``reused=True``) unless
    it failed or was canceled.
    """
    options.check()
    named = document_type_named(owner=owner, options=options)
    checked = document_check(file=file, filename=filename, pages=options.pages)

    stored = document_store(owner=owner, checked=checked)  # before the transaction: see document_store
    job = _new_job(owner, stored, options)
    job.page_numbers, job.pages_total = checked.page_numbers, len(checked.page_numbers)
    job.dedup_key = dedup_key(checked, options)
    try:
        with transaction.atomic():
            owner_lock(owner)
            duplicate = duplicate_of(owner, job.dedup_key)
            if duplicate is None:
                _save_and_queue(job)
                job_type_name(job=job, document_type=named)
    except BaseException:
        if not _job_row_exists(job):  # rolled back or never saved: the file goes too
            stored.file.delete(save=False)
        raise
    if duplicate is not None:
        stored.file.delete(save=False)
        return duplicate, True
    return job, False


def job_create_from_url(
    *,
    owner,
    file_url: str,
    options: JobOptions = JobOptions(),
) -> tuple[Job, bool]:
    """Queue a job whose file a worker downloads from ``file_url``; returns ``(job, False)``.

    Nothing is downloaded here: thirty submissions naming a slow server would
    otherwise hold thirty of the web process's threads and up to 50 MB each.
    What can be judged without the file is checked now (raises an OcrError
    subclass): the options, the URL (http(s), no credentials, public
    addresses), the page range's syntax, quotas already used up, the owner's
    queued file_url jobs (``OCR_MAX_QUEUED_URL_JOBS``). The worker
    downloads the file to disk, checks it as an upload and deduplicates it by
    its content (jobs.services.fetching); a failure there fails the job.
    """
    options.check()
    named = document_type_named(owner=owner, options=options)
    check_public_url(file_url)
    document = Document(owner=owner, source_url=file_url, original_name=clean_file_name(file_name(file_url)),
                        sha256="", media_type="", size_bytes=0, page_count=0)
    job = _new_job(owner, document, options)
    with transaction.atomic():
        owner_lock(owner)
        queued_url_jobs_check(owner=owner, quotas=Quotas.of(UserSettings.objects.filter(user=owner).first()))
        _save_and_queue(job)
        job_type_name(job=job, document_type=named)
    return job, False


def _new_job(owner, document: Document, options: JobOptions) -> Job:
    return Job(
        owner=owner,
        document=document,
        pipeline=options.pipeline,
        lang=options.lang,
        text_layer=options.text_layer,
        orientation=options.orientation,
        pages_spec=options.pages,
        cluster=cluster_for(options.pipeline),
        max_attempts=settings.OCR_JOB_MAX_ATTEMPTS,
        webhook_url=options.webhook_url,
    )


def _save_and_queue(job: Job) -> None:
    """In the owner-locked transaction: the default webhook, quotas, then the rows and the queue entry."""
    own = UserSettings.objects.filter(user=job.owner).first()
    if not job.webhook_url and own is not None:
        job.webhook_url = own.default_webhook_url
    quota_check(quotas=Quotas.of(own), usage=Usage.of(job.owner), pages=job.pages_total,
                size_bytes=job.document.size_bytes)
    job.document.save()
    stored_bytes_change(job.owner.pk, job.document.size_bytes)
    job.save()
    enqueue_job(job)  # the ORM broker's queue row commits with the job (jobs.queue)
    transaction.on_commit(lambda: progress.publish(job, "queued"))


def owner_lock(owner) -> None:
    """Lock the owner's row, inside a transaction, so that two identical submissions arriving at once
    serialise here and the second one finds the first job, and so that quotas see every earlier
    submission (a no-op on SQLite, whose BEGIN IMMEDIATE already serialises every writer)."""
    get_user_model().objects.select_for_update().filter(pk=owner.pk).first()


def _job_row_exists(job: Job) -> bool:
    """Whether the job's row is in the database. An error raised after the commit (an on_commit callback
    cancelled with its request) must not take a queued job's file; unsure means yes (the orphan sweep
    removes a file no row names)."""
    try:
        return Job.objects.filter(pk=job.pk).exists()
    except Exception:  # noqa: BLE001 - the transaction itself is broken: leave the file to the sweep
        return True


def dedup_key(checked: CheckedDocument, options: JobOptions) -> str:
    """The key under which the same file with the same options is one job (``duplicate_of``): the options
    that change what is read, the pages the range names in this file, and a document type named for it
    (the same file named another type is other work: its fields differ)."""
    work = {**options.engine_options(), "pages": checked.page_numbers}
    if options.document_type:
        work["document_type"] = options.document_type
    read = json.dumps(work, sort_keys=True)
    return hashlib.sha256(f"{checked.sha256}:{read}".encode()).hexdigest()


def duplicate_of(owner, key: str) -> Job | None:
    """The owner's newest job with the same file and options within the dedup window, unless it failed or was canceled."""
    since = timezone.now() - timedelta(seconds=settings.OCR_DEDUP_WINDOW_SECONDS)
    return (Job.objects.select_related("document")
            .filter(owner=owner, dedup_key=key, created_at__gte=since)
            .exclude(status__in=[Job.Status.FAILED, Job.Status.CANCELED])
            .order_by("-created_at").first())
