"""Actions on existing jobs: cancel, retry, delete, requeue, and recovery of abandoned jobs."""

from __future__ import annotations

import logging
import time
from datetime import timedelta

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q, Sum
from django.utils import timezone

from jobs import progress
from jobs.errors import JobStateError
from jobs.models import AuditEntry, Document, Job, PageClaim, PageResult
from jobs.queue import enqueue_job, waiting_task_ids
from jobs.services.audit import Actor, audit_record
from jobs.services.batch_states import batch_job_ended, batch_job_removed, batch_job_reopened
from jobs.services.processing import job_fail
from jobs.services.quotas import stored_bytes_change
from jobs.services.storage import EXPORTS_FOLDER, storage_delete, storage_delete_folder

logger = logging.getLogger(__name__)


# How often a ``?wait=`` request looks at its job's status (one indexed read), so a waiting client
# learns of the end at most this late.
WAIT_POLL_SECONDS = 0.1


def job_wait(*, job: Job, seconds: float) -> Job:
    """The job once it has ended, or as it is after ``seconds``: ``GET /jobs/{id}?wait=`` instead of client polling.

    A short poll of the job's status on the request's own thread (Django's ASGI handler gives each
    request one); the whole row is read once, at the end.
    """
    # A pooled connection (DB_POOL_SIZE) goes back to the pool between looks, so that waiting
    # requests do not hold the pool's connections; an unpooled one stays: opening it costs more than a look.
    pooled = "pool" in connection.settings_dict.get("OPTIONS", {})
    status = Job.objects.filter(pk=job.pk).values_list("status", flat=True)
    deadline = time.monotonic() + seconds
    while job.status not in Job.FINAL_STATUSES and (remaining := deadline - time.monotonic()) > 0:
        if pooled and not connection.in_atomic_block:
            connection.close()
        time.sleep(min(WAIT_POLL_SECONDS, remaining))
        if (current := status.first()) is None:
            raise Job.DoesNotExist(f"Job {job.pk} was deleted while it was awaited.")
        job.status = current
    job.refresh_from_db()
    return job


def job_cancel(*, job: Job, by: Actor) -> Job:
    """queued/running -> canceled. A worker on it stops at the next page boundary; finished pages stay."""
    with transaction.atomic():
        updated = Job.objects.filter(pk=job.pk, status__in=Job.ACTIVE_STATUSES).update(
            status=Job.Status.CANCELED, finished_at=timezone.now(), worker_id="", heartbeat_at=None
        )
        if not updated:
            job.refresh_from_db(fields=["status"])
            raise JobStateError(f"Only queued or running jobs can be canceled; this job is {job.status}.")
        job.refresh_from_db()
        audit_record(action=AuditEntry.Action.CANCELED, job=job, by=by)
        batch_job_ended(job)
        transaction.on_commit(lambda: progress.publish(job, "canceled"))
    return job


def job_retry(*, job: Job, by: Actor) -> Job:
    """failed -> queued. Succeeded pages are kept; failed and missing pages are processed again."""
    with transaction.atomic():
        locked = Job.objects.select_for_update().filter(pk=job.pk, status=Job.Status.FAILED).first()
        if locked is None:
            job.refresh_from_db(fields=["status"])
            raise JobStateError(f"Only failed jobs can be retried; this job is {job.status}.")
        if locked.files_purged_at is not None:
            raise JobStateError("This job's original was removed by the retention policy: it cannot be retried.")
        failed = list(locked.pages.filter(status=PageResult.Status.FAILED))
        PageResult.objects.filter(pk__in=[p.pk for p in failed]).delete()
        locked.page_claims.all().delete()
        locked.status = Job.Status.QUEUED
        locked.error_code = locked.error_detail = ""
        locked.attempts = 0
        locked.pages_done = locked.pages.count()
        locked.started_at = locked.finished_at = locked.deadline_at = locked.heartbeat_at = None
        locked.worker_id = ""
        locked.save()
        enqueue_job(locked)
        audit_record(action=AuditEntry.Action.RETRIED, job=locked, by=by)
        batch_job_reopened(locked)
        transaction.on_commit(lambda: progress.publish(locked, "queued"))
    locked.refresh_from_db()
    return locked


