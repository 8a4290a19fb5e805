"""One page's outcome on a worker: read it (``page_read``, its image encoded meanwhile), take the
encoded image (``page_encode``), store it (``job_record_page``).

Used by every worker on a job, the one holding the job's lease and the
helpers sharing its pages (jobs.services.processing).
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import Future, wait
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from jobs import progress
from jobs.engines.pool import image_thread
from jobs.errors import FIXED_PAGE_ERRORS
from jobs.models import Job, PageClaim, PageResult
from jobs.page_images import encode_page
from jobs.services.quotas import stored_bytes_change
from jobs.services.search import page_index
from jobs.services.storage import storage_delete
from ocr_engine import stages
from ocr_engine.errors import OcrError
from ocr_engine.schema import to_dict

logger = logging.getLogger(__name__)


@dataclass
class PageRecord:
    """One page's outcome, ready to store: either ``page`` (+ raw) or ``error_code``."""

    page_number: int
    page: Any = None  # ocr_engine.schema.Page
    raw: dict | None = None
    timings: dict[str, float] = field(default_factory=dict)
    image: Any = None  # the page image as the engine read it (PIL), open until page_encode takes:
    encoding: Future | None = None  # (JPEG, thumbnail) of the image, made on the image thread
    image_jpeg: bytes | None = None
    thumbnail: bytes | None = None
    error_code: str = ""
    error_detail: str = ""

    def close_image(self) -> None:
        """Close the page image once its encoding, if any, has ended."""
        if self.encoding is not None:
            wait([self.encoding])
        if self.image is not None:
            self.image.close()
            self.image = None


def page_read(engine, doc, number: int) -> PageRecord:
    """Run the engine on one page; a failure becomes a failed page, never an exception.

    The page image is encoded on the image thread from the moment the engine has
    it (turned and deskewed) until the page is read: a one-page job would otherwise
    encode it after OCR, with the client waiting. No database work: it runs on the
    engine's thread while the caller stores the page before.
    """
    encodings: list[Future] = []

    def encode(image) -> None:
        encodings.append(image_thread().submit(encode_page, image, thumbnail_size=settings.OCR_THUMBNAIL_SIZE))

    try:
        out = engine.process_page(doc, number, on_image=encode)
        # Store the image the engine read (turned and deskewed): the page's
        # coordinates, overlays and exports are all in its frame.
        return PageRecord(page_number=number, page=out.page, raw=out.raw, timings=out.timings, image=out.image,
                          encoding=encodings[0])
    except OcrError as exc:
        if exc.code in FIXED_PAGE_ERRORS:  # the engine's own exception: for the log only
            logger.exception("Page %s failed", number)
        else:
            logger.warning("Page %s failed: %s", number, exc.message)
        failed = PageRecord(page_number=number, error_code=exc.code,
                            error_detail=FIXED_PAGE_ERRORS.get(exc.code, exc.message))
    except Exception:  # noqa: BLE001 - one bad page must not stop the others
        logger.exception("Page %s failed unexpectedly", number)
        failed = PageRecord(page_number=number, error_code="internal_error",
                            error_detail=FIXED_PAGE_ERRORS["internal_error"])
    wait(encodings)  # of an image the engine closed as it failed: not stored, but never left running
    return failed


def page_encode(record: PageRecord) -> PageRecord:
    """The page image as the stored JPEG and thumbnail, once encoded (the image is closed).

    Timed as what the encoding adds to the page after it was read, so that the
    stages still add up to the page's latency (jobs.observability.metrics).
    """
    if record.encoding is not None:
        started = time.perf_counter()
        record.image_jpeg, record.thumbnail = record.encoding.result()
        record.timings = {**record.timings, stages.STORE_IMAGES: round(time.perf_counter() - started, 4)}
        record.close_image()
    return record


def job_record_page(*, job_id, worker_id: str, record: PageRecord) -> bool:
    """Store one page's result in its own transaction; False when the page is no longer this worker's.

    It is while the job runs and this worker holds the job's lease or a claim
    on the page. Idempotent: a page that already succeeded is kept as it is
    (its row and files are not rewritten); a failed one is replaced.
    """
    new_files: list = []
    try:
        with transaction.atomic():
            job = Job.objects.select_for_update().filter(pk=job_id, status=Job.Status.RUNNING).first()
            if job is None:
                return False
            claim = PageClaim.objects.filter(job=job, page_number=record.page_number, worker_id=worker_id)
            if job.worker_id != worker_id and not claim.exists():
                return False
            claim.delete()
            existing = PageResult.objects.filter(job=job, page_number=record.page_number).first()
            if existing is not None and existing.status == PageResult.Status.SUCCEEDED:
                return True
            old_files = [f.name for f in (existing.image, existing.thumbnail) if f] if existing else []
            old_bytes = existing.stored_bytes if existing else 0
            result = existing or PageResult(job=job, page_number=record.page_number)
            _fill(result, record)
            result.worker_id = worker_id
            result.stored_bytes = 0
            if record.image_jpeg is not None:
                result.image.save(f"p{record.page_number:04d}.jpg", ContentFile(record.image_jpeg), save=False)
                new_files.append(result.image)
                result.thumbnail.save(f"p{record.page_number:04d}_thumb.webp", ContentFile(record.thumbnail),
                                      save=False)
                new_files.append(result.thumbnail)
                result.stored_bytes = len(record.image_jpeg) + len(record.thumbnail)
            result.save()
            page_index(result)  # searchable from this commit on, as the page is
            if result.stored_bytes != old_bytes:
                stored_bytes_change(job.owner_id, result.stored_bytes - old_bytes)
            job.pages_done = job.pages.count()
            updated = ["pages_done"]
            if job.worker_id == worker_id:  # only the lease holder renews the lease
                job.heartbeat_at = timezone.now()
                updated.append("heartbeat_at")
            job.save(update_fields=updated)
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
        result.low_confidence_lines = []
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
    result.low_confidence_lines = [line.id for line in page.lines if line.confidence is not None
                                   and line.confidence < PageResult.LOW_CONFIDENCE]


def page_claim_next(*, job_id, worker_id: str, reading: tuple[int, ...] = ()) -> int | None:
    """Claim the first page of a running job with no result, no live claim by another worker,
    and not among the pages this worker is ``reading`` now.

    None when the job is not running any more, or when every page left is
    done or held. The job row is locked, so two workers never get one page.
    A page this worker claimed before and is not reading (a read it gave up) is
    claimed again.
    """
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(pk=job_id, status=Job.Status.RUNNING).first()
        if job is None:
            return None
        taken = set(job.pages.values_list("page_number", flat=True))
        taken |= set(_claims_of_others(job_id, worker_id).values_list("page_number", flat=True))
        taken |= set(reading)
        number = next((n for n in job.page_numbers if n not in taken), None)
        if number is not None:
            PageClaim.objects.update_or_create(job=job, page_number=number,
                                               defaults={"worker_id": worker_id, "claimed_at": timezone.now()})
        return number


def pages_held_by_others(*, job_id, worker_id: str) -> int:
    """Pages of the job that other workers are reading now (live claims, no result yet)."""
    return _claims_of_others(job_id, worker_id).count()


def _claims_of_others(job_id, worker_id: str):
    """Other workers' claims on the job that are still live (younger than OCR_LEASE_SECONDS)."""
    live_since = timezone.now() - timedelta(seconds=settings.OCR_LEASE_SECONDS)
    return PageClaim.objects.filter(job_id=job_id, claimed_at__gte=live_since).exclude(worker_id=worker_id)
