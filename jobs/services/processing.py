"""Running a job on a worker: claim, one committed page at a time, finish.

Contract with django-q2 (at-least-once delivery): ``job_run`` may be called
twice for one job, concurrently or after the job ended. The claim is a
conditional UPDATE, so only one worker holds a job; every later write checks
that this worker still holds it; a page already succeeded is never redone.
Each page commits on its own, so a killed worker loses at most the page it
was on, and the next worker resumes at the first page without a result.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from jobs import progress
from jobs.engines.pool import get_engine
from jobs.models import Job, PageResult
from jobs.page_images import encode_page
from jobs.queue import enqueue_job
from jobs.services.documents import upload_limits
from jobs.services.storage import storage_delete
from jobs.webhooks import webhook_schedule_for_job
from ocr_engine import stages
from ocr_engine.errors import OcrError
from ocr_engine.inputs import open_document
from ocr_engine.schema import to_dict

logger = logging.getLogger(__name__)

# Transient database errors inside the page loop: tries and the first back-off (doubling).
DB_RETRIES = 4
DB_RETRY_DELAY_SECONDS = 0.5


@dataclass
class PageRecord:
    """One page's outcome, ready to store: either ``page`` (+ raw) or ``error_code``."""

    page_number: int
    page: Any = None  # ocr_engine.schema.Page
    raw: dict | None = None
    timings: dict[str, float] = field(default_factory=dict)
    image_jpeg: bytes | None = None
    thumbnail: bytes | None = None
    error_code: str = ""
    error_detail: str = ""


def job_run(*, job_id, worker_id: str, budget_seconds: float, stopping=lambda: False) -> None:
    """Process a job's unfinished pages until done, canceled or out of budget (then hand over).

    ``stopping()`` turns true when this worker is asked to shut down (SIGTERM,
    see jobs.worker): the job is then handed over at the next page boundary,
    exactly as when the budget is spent.
    """
    started = time.monotonic()
    job = Job.objects.filter(pk=job_id).first()
    if job is None or job.is_final:
        return
    if stopping():
        # A task this shutting-down worker had prefetched: its queue entry is
        # acknowledged when we return, so queue the job again for another worker.
        with transaction.atomic():
            enqueue_job(job.pk, job.cluster)
        return
    # Load (or reuse) the engine before claiming, so model loading never eats
    # into the lease a claimed job is measured against.
    try:
        engine = get_engine(job.pipeline, job.lang, orientation=job.orientation, text_layer=job.text_layer)
    except OcrError as exc:
        if job_claim(job_id=job_id, worker_id=worker_id) is not None:
            job_fail(job_id=job_id, code=exc.code, detail=exc.message, worker_id=worker_id)
        return
    job = job_claim(job_id=job_id, worker_id=worker_id)
    if job is None:
        return
    if job.engine != to_dict(engine.info):
        Job.objects.filter(pk=job.pk).update(engine=to_dict(engine.info))

    done = set(job.pages.values_list("page_number", flat=True))
    todo = [n for n in job.page_numbers if n not in done]
    try:
        # The upload was checked from its headers; decoding every page is done here.
        opened = _opened(job.document)
    except OcrError as exc:
        job_fail(job_id=job_id, code=exc.code, detail=exc.message, worker_id=worker_id)
        return
    with opened as doc:
        for index, number in enumerate(todo):
            if job.deadline_at and timezone.now() > job.deadline_at:
                job_fail(job_id=job_id, worker_id=worker_id, code="timeout",
                         detail=f"The job did not finish by its deadline ({job.deadline_at:%Y-%m-%d %H:%M:%S} UTC).")
                return
            # Heartbeat doubles as the cancel check: it fails once the job is
            # canceled, deleted or taken over by another worker.
            if not _retrying_db(job_heartbeat, job_id=job_id, worker_id=worker_id):
                return
            record = _process_page(engine, doc, number)
            if not _retrying_db(job_record_page, job_id=job_id, worker_id=worker_id, record=record):
                return
            if index + 1 < len(todo) and (stopping() or time.monotonic() - started > budget_seconds):
                job_release(job_id=job_id, worker_id=worker_id)
                return
    job_finish(job_id=job_id, worker_id=worker_id)


def _retrying_db(write, **kwargs):
    """Call ``write(**kwargs)``, retrying a transient database error (a restart, a dropped
    connection, a lock held past the busy timeout) a few times before giving up.

    Without this one blip raised out of the task, burnt a job attempt and left
    the job waiting out the whole lease (OCR_LEASE_SECONDS) before recovery.
    Both writes are idempotent, so a retry after an unknown outcome is safe.
    """
    for attempt in range(DB_RETRIES):
        try:
            return write(**kwargs)
        except (OperationalError, InterfaceError):
            if attempt + 1 == DB_RETRIES:
                raise
            logger.warning("Transient database error in %s, retrying", write.__name__, exc_info=True)
            # A dropped connection stays broken until closed; the next query reconnects.
            connection.close_if_unusable_or_obsolete()
            time.sleep(DB_RETRY_DELAY_SECONDS * 2**attempt)


