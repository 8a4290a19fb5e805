"""Running a job on workers: claim, one committed page at a time, finish.

Contract with django-q2 (at-least-once delivery): ``job_run`` may be called
twice for one job, concurrently or after the job ended. One worker holds the
job's lease: the claim is a conditional UPDATE, every later write of the job
checks that this worker still holds it, and only the holder finishes the job.
Pages are shared: where the cluster has more workers the holder queues
``job_help`` tasks, and every worker on the job claims the next page that has
neither a result nor a live claim (jobs.services.pages). Each page commits on
its own, so a killed worker loses at most the two pages it had claimed and not
yet stored (one read while the other is stored), and a page already succeeded
is never redone.
"""

from __future__ import annotations

import enum
import logging
import time
from collections import Counter
from contextlib import ExitStack, contextmanager
from datetime import timedelta

from django.conf import settings
from django.db import InterfaceError, OperationalError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from jobs import progress
from jobs.engines.pool import engine_thread, get_engine
from jobs.errors import StoreUnavailable
from jobs.models import Job, PageResult
from jobs.queue import enqueue_helpers, enqueue_job
from jobs.services.batch_states import batch_job_ended
from jobs.services.documents import upload_limits
from jobs.services.extraction import job_fields_queue
from jobs.services.fetching import document_pending, job_document_fetch
from jobs.services.storage import store_retrying, stored_local_path
from jobs.services.pages import job_record_page, page_claim_next, page_encode, page_read, pages_held_by_others
from jobs.webhooks import webhook_schedule_for_job
from ocr_engine.errors import OcrError
from ocr_engine.inputs import open_document
from ocr_engine.schema import to_dict

logger = logging.getLogger(__name__)

# Transient database errors of a worker (a restart, a dropped connection): tries and the first
# back-off (doubling): 15.5 s in all, a PostgreSQL restart's time and more.
DB_RETRIES = 6
DB_RETRY_DELAY_SECONDS = 0.5
# How often the lease holder looks again while helpers read the job's last pages: the job
# ends this much after its last page at worst (a few cheap reads, only at a job's end).
HELPERS_POLL_SECONDS = 0.1


class Ending(enum.Enum):
    """Why a worker stopped reading a job's pages."""

    DONE = "done"  # every page has a result (or nothing is left to claim, for a helper)
    PAUSED = "paused"  # out of time or asked to stop, with pages left: hand the job over
    LOST = "lost"  # the job is not this worker's any more: canceled, deleted, failed or taken over


