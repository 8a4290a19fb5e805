"""Reads of batches: which a user may see (the jobs' rule, ``jobs.selectors``), and where each stands."""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db.models import Count, Q, QuerySet

from jobs.models import Batch, Job
from jobs.selectors import CHANGE_ANY_JOB, VIEW_ANY_JOB


@dataclass(frozen=True)
class BatchProgress:
    """Where a batch stands: its status as clients see it and how many of its jobs have ended."""

    status: str
    jobs_done: int
    jobs_total: int
    jobs_succeeded: int


def batch_list_for_user(user) -> QuerySet[Batch]:
    batches = Batch.objects.all() if user.has_perm(VIEW_ANY_JOB) else Batch.objects.filter(owner=user)
    return batches.order_by("-created_at")


def batch_get_for_user(user, batch_id, *, for_change: bool = False) -> Batch:
    """The batch if ``user`` may see it (change it, with ``for_change``); raises Batch.DoesNotExist otherwise,
    a malformed id included."""
    try:
        batch = Batch.objects.get(pk=batch_id)
    except (ValueError, TypeError, ValidationError, Batch.DoesNotExist):  # ValidationError: not a UUID
        raise Batch.DoesNotExist(f"No batch {batch_id!r}.") from None
    if batch.owner_id != user.pk and not user.has_perm(CHANGE_ANY_JOB if for_change else VIEW_ANY_JOB):
        raise Batch.DoesNotExist(f"No batch {batch_id!r}.")
    return batch


def batch_jobs(batch: Batch) -> QuerySet[Job]:
    """The batch's jobs in member order, with their documents."""
    return batch.jobs.select_related("document").order_by("batch_members__id")


def batch_progress(batch: Batch) -> BatchProgress:
    """One aggregate over the batch's jobs. A final batch keeps its stored status; an active one is
    ``running`` once any of its jobs has left the queue."""
    counts = batch.jobs.aggregate(
        total=Count("pk"),
        done=Count("pk", filter=Q(status__in=Job.FINAL_STATUSES)),
        succeeded=Count("pk", filter=Q(status=Job.Status.SUCCEEDED)),
        queued=Count("pk", filter=Q(status=Job.Status.QUEUED)),
    )
    status = batch.status
    if not batch.is_final and counts["queued"] < counts["total"]:
        status = Batch.Status.RUNNING
    return BatchProgress(status=status, jobs_done=counts["done"], jobs_total=counts["total"],
                         jobs_succeeded=counts["succeeded"])


def batch_final_status(batch: Batch, progress: BatchProgress) -> str | None:
    """The status the batch ends with once every job has ended; None while some are active.

    All succeeded and no member refused: succeeded. None succeeded (or no job at all): failed.
    Otherwise partial: some succeeded while others failed, were canceled or were refused as members.
    """
    if progress.jobs_done < progress.jobs_total:
        return None
    if progress.jobs_succeeded == 0:
        return Batch.Status.FAILED
    if progress.jobs_succeeded == progress.jobs_total and not batch.errors:
        return Batch.Status.SUCCEEDED
    return Batch.Status.PARTIAL
