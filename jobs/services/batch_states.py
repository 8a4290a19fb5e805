"""How a batch follows its jobs: settled when one ends, active again when one is retried.

Called inside the transaction that ends (requeues, deletes) a job, by ``jobs.services.processing`` and
``jobs.services.lifecycle``; so this module imports neither. A batch ends when its last job ends:
the row lock on the batch makes two jobs ending at once settle it one after the other (the second
waits for the first's commit, then sees both jobs final), so exactly one of them stores the batch's
status and queues its one webhook.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from jobs import progress
from jobs.models import Batch, Job
from jobs.selectors.batches import batch_final_status, batch_progress
from jobs.webhooks import webhook_schedule_for_batch


def batch_job_ended(job: Job) -> None:
    """In the transaction that ends ``job`` (finish, fail, cancel): settle each batch it belongs to."""
    for batch in Batch.objects.select_for_update().filter(members__job=job).order_by("pk"):
        batch_settle(batch)


def batch_job_removed(batch_ids: list) -> None:
    """In the transaction that deleted a job of these batches: the rest of them may be all that was left."""
    for batch in Batch.objects.select_for_update().filter(pk__in=batch_ids).order_by("pk"):
        batch_settle(batch)


def batch_job_reopened(job: Job) -> None:
    """In the transaction that queues ``job`` again (a retry): its ended batches are active again, and
    end (and notify) again when it does."""
    for batch in Batch.objects.select_for_update().filter(members__job=job).order_by("pk"):
        if batch.is_final and batch.status != Batch.Status.CANCELED:
            batch.status, batch.finished_at = Batch.Status.QUEUED, None
            batch.save(update_fields=["status", "finished_at"])
        transaction.on_commit(lambda batch=batch: progress.publish_batch(batch))


def batch_settle(batch: Batch) -> None:
    """With the batch locked (or not committed yet): end it if every job has ended; announce it either way."""
    if not batch.is_final:
        status = batch_final_status(batch, batch_progress(batch))
        if status is not None:
            batch.status, batch.finished_at = status, timezone.now()
            batch.save(update_fields=["status", "finished_at"])
            # robust: a webhook that cannot be queued is logged and never fails the job that ended the batch.
            transaction.on_commit(lambda: webhook_schedule_for_batch(batch=batch, event=f"batch.{batch.status}"),
                                  robust=True)
    transaction.on_commit(lambda: progress.publish_batch(batch))