def job_delete(*, job: Job, by: Actor) -> None:
    """Delete the job, its results and files, and its document when no other job uses it.

    A worker still on the job notices at its next write (the row is gone) and stops; its open
    ``ws/jobs/<id>/`` sockets are closed (4404).
    """
    job_id, document = job.pk, job.document
    with transaction.atomic():
        # Locked, so that no worker stores a page (and its bytes) between the count and the delete.
        Job.objects.select_for_update().filter(pk=job_id).first()
        names = [name for files in job.pages.values_list("image", "thumbnail") for name in files if name]
        freed = ((job.pages.aggregate(total=Sum("stored_bytes"))["total"] or 0)
                 + (job.export_files.aggregate(total=Sum("size_bytes"))["total"] or 0))
        audit_record(action=AuditEntry.Action.DELETED, job=job, by=by)
        batch_ids = list(job.batch_members.values_list("batch_id", flat=True))
        job.delete()
        batch_job_removed(batch_ids)
        if not document.jobs.exists():
            # Empty for a file_url job's until its file is downloaded, and once retention purged it
            # (OCR_RETENTION_KEEP_RESULTS), which gave its bytes back then.
            if document.file:
                names.append(document.file.name)
                freed += document.size_bytes
            document.delete()
        stored_bytes_change(document.owner_id, -freed)
        transaction.on_commit(lambda: storage_delete(names, folder=f"pages/{job_id}"))
        transaction.on_commit(lambda: storage_delete_folder(f"{EXPORTS_FOLDER}/{job_id}"))
        transaction.on_commit(lambda: progress.sockets_close(progress.job_group(job_id), progress.CLOSE_JOB_DELETED))


def job_files_purge(*, job: Job, by: Actor) -> None:
    """Delete the job's page images and, once no other job still needs it, its original; keep the result
    (the pages' readings, corrections, edits) and built exports. Retention with OCR_RETENTION_KEEP_RESULTS.
    """
    with transaction.atomic():
        locked = Job.objects.select_for_update().filter(pk=job.pk, files_purged_at=None).first()
        if locked is None:
            return  # deleted or purged meanwhile
        names = [name for files in locked.pages.values_list("image", "thumbnail") for name in files if name]
        freed = locked.pages.aggregate(total=Sum("stored_bytes"))["total"] or 0
        locked.pages.update(image="", thumbnail="", stored_bytes=0)
        locked.files_purged_at = timezone.now()
        locked.save(update_fields=["files_purged_at"])
        document = locked.document
        if document.file and not document.jobs.filter(files_purged_at=None).exists():
            names.append(document.file.name)
            freed += document.size_bytes
            Document.objects.filter(pk=document.pk).update(file="")
        stored_bytes_change(locked.owner_id, -freed)
        audit_record(action=AuditEntry.Action.PURGED, job=locked, by=by)
        transaction.on_commit(lambda: storage_delete(names, folder=f"pages/{job.pk}"))


def job_requeue(*, job: Job) -> Job:
    """Queue an active job again (admin action for a job that looks stuck). Safe: the claim lets one task run it."""
    if job.status not in Job.ACTIVE_STATUSES:
        raise JobStateError(f"Only queued or running jobs can be requeued; this job is {job.status}.")
    with transaction.atomic():
        enqueue_job(job)
    job.refresh_from_db()
    return job


