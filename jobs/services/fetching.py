"""A ``file_url`` job's file: downloaded by the worker that holds the job, never by the web process.

The web request checked the URL and queued the job with a Document that has no
file yet (jobs.services.submission). The worker holding the job's lease
downloads it with the SSRF-guarded fetcher (jobs.urlguard) into a temporary
file where uploads spool (FILE_UPLOAD_TEMP_DIR, on the media volume: storing
it is a rename), a chunk at a time, checks it exactly as an upload is checked,
and only then gives the job its pages. The same content with the same options
as a live job of the owner's within the dedup window (the upload path's key)
takes that job's stored document rather than storing the file again.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core.files.uploadedfile import TemporaryUploadedFile
from django.db import transaction
from django.utils import timezone

from jobs.models import Document, Job, UserSettings
from jobs.services.documents import document_check, document_store
from jobs.services.quotas import Quotas, Usage, quota_check, stored_bytes_change
from jobs.services.submission import dedup_key, duplicate_of, owner_lock
from jobs.urlguard import fetch_url


def document_pending(document: Document) -> bool:
    """Whether ``document`` is a ``file_url`` submission's that is not downloaded yet."""
    return not document.file


def job_document_fetch(*, job: Job, worker_id: str) -> Job | None:
    """Download, check and store the file of ``job`` (held by ``worker_id``); returns the job with its pages,
    or None when the job is no longer this worker's.

    Raises an OcrError subclass for the caller to fail the job with: url_fetch_failed (in coarse words,
    no address), url_not_allowed (the name now resolves to a private address), file_too_large, any of an
    upload's checks, quota_exceeded.
    """
    document = job.document
    with TemporaryUploadedFile("download", "application/octet-stream", 0, None) as spool:
        name = fetch_url(document.source_url, spool, max_bytes=settings.OCR_MAX_UPLOAD_BYTES,
                         timeout=settings.OCR_URL_FETCH_TIMEOUT)
        spool.flush()
        checked = document_check(file=spool, filename=name, pages=job.pages_spec or None)
        document_store(owner=job.owner, checked=checked, document=document)  # fills the Document, not yet saved
    key = dedup_key(checked, job.options)
    kept = False
    try:
        with transaction.atomic():
            owner_lock(job.owner)  # as a submission does: dedup and quotas see every other one
            # The job while this worker holds it, as every worker write checks (jobs.services.processing).
            held = (Job.objects.select_for_update()
                    .filter(pk=job.pk, status=Job.Status.RUNNING, worker_id=worker_id).first())
            if held is None:
                return None
            duplicate = duplicate_of(job.owner, key)
            if duplicate is None:
                own = UserSettings.objects.filter(user=job.owner).first()
                quota_check(quotas=Quotas.of(own), usage=Usage.of(job.owner), pages=len(checked.page_numbers),
                            size_bytes=checked.size_bytes)
                document.save()
                stored_bytes_change(job.owner.pk, document.size_bytes)
                held.document = document
            else:
                held.document = duplicate.document
            held.page_numbers, held.pages_total, held.dedup_key = checked.page_numbers, len(checked.page_numbers), key
            # The claim gave the job its base time, when its pages were not known; they add theirs now.
            held.deadline_at += timedelta(seconds=settings.OCR_JOB_TIMEOUT_PER_PAGE_SECONDS * held.pages_total)
            held.heartbeat_at = timezone.now()
            held.save(update_fields=["document", "page_numbers", "pages_total", "dedup_key", "deadline_at",
                                     "heartbeat_at"])
            if duplicate is not None:
                document.delete()  # the submission's placeholder: no job names it any more
        kept = duplicate is None
    finally:
        if not kept:
            document.file.delete(save=False)
    return held
