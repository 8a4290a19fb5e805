"""Submitting work: options and file are validated, then Document + Job + queue entry commit together."""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from jobs import progress
from jobs.engines.config import engine_config
from jobs.models import Job, StorageUsage, UserSettings
from jobs.queue import cluster_for, enqueue_job_prepared
from jobs.services.documents import CheckedDocument, Upload, document_check, document_store
from jobs.services.quotas import QUOTA_DAY, Quotas, Usage, quota_check, stored_bytes_change
from jobs.sql import PreparedInsert, quoted_columns, quoted_table
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
    # The write transaction holds the database's write lock (all of it, on SQLite), and in a
    # burst of submissions it was held most of the time: only the checks that must see every
    # earlier submission and the inserts happen inside it, and the inserts' statements and the
    # queue's signed task are made here, before it.
    queue = enqueue_job_prepared(job)  # sets the job's queue_task_id and enqueued_at
    document_insert = PreparedInsert(stored, late=("created_at",))
    job_insert = PreparedInsert(job, late=("document", "webhook_url", "created_at"))

    def write() -> Job | None:
        """The earlier job this one duplicates, or None once this one is inserted and queued."""
        if connection.features.has_select_for_update:
            # Lock the owner's row so two identical submissions arriving at once serialise
            # here and the second one finds the first job (SQLite's BEGIN IMMEDIATE already
            # serialises every writer).
            get_user_model().objects.select_for_update().filter(pk=owner.pk).first()
        state = _submission_state(owner, dedup_key)
        if state.duplicate is not None:
            return Job.objects.select_related("document").get(pk=state.duplicate)
        if not webhook_url:
            job.webhook_url = state.default_webhook_url
        quota_check(quotas=state.quotas, usage=state.usage, pages=job.pages_total, size_bytes=checked.size_bytes)
        document_insert.execute()
        job.document = stored  # its key is known now
        stored_bytes_change(owner.pk, stored.size_bytes)
        queue()
        job_insert.execute()
        transaction.on_commit(lambda: progress.publish(job, "queued"))
        return None

    try:
        existing = _in_write_transaction(write)
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


def _in_write_transaction(write):
    """``write()`` in a transaction; on the embedded SQLite, one shared with the other submissions of
    this process that are waiting for the write lock (``group_commit``), as bursts of them do."""
    group = getattr(connection, "group_commit", None)
    if group is None or connection.in_atomic_block:  # a caller's transaction must hold the write itself
        with transaction.atomic():
            return write()
    return group.run(write)


def _dedup_key(checked: CheckedDocument, **options) -> str:
    options = json.dumps({**options, "pages": checked.page_numbers}, sort_keys=True)
    return hashlib.sha256(f"{checked.sha256}:{options}".encode()).hexdigest()


@dataclass(frozen=True)
class _SubmissionState:
    duplicate: object  # the pk of the same submission within the dedup window, or None
    quotas: Quotas
    usage: Usage
    default_webhook_url: str  # the owner's, for a job that names none


def _submission_state(owner, dedup_key: str) -> _SubmissionState:
    """What the write transaction must know before inserting, read in one statement.

    Four ORM queries (the owner's settings, the duplicate, two quota sums) were a third of a
    submission's CPU, nearly all of it building SQL, and most of it inside the write lock that
    every other writer of the site waits for. The SQL never changes, so it is written once here.
    The response's queue position is counted after the transaction (``job_queue_position``).
    """
    now = timezone.now()
    adapt = connection.ops.adapt_datetimefield_value
    with connection.cursor() as cursor:
        cursor.execute(_state_sql(connection.vendor), [
            owner.pk, dedup_key, adapt(now - timedelta(seconds=settings.OCR_DEDUP_WINDOW_SECONDS)),
            Job.Status.FAILED, Job.Status.CANCELED,
            owner.pk, adapt(now - QUOTA_DAY),
            owner.pk,
            owner.pk,
        ])
        duplicate, pages, stored, max_pages, max_bytes, webhook_url = cursor.fetchone()
    own = {"max_pages_per_day": max_pages, "max_storage_bytes": max_bytes}  # None: no settings, or not set
    return _SubmissionState(duplicate=duplicate, quotas=Quotas.from_settings(own),
                            usage=Usage(pages_last_day=pages, stored_bytes=stored),
                            default_webhook_url=webhook_url or "")


# The duplicate within the dedup window, the pages of the last QUOTA_DAY (from the index
# job_owner_created_pages alone), the stored bytes (StorageUsage: no row before the first
# document), and the owner's settings (a LEFT JOIN: NULLs for an owner without them).
_STATE_SQL = """
SELECT
  (SELECT {job.id} FROM {jobs} WHERE {job.owner} = %s AND {job.dedup_key} = %s AND {job.created_at} >= %s
     AND {job.status} NOT IN (%s, %s) ORDER BY {job.created_at} DESC LIMIT 1),
  (SELECT COALESCE(SUM({job.pages_total}), 0) FROM {jobs} WHERE {job.owner} = %s AND {job.created_at} >= %s),
  COALESCE((SELECT {usage.stored_bytes} FROM {usages} WHERE {usage.user} = %s), 0),
  own.{own.max_pages_per_day}, own.{own.max_storage_bytes}, own.{own.default_webhook_url}
FROM (SELECT 1 AS one) AS one_row LEFT JOIN {owns} own ON own.{own.user} = %s
"""


@functools.cache
def _state_sql(vendor: str) -> str:
    return _STATE_SQL.format(
        jobs=quoted_table(Job), usages=quoted_table(StorageUsage), owns=quoted_table(UserSettings),
        job=quoted_columns(Job), usage=quoted_columns(StorageUsage), own=quoted_columns(UserSettings))