def job_requeue_stale() -> int:
    """Find abandoned work and queue it again; returns how many jobs were requeued.

    Run every minute by a django-q2 Schedule (migration 0002). Covers:
    * running jobs whose worker died: heartbeat older than the lease, with
      exponential backoff per attempt; failed with ``worker_lost`` once
      ``max_attempts`` is used up;
    * queued jobs, and running jobs between two slices, whose queue entry was
      lost (e.g. a Redis broker restarted), i.e. whose task is not waiting in
      the broker any more.
    """
    now = timezone.now()
    lease = timedelta(seconds=settings.OCR_LEASE_SECONDS)
    candidates = Job.objects.filter(
        Q(status=Job.Status.RUNNING, heartbeat_at__lt=now - lease)
        | (Q(status=Job.Status.QUEUED) | Q(status=Job.Status.RUNNING, heartbeat_at__isnull=True))
        & (Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=now - lease))
    )
    waiting: dict[str, set[str]] = {}
    requeued = 0
    for job in candidates:
        if job.status == Job.Status.RUNNING and job.heartbeat_at is not None:
            if _failed_for_lost_workers(job):
                continue
            if job.heartbeat_at > now - lease * 2 ** max(job.attempts - 1, 0):
                continue  # backoff: wait longer after each lost worker
        if job.cluster not in waiting:
            waiting[job.cluster] = waiting_task_ids(job.cluster)
        if job.queue_task_id and job.queue_task_id in waiting[job.cluster]:
            continue  # its task is still waiting for a free worker
        with transaction.atomic():
            enqueue_job(job)
        logger.info("Requeued job %s (%s, attempt %s)", job.pk, job.status, job.attempts)
        requeued += 1
    return requeued


def job_requeue_lost(*, alive) -> int:
    """Hand on at once the running jobs whose lease holder is gone, ``alive(worker_id)`` being False,
    instead of after their lease; returns how many. Called every few seconds by each qcluster's
    main process for the workers of its own host (``jobs.cluster_watch``).

    The lease is marked as run out, so the next claim counts the lost worker as an attempt
    (``job_claim``); dead workers' page claims go (helpers' too), so that no page waits for them.
    Pages they stored stay done.
    """
    dead_claims = [claim.pk for claim in PageClaim.objects.filter(job__status=Job.Status.RUNNING).only("worker_id")
                   if not alive(claim.worker_id)]
    PageClaim.objects.filter(pk__in=dead_claims).delete()  # their pages are free for the others at once
    handed_on = 0
    for job in Job.objects.filter(status=Job.Status.RUNNING).exclude(worker_id="").exclude(heartbeat_at=None):
        if alive(job.worker_id) or _failed_for_lost_workers(job):
            continue
        expired = timezone.now() - timedelta(seconds=settings.OCR_LEASE_SECONDS + 1)
        with transaction.atomic():
            if Job.objects.filter(pk=job.pk, worker_id=job.worker_id, status=Job.Status.RUNNING).update(
                    heartbeat_at=expired):
                enqueue_job(job)
        logger.warning("Worker %s of job %s is gone: the job is handed on (attempt %s)",
                       job.worker_id, job.pk, job.attempts)
        handed_on += 1
    return handed_on


def job_requeue_unstarted(*, cluster: str) -> int:
    """Queue again the waiting jobs of ``cluster`` whose task is not waiting in the broker: a pusher took
    it and its cluster ended before a worker started it (``jobs.cluster_watch``). Returns how many.

    Such a task would come back only after django-q2's ``retry``; queued twice, a job still runs
    once (``job_claim``).
    """
    waiting = waiting_task_ids(cluster)
    requeued = 0
    for job in Job.objects.filter(cluster=cluster).filter(
            Q(status=Job.Status.QUEUED) | Q(status=Job.Status.RUNNING, heartbeat_at__isnull=True)):
        if job.queue_task_id not in waiting:
            with transaction.atomic():
                enqueue_job(job)
            requeued += 1
    return requeued


def _failed_for_lost_workers(job: Job) -> bool:
    """Fail the job with ``worker_lost`` once its attempts are used up; True if it was."""
    if job.attempts < job.max_attempts:
        return False
    job_fail(job_id=job.pk, code="worker_lost",
             detail=f"The worker processing this job stopped responding {job.attempts} times.")
    return True