def _process_page(engine, doc, number: int) -> PageRecord:
    try:
        out = engine.process_page(doc, number)
        t1 = time.perf_counter()
        # Store the image the engine read (turned and deskewed): the page's
        # coordinates, overlays and exports are all in its frame.
        jpeg, thumb = encode_page(out.image, thumbnail_size=settings.OCR_THUMBNAIL_SIZE)
        out.image.close()
        timings = {**out.timings, stages.STORE_IMAGES: round(time.perf_counter() - t1, 4)}
        return PageRecord(page_number=number, page=out.page, raw=out.raw, timings=timings,
                          image_jpeg=jpeg, thumbnail=thumb)
    except OcrError as exc:
        logger.warning("Page %s failed: %s", number, exc.message)
        return PageRecord(page_number=number, error_code=exc.code, error_detail=exc.message)
    except Exception as exc:  # noqa: BLE001 - one bad page must not stop the others
        logger.exception("Page %s failed unexpectedly", number)
        return PageRecord(page_number=number, error_code="internal_error",
                          error_detail=f"{type(exc).__name__}: {exc}")


def job_claim(*, job_id, worker_id: str) -> Job | None:
    """Take a job for this worker, or return None when it is not this worker's to run.

    A conditional UPDATE, not read-then-write: of two workers that receive the
    same job (at-least-once delivery) exactly one matches the WHERE clause.
    """
    now = timezone.now()
    held = {"worker_id": worker_id, "heartbeat_at": now}
    # A continuation: the previous slice released the lease (heartbeat NULL) on purpose.
    if Job.objects.filter(pk=job_id, status=Job.Status.RUNNING, heartbeat_at__isnull=True).update(**held):
        return Job.objects.select_related("document").get(pk=job_id)
    lease_expired = now - timedelta(seconds=settings.OCR_LEASE_SECONDS)
    claimed = (
        Job.objects.filter(pk=job_id, attempts__lt=F("max_attempts"))
        .filter(Q(status=Job.Status.QUEUED) | Q(status=Job.Status.RUNNING, heartbeat_at__lt=lease_expired))
        .update(status=Job.Status.RUNNING, attempts=F("attempts") + 1, **held)
    )
    if not claimed:
        return None
    job = Job.objects.select_related("document").get(pk=job_id)
    if job.started_at is None:  # queued -> running for the first time (or after a retry)
        job.started_at = now
        job.deadline_at = now + timedelta(
            seconds=settings.OCR_JOB_TIMEOUT_BASE_SECONDS + settings.OCR_JOB_TIMEOUT_PER_PAGE_SECONDS * job.pages_total
        )
        Job.objects.filter(pk=job_id).update(started_at=job.started_at, deadline_at=job.deadline_at)
        progress.publish(job, "started")
    return job


def job_heartbeat(*, job_id, worker_id: str) -> bool:
    """Renew this worker's lease; False when the job is no longer its to run (canceled, deleted, taken over)."""
    return bool(_held(job_id, worker_id).update(heartbeat_at=timezone.now()))


def _held(job_id, worker_id: str):
    """The job while this worker holds it (running, its worker_id): every worker write goes through this."""
    return Job.objects.filter(pk=job_id, status=Job.Status.RUNNING, worker_id=worker_id)


def job_record_page(*, job_id, worker_id: str, record: PageRecord) -> bool:
    """Store one page's result in its own transaction; False when the worker no longer holds the job.

    Idempotent: a page that already succeeded is kept as it is (its row and
    files are not rewritten); a failed one is replaced.
    """
    new_files: list = []
    try:
        with transaction.atomic():
            job = _held(job_id, worker_id).select_for_update().first()
            if job is None:
                return False
            existing = PageResult.objects.filter(job=job, page_number=record.page_number).first()
            if existing is not None and existing.status == PageResult.Status.SUCCEEDED:
                return True
            old_files = [f.name for f in (existing.image, existing.thumbnail) if f] if existing else []
            result = existing or PageResult(job=job, page_number=record.page_number)
            _fill(result, record)
            if record.image_jpeg is not None:
                result.image.save(f"p{record.page_number:04d}.jpg", ContentFile(record.image_jpeg), save=False)
                new_files.append(result.image)
                result.thumbnail.save(f"p{record.page_number:04d}_thumb.webp", ContentFile(record.thumbnail),
                                      save=False)
                new_files.append(result.thumbnail)
            result.save()
            job.pages_done = job.pages.count()
            job.heartbeat_at = timezone.now()
            job.save(update_fields=["pages_done", "heartbeat_at"])
            transaction.on_commit(lambda: storage_delete(old_files))
    except BaseException:
        for f in new_files:
            f.delete(save=False)
        raise
    progress.publish(
        job, "page_done", page_number=result.page_number, page_status=result.status,
        line_count=result.line_count, region_count=result.region_count, timings=result.timings,
    )
    return True


