"""Reads: which jobs and pages a user may see, filtered for list views.

Everyone sees and acts on their own jobs. Other users' jobs follow Django's
model permissions, not ``is_staff``: ``jobs.view_job`` to see them,
``jobs.change_job`` to act on them (cancel, retry, delete, correct). A job
that is not visible raises ``DoesNotExist`` exactly like a missing one, so the
API answers 404 without telling whether the id exists.

Reads with more to them have their own modules: ``results`` (stored pages to
the corrected result and its exports) and ``review_queue``.
"""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict

from django.core.exceptions import ValidationError
from django.db.models import Func, IntegerField, OuterRef, QuerySet, Subquery

from jobs.models import Job, PageResult


class JobFilters(TypedDict, total=False):
    status: str
    pipeline: str
    created_after: datetime
    created_before: datetime


VIEW_ANY_JOB = "jobs.view_job"
CHANGE_ANY_JOB = "jobs.change_job"


def _jobs() -> QuerySet[Job]:
    # Every job's answer names the document and owner, and the owner's settings give its expires_at;
    # its options, the document type a person gave it.
    return Job.objects.select_related("document", "owner", "owner__ocr_settings", "fields_stage__document_type")


def _visible_jobs(user) -> QuerySet[Job]:
    return _jobs() if user.has_perm(VIEW_ANY_JOB) else _jobs().filter(owner=user)


def job_list_for_user(user, filters: JobFilters | None = None) -> QuerySet[Job]:
    filters = filters or {}
    jobs = _visible_jobs(user)
    if filters.get("status"):
        jobs = jobs.filter(status=filters["status"])
    if filters.get("pipeline"):
        jobs = jobs.filter(pipeline=filters["pipeline"])
    if filters.get("created_after"):
        jobs = jobs.filter(created_at__gte=filters["created_after"])
    if filters.get("created_before"):
        jobs = jobs.filter(created_at__lt=filters["created_before"])
    return jobs.order_by("-created_at")


def job_list_with_queue_positions(jobs: list[Job]) -> list[Job]:
    """``jobs`` (a page of a list), each queued one with its place counted in one statement for all.

    ``job_queue_position`` alone is one statement per job: 50 for a page of queued jobs.
    """
    queued = [job for job in jobs if job.status == Job.Status.QUEUED]
    if queued:
        ahead = Subquery(Job.objects.filter(
            status=Job.Status.QUEUED, cluster=OuterRef("cluster"), created_at__lt=OuterRef("created_at"),
        ).order_by().annotate(count=Func("pk", function="COUNT", output_field=IntegerField())).values("count"))
        counts = dict(Job.objects.filter(pk__in=[job.pk for job in queued]).annotate(ahead=ahead)
                      .values_list("pk", "ahead"))
        for job in queued:
            job.queued_ahead = counts.get(job.pk, 0)
    return jobs


def job_get_for_user(user, job_id, *, for_change: bool = False) -> Job:
    """The job if ``user`` may see it (``for_change``: act on it); raises Job.DoesNotExist otherwise
    (also for malformed ids)."""
    try:
        job = _jobs().get(pk=job_id)
    except (ValueError, TypeError, ValidationError, Job.DoesNotExist):  # ValidationError: not a UUID
        raise Job.DoesNotExist(f"No job {job_id!r}.") from None
    # The owner needs no permission: asked first, a user's permissions cost two statements (their
    # own and their groups'), a third of a status read's CPU and of every long-poll's set-up.
    if job.owner_id != user.pk and not user.has_perm(CHANGE_ANY_JOB if for_change else VIEW_ANY_JOB):
        raise Job.DoesNotExist(f"No job {job_id!r}.")
    return job


def job_queue_position(job: Job) -> int | None:
    """1-based place among queued jobs of the same cluster (oldest first); None unless queued.

    Counted from the index ``job_status_cluster``.
    """
    if job.status != Job.Status.QUEUED:
        return None
    if hasattr(job, "queued_ahead"):  # counted with the others of a list (job_list_with_queue_positions)
        return job.queued_ahead + 1
    ahead = Job.objects.filter(status=Job.Status.QUEUED, cluster=job.cluster, created_at__lt=job.created_at).count()
    return ahead + 1


def page_get_for_user(user, job_id, page_number: int, *, for_change: bool = False) -> PageResult:
    """A page result of a job ``user`` may see (``for_change``: correct); raises PageResult.DoesNotExist otherwise."""
    try:
        job = job_get_for_user(user, job_id, for_change=for_change)
    except Job.DoesNotExist:
        raise PageResult.DoesNotExist(f"No job {job_id!r}.") from None
    return job.pages.select_related("job").prefetch_related("corrections__corrected_by", "edits").get(page_number=page_number)


def pages_worst_first(user) -> QuerySet[PageResult]:
    """Succeeded pages of visible jobs, lowest mean line confidence first (review queue)."""
    return (
        PageResult.objects.filter(job__in=_visible_jobs(user), status=PageResult.Status.SUCCEEDED)
        .exclude(mean_confidence__isnull=True)
        .select_related("job", "job__document")
        .defer("raw", "normalized")  # a list of many pages shows none of their text
        .order_by("mean_confidence", "job_id", "page_number")
    )


def job_page_summaries(job: Job) -> list[dict]:
    """Finished pages of a job, in page order, as progress events describe them (WebSocket state, job page)."""
    return [
        {"page_number": number, "page_status": status, "line_count": lines, "region_count": regions}
        for number, status, lines, regions in job.pages.order_by("page_number").values_list(
            "page_number", "status", "line_count", "region_count"
        )
    ]