def job_run(*, job_id, worker_id: str, budget_seconds: float, stopping=lambda: False) -> None:
    """Hold the job's lease and read its pages until done, canceled or out of budget (then hand over).

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
            enqueue_job(job)
        return
    # Load (or reuse) the engine before claiming, so model loading never eats
    # into the lease a claimed job is measured against.
    try:
        engine = _engine_for(job)
    except OcrError as exc:
        if job_claim(job_id=job_id, worker_id=worker_id) is not None:
            job_fail(job_id=job_id, code=exc.code, detail=exc.message, worker_id=worker_id)
        return
    job = _retrying_db(job_claim, job_id=job_id, worker_id=worker_id)
    if job is None:
        return
    if document_pending(job.document):  # a file_url job: its file is downloaded here, not in the web request
        try:
            job = job_document_fetch(job=job, worker_id=worker_id)
        except OcrError as exc:
            job_fail(job_id=job_id, code=exc.code, detail=exc.message, worker_id=worker_id)
            return
        if job is None:
            return
    if job.engine != to_dict(engine.info):
        Job.objects.filter(pk=job.pk).update(engine=to_dict(engine.info))
    _queue_helpers(job, worker_id)
    ending = _read_pages(job, engine, worker_id, holds_lease=True,
                         out_of_time=lambda: stopping() or time.monotonic() - started > budget_seconds)
    if ending is Ending.DONE:
        _retrying_db(job_finish, job_id=job_id, worker_id=worker_id)  # a blip here must not lose a read job
    elif ending is Ending.PAUSED:
        _retrying_db(job_release, job_id=job_id, worker_id=worker_id)


def job_help(*, job_id, worker_id: str, budget_seconds: float, stopping=lambda: False) -> None:
    """Read pages of a job whose lease another worker holds, until none is left to claim or out of budget.

    A helper never finishes, fails or releases the job: the lease holder does,
    once every page has a result.
    """
    started = time.monotonic()
    job = Job.objects.filter(pk=job_id, status=Job.Status.RUNNING).select_related("document").first()
    if job is None or stopping():
        return
    try:
        engine = _engine_for(job)
    except OcrError:
        return  # the lease holder loads the same engine and fails the job with the reason
    _read_pages(job, engine, worker_id, holds_lease=False,
                out_of_time=lambda: stopping() or time.monotonic() - started > budget_seconds)


def _engine_for(job: Job):
    return get_engine(job.pipeline, job.lang, orientation=job.orientation, text_layer=job.text_layer)


def _queue_helpers(job: Job, worker_id: str) -> None:
    """Queue tasks for the cluster's other workers to share this job's pages (OCR_JOB_HELPERS)."""
    if pages_held_by_others(job_id=job.pk, worker_id=worker_id):
        return  # helpers queued by an earlier slice are still at work
    pages_left = len(job.page_numbers) - job.pages.count()
    helpers = min(settings.OCR_JOB_HELPERS, pages_left // settings.OCR_SHARE_MIN_PAGES - 1)
    if helpers > 0:
        with transaction.atomic():
            enqueue_helpers(job.pk, job.cluster, helpers)


def _read_pages(job: Job, engine, worker_id: str, *, holds_lease: bool, out_of_time) -> Ending:
    """Claim, read and store pages one at a time; the same loop for the lease holder and for helpers.

    Reading overlaps storing: once a page is read, the next one is claimed and
    read on the engine's thread (jobs.engines.pool) while this thread stores the
    page just read, and each page's image is encoded on the image thread while
    the page is read, so the time OCR leaves a core idle goes to images and the
    database. At most two pages are claimed and not yet stored,
    which is what a killed worker can lose; a stored page is never redone.

    The lease holder also renews the lease (which doubles as the cancel check),
    enforces the job's deadline, and waits for pages that helpers are reading.
    A worker reads at least one page per call, so a job always moves on.
    """
    opened = ExitStack()
    try:
        # The upload was checked from its headers; decoding every page is done here.
        doc = opened.enter_context(_opened(job.document))
    except OcrError as exc:
        if holds_lease:
            job_fail(job_id=job.pk, code=exc.code, detail=exc.message, worker_id=worker_id)
        return Ending.LOST
    claimed = 0
    # Pages being read on the engine's thread (Futures of their PageRecords): the one to store
    # next, and the one claimed after it.
    reading = upcoming = None
    reading_number = None
    with opened:
        try:
            while True:
                if holds_lease and job.deadline_at and timezone.now() > job.deadline_at:
                    job_fail(job_id=job.pk, worker_id=worker_id, code="timeout",
                             detail=f"The job did not finish by its deadline ({job.deadline_at:%Y-%m-%d %H:%M:%S} UTC).")
                    return Ending.LOST
                if holds_lease and not _retrying_db(job_heartbeat, job_id=job.pk, worker_id=worker_id):
                    return Ending.LOST
                # The next page is claimed once this one is read, not before: a page claimed
                # ahead would wait while another worker on the job runs out of pages.
                record = reading.result() if reading is not None else None
                winding_down = bool(claimed) and out_of_time()
                number = None if winding_down else _retrying_db(
                    page_claim_next, job_id=job.pk, worker_id=worker_id, reading=(reading_number,) if reading else ())
                if number is not None:
                    claimed += 1
                    upcoming = engine_thread().submit(page_read, engine, doc, number)
                if record is not None and not _page_stored(job, worker_id, page_encode(record), holds_lease):
                    return Ending.LOST
                reading, upcoming, reading_number = upcoming, None, number
                if reading is not None:
                    continue
                if winding_down:
                    return Ending.DONE if job.pages.count() >= len(job.page_numbers) else Ending.PAUSED
                if not holds_lease or not _retrying_db(pages_held_by_others, job_id=job.pk, worker_id=worker_id):
                    return Ending.DONE
                if out_of_time():
                    return Ending.PAUSED
                time.sleep(HELPERS_POLL_SECONDS)
        finally:
            # Reads left unstored (a lost lease, an error): the document must stay open until they end.
            for left in (reading, upcoming):
                if left is not None:
                    left.result().close_image()


def _page_stored(job: Job, worker_id: str, record, holds_lease: bool) -> bool:
    """Store a read page, waiting out a store that is down; False when the job is no longer this worker's,
    or the store stayed down (the lease holder then fails the job, retryable: every stored page stays)."""
    try:
        return store_retrying(_retrying_db, job_record_page, job_id=job.pk, worker_id=worker_id, record=record)
    except StoreUnavailable as exc:
        if holds_lease:
            job_fail(job_id=job.pk, code=exc.code, detail=exc.message, worker_id=worker_id)
        return False


def _retrying_db(write, **kwargs):
    """Call ``write(**kwargs)``, retrying a transient database error (a restart, a dropped
    connection, a lock held past the busy timeout) a few times before giving up.

    Without this one blip raised out of the task, burnt a job attempt and left
    the job waiting out the whole lease (OCR_LEASE_SECONDS) before recovery.
    Every call here is idempotent, so a retry after an unknown outcome is safe.
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
        enqueue_job(job)
    return True


