"""Submitting work: options and file are validated, then Document + Job + queue entry commit together."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from jobs import progress
from jobs.engines.config import engine_config
from jobs.models import Job, UserSettings
from jobs.queue import cluster_for, enqueue_job
from jobs.services.documents import CheckedDocument, Upload, document_check, document_store
from jobs.services.quotas import Quotas, quota_check
from jobs.urlguard import check_public_url, fetch_url
from ocr_engine import pipelines
from ocr_engine.config import DEFAULT_LANG
from ocr_engine.errors import GpuRequired
from ocr_engine.pipelines import DEFAULT_PIPELINE



def job_options_check(*, pipeline: str, lang: str, text_layer: str = "auto", orientation: str = "auto") -> None:
    """Raise UnsupportedOption / GpuRequired for options this server cannot run."""
    # EngineConfig validates every option
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
    quotas, default_webhook_url = _owner_settings(owner)

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
        webhook_url=webhook_url or default_webhook_url,
        dedup_key=dedup_key,
        max_attempts=settings.OCR_JOB_MAX_ATTEMPTS,
    )
    # The write transaction holds the database's write lock (all of it, on SQLite): only the
    # checks that must see every earlier submission and the inserts happen inside it.
    try:
        with transaction.atomic():
            if connection.features.has_select_for_update:
                # Lock the owner's row so two identical submissions arriving at once serialise
                # here and the second one finds the first job (SQLite's BEGIN IMMEDIATE already
                # serialises every writer).
                get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
            existing = _recent_duplicate(owner, dedup_key)
            if existing is None:
                quota_check(owner=owner, quotas=quotas, pages=job.pages_total, size_bytes=checked.size_bytes)
                stored.save()
                enqueue_job(job)
                job.save(force_insert=True)
                transaction.on_commit(lambda: progress.publish(job, "queued"))
    except BaseException:
        stored.file.delete(save=False)  # the row rolled back, or was never saved: the file goes too
        raise
    if existing is not None:
        stored.file.delete(save=False)
        return existing, True
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


def _recent_duplicate(owner, dedup_key: str) -> Job | None:
    window = timezone.now() - timedelta(seconds=settings.OCR_DEDUP_WINDOW_SECONDS)
    # The key alone first: nearly every submission finds none, and the whole job with its
    # document took three times as long to select (inside the write transaction).
    found = (Job.objects.filter(owner=owner, dedup_key=dedup_key, created_at__gte=window)
             .exclude(status__in=(Job.Status.FAILED, Job.Status.CANCELED))
             .order_by("-created_at").values_list("pk", flat=True).first())
    return None if found is None else Job.objects.select_related("document").get(pk=found)


def _owner_settings(owner) -> tuple[Quotas, str]:
    """The owner's quotas and default webhook URL, in one read before the write transaction."""
    own = (UserSettings.objects.filter(user=owner)
           .values("max_pages_per_day", "max_storage_bytes", "default_webhook_url").first() or {})
    return Quotas.from_settings(own), own.get("default_webhook_url") or ""