def _fill(result: PageResult, record: PageRecord) -> None:
    result.timings = record.timings
    result.error_code = record.error_code
    result.error_detail = record.error_detail
    if record.page is None:
        result.status = PageResult.Status.FAILED
        result.raw = result.normalized = None
        result.image = result.thumbnail = ""
        result.line_count = result.region_count = 0
        result.mean_confidence = None
        return
    page = record.page
    result.status = PageResult.Status.SUCCEEDED
    result.width, result.height, result.scale = page.width, page.height, page.scale
    result.raw = record.raw
    result.normalized = to_dict(page)
    result.line_count = len(page.lines)
    result.region_count = len(page.regions)
    confidences = [line.confidence for line in page.lines if line.confidence is not None]
    result.mean_confidence = sum(confidences) / len(confidences) if confidences else None


def job_release(*, job_id, worker_id: str) -> bool:
    """Give up the lease after a time budget and queue the continuation; the job stays ``running``.

    Keeps every task far below django-q2's ``timeout`` whatever the page
    count, and lets other jobs in the queue take turns with a long one.
    """
    with transaction.atomic():
        job = _held(job_id, worker_id).select_for_update().first()
        if job is None:
            return False
        job.worker_id, job.heartbeat_at = "", None
        job.save(update_fields=["worker_id", "heartbeat_at"])
        enqueue_job(job.id, job.cluster)
    return True


def job_finish(*, job_id, worker_id: str) -> Job | None:
    """End a job whose pages all have results: ``succeeded``, or ``failed`` (pages_failed) if any page failed."""
    with transaction.atomic():
        job = _held(job_id, worker_id).select_for_update().select_related("document").first()
        if job is None:
            return None
        pages = list(job.pages.all())
        failed = [p for p in pages if p.status == PageResult.Status.FAILED]
        if failed:
            numbers = ", ".join(str(p.page_number) for p in failed)
            job.status = Job.Status.FAILED
            job.error_code = "pages_failed"
            job.error_detail = f"{len(failed)} of {len(pages)} pages failed ({numbers}); first error: " + (
                f"[{failed[0].error_code}] {failed[0].error_detail}"
            )
        else:
            job.status = Job.Status.SUCCEEDED
        _close(job, pages)
    return job


def job_fail(*, job_id, code: str, detail: str, worker_id: str | None = None) -> Job | None:
    """Fail an active job (with ``worker_id``: only while that worker holds it). None if it was not active."""
    with transaction.atomic():
        query = Job.objects.select_for_update().filter(pk=job_id, status__in=Job.ACTIVE_STATUSES)
        if worker_id is not None:
            query = query.filter(worker_id=worker_id)
        job = query.select_related("document").first()
        if job is None:
            return None
        job.status = Job.Status.FAILED
        job.error_code, job.error_detail = code, detail
        _close(job, list(job.pages.all()))
    return job


def _close(job: Job, pages: list[PageResult]) -> None:
    """Save a job that just reached its final status; announce it (event, webhook) once committed."""
    job.timings = _timing_totals(pages)
    job.finished_at = timezone.now()
    job.worker_id, job.heartbeat_at = "", None
    job.save()
    transaction.on_commit(lambda: progress.publish(job, job.status, error_code=job.error_code or None))
    # robust: a webhook that cannot be queued is logged and never fails the finished job.
    transaction.on_commit(lambda: webhook_schedule_for_job(job=job, event=f"job.{job.status}"), robust=True)


def _timing_totals(pages: list[PageResult]) -> dict[str, float]:
    totals: Counter = Counter()
    for page in pages:
        totals.update({k: v for k, v in (page.timings or {}).items() if isinstance(v, (int, float))})
    return {k: round(v, 4) for k, v in totals.items()}


def _opened(document):
    """Open the stored file for the engine: by path where storage is local, so pdfium
    reads pages from disk as needed instead of holding the whole file in memory."""
    try:
        return open_document(document.file.path, limits=upload_limits())
    except NotImplementedError:  # remote storage has no path
        with document.file.open("rb") as fh:
            return open_document(fh.read(), limits=upload_limits())