def job_finish(*, job_id, worker_id: str) -> Job | None:
    """End a job whose pages all have results: ``succeeded``, or ``failed`` (pages_failed) if any page failed."""
    with transaction.atomic():
        job = _held(job_id, worker_id).select_for_update().select_related("document").first()
        if job is None:
            return None
        pages = _page_outcomes(job)
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
        _close(job, _page_outcomes(job))
    return job


def _close(job: Job, pages: list[PageResult]) -> None:
    """Save a job that just reached its final status; announce it (event, webhook) once committed."""
    job.timings = _timing_totals(pages)
    job.finished_at = timezone.now()
    job.worker_id, job.heartbeat_at = "", None
    job.save()
    job.page_claims.all().delete()  # helpers still on a page find the job final and stop
    batch_job_ended(job)
    transaction.on_commit(lambda: progress.publish(job, job.status, error_code=job.error_code or None))
    if job.status == Job.Status.SUCCEEDED and job_fields_queue(job=job):
        return  # its job.succeeded webhook waits for the fields stage, to carry the fields
    # robust: a webhook that cannot be queued is logged and never fails the finished job.
    transaction.on_commit(lambda: webhook_schedule_for_job(job=job, event=f"job.{job.status}"), robust=True)


def _page_outcomes(job: Job) -> list[PageResult]:
    """The job's pages as far as ending it needs: status, errors, timings (not their results,
    which a long job holds megabytes of)."""
    return list(job.pages.defer("raw", "normalized"))


def _timing_totals(pages: list[PageResult]) -> dict[str, float]:
    totals: Counter = Counter()
    for page in pages:
        totals.update({k: v for k, v in (page.timings or {}).items() if isinstance(v, (int, float))})
    return {k: round(v, 4) for k, v in totals.items()}


@contextmanager
def _opened(document):
    """The stored file, open for the engine from a path, so pdfium reads pages from disk as needed
    instead of holding the whole file in memory: the file itself on the file system, a local copy
    of an object store's (streamed there, retried while the store is down)."""
    with ExitStack() as stack:
        path = store_retrying(lambda: stack.enter_context(stored_local_path(document.file.name)))
        with open_document(path, limits=upload_limits()) as doc:
            yield doc
