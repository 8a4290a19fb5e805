"""Submitting work: options and file are validated, then Document + Job + queue entry commit together."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from jobs import progress
from jobs.engines.config import engine_config
from jobs.models import Job, UserSettings
from jobs.queue import cluster_for, enqueue_job
from jobs.services.documents import CheckedDocument, Upload, document_check, document_store
from jobs.services.quotas import Quotas, Usage, quota_check, stored_bytes_change
from jobs.urlguard import check_public_url, fetch_url
from ocr_engine import pipelines
from ocr_engine.config import DEFAULT_LANG, DEFAULT_PIPELINE
from ocr_engine.errors import GpuRequired


def job_options_check(*, pipeline: str, lang: str, text_layer: str = "auto", orientation: str = "auto") -> None:
    """Raise UnsupportedOption / GpuRequired for options this server cannot run."""
    # The registry knows the pipelines, EngineConfig checks every other option.
    engine_config(pipeline, lang).with_(text_layer=text_layer, orientation=orientation)
    if pipelines.get(pipeline).needs_gpu and not settings.OCR_GPU_CLUSTER:
        raise GpuRequired(
            f"The {pipeline} pipeline needs a GPU worker cluster, and this server has none (OCR_GPU_CLUSTER).")


def job_create(
    *,
    owner,
    file: Upload,
    filename: str,
    pipeline: str = DEFAULT_PIPELINE,
    lang: str = DEFAULT_LANG,
    text_layer: str = "auto",
    orientation: str = "auto",
    pages: str | None = None,
    webhook_url: str = "",
) -> tuple[Job, bool]:
    """Queue an OCR job; returns ``(job, reused)``.

    Everything is checked before anything is written (raises an OcrError
    subclass). The same file with the same options from the same user within
    OCR_DEDUP_WINDOW_SECONDS returns that earlier job (``reused=True``) unless
    it failed or was canceled.
    """
    job_options_check(pipeline=pipeline, lang=lang, text_layer=text_layer, orientation=orientation)
    if webhook_url:
        check_public_url(webhook_url)
    checked = document_check(file=file, filename=filename, pages=pages)
    dedup_key = _dedup_key(checked, pipeline=pipeline, lang=lang, text_layer=text_layer, orientation=orientation)

    stored = document_store(owner=owner, checked=checked)  # before the transaction: see document_store
    job = Job(
        owner=owner,
        document=stored,
        pipeline=pipeline,
        lang=lang,
        text_layer=text_layer,
        orientation=orientation,
        pages_spec=(pages or "").strip(),
        page_numbers=checked.page_numbers,
        pages_total=len(checked.page_numbers),
        cluster=cluster_for(pipeline),
        dedup_key=dedup_key,
        max_attempts=settings.OCR_JOB_MAX_ATTEMPTS,
        webhook_url=webhook_url,
    )
    try:
        with transaction.atomic():
            # Lock the owner's row so that two identical submissions arriving at once serialise here
            # and the second one finds the first job, and so that quotas see every earlier submission
            # (a no-op on SQLite, whose BEGIN IMMEDIATE already serialises every writer).
            get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
            duplicate = _duplicate_of(owner, dedup_key)
            if duplicate is None:
                own = UserSettings.objects.filter(user=owner).first()
                if not webhook_url and own is not None:
                    job.webhook_url = own.default_webhook_url
                quota_check(quotas=Quotas.of(own), usage=Usage.of(owner), pages=job.pages_total,
                            size_bytes=checked.size_bytes)
                stored.save()
                stored_bytes_change(owner.pk, stored.size_bytes)
                job.save()
                enqueue_job(job)  # the ORM broker's queue row commits with the job (jobs.queue)
                transaction.on_commit(lambda: progress.publish(job, "queued"))
    except BaseException:
        stored.file.delete(save=False)  # the row rolled back, or was never saved: the file goes too
        raise
    if duplicate is not None:
        stored.file.delete(save=False)
        return duplicate, True
    return job, False


def job_create_from_url(*, owner, file_url: str, **options) -> tuple[Job, bool]:
    """Like ``job_create`` for a file the server downloads (SSRF-guarded, size- and time-limited)."""
    content, filename = fetch_url(
        file_url, max_bytes=settings.OCR_MAX_UPLOAD_BYTES, timeout=settings.OCR_URL_FETCH_TIMEOUT
    )
    return job_create(owner=owner, file=content, filename=filename, **options)


def _dedup_key(checked: CheckedDocument, **options) -> str:
    options = json.dumps({**options, "pages": checked.page_numbers}, sort_keys=True)
    return hashlib.sha256(f"{checked.sha256}:{options}".encode()).hexdigest()


def _duplicate_of(owner, dedup_key: str) -> Job | None:
    """The owner's newest job with the same file and options within the dedup window, unless it failed or was canceled."""
    since = timezone.now() - timedelta(seconds=settings.OCR_DEDUP_WINDOW_SECONDS)
    return (Job.objects.select_related("document")
            .filter(owner=owner, dedup_key=dedup_key, created_at__gte=since)
            .exclude(status__in=[Job.Status.FAILED, Job.Status.CANCELED])
            .order_by("-created_at").first())
