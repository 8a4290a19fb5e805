"""Retention: finished jobs are kept for their owner's number of days, then go.

The days are the user's own (``UserSettings.retention_days``, admin) where set, else OCR_RETENTION_DAYS;
0 keeps jobs. A job expires that long after it finished; active jobs do not expire. An expired job is
deleted through ``job_delete`` (files, results, exports and every row that follows the job), or with
OCR_RETENTION_KEEP_RESULTS loses only its original and page images (``job_files_purge``).
Run hourly by a django-q2 Schedule (migration 0015, ``jobs.tasks.retention_purge``) and by
``manage.py ocr_purge``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q, QuerySet, Sum
from django.utils import timezone

from jobs.models import Job, UserSettings
from jobs.services.audit import RETENTION
from jobs.services.lifecycle import job_delete, job_files_purge


def retention_days(own: UserSettings | None) -> int:
    """How many days a user's finished jobs are kept; 0: kept."""
    return settings.OCR_RETENTION_DAYS if own is None or own.retention_days is None else own.retention_days


def job_expires_at(job: Job) -> datetime | None:
    """When retention removes the job (with OCR_RETENTION_KEEP_RESULTS: its files); None while it is kept."""
    if job.finished_at is None or job.files_purged_at is not None:
        return None
    try:
        own = job.owner.ocr_settings
    except UserSettings.DoesNotExist:
        own = None
    days = retention_days(own)
    return job.finished_at + timedelta(days=days) if days else None


def expired_jobs(now: datetime | None = None) -> QuerySet[Job]:
    """The finished jobs past their owner's retention (one condition per distinct number of days)."""
    now = now or timezone.now()
    own = dict(UserSettings.objects.exclude(retention_days=None).values_list("user_id", "retention_days"))
    users_by_days: dict[int, list[int]] = defaultdict(list)
    for user_id, days in own.items():
        users_by_days[days].append(user_id)
    expired = Q(pk__in=[])
    if settings.OCR_RETENTION_DAYS:
        expired |= (Q(finished_at__lt=now - timedelta(days=settings.OCR_RETENTION_DAYS))
                    & ~Q(owner_id__in=list(own)))
    for days, users in users_by_days.items():
        if days:
            expired |= Q(owner_id__in=users, finished_at__lt=now - timedelta(days=days))
    jobs = Job.objects.filter(expired, status__in=Job.FINAL_STATUSES)
    if settings.OCR_RETENTION_KEEP_RESULTS:
        jobs = jobs.filter(files_purged_at=None)
    return jobs.select_related("document").order_by("finished_at")


@dataclass(frozen=True)
class Purge:
    """What a purge removed (or, dry, would remove): which jobs, and the stored bytes given back."""

    job_ids: list[str]
    freed_bytes: int
    keep_results: bool


def retention_purge(*, dry_run: bool = False) -> Purge:
    keep_results = settings.OCR_RETENTION_KEEP_RESULTS
    jobs = list(expired_jobs())
    going = {job.pk for job in jobs}
    freed, documents = 0, set()
    for job in jobs:
        freed += job.pages.aggregate(total=Sum("stored_bytes"))["total"] or 0
        if not keep_results:
            freed += job.export_files.aggregate(total=Sum("size_bytes"))["total"] or 0
        # A document goes with the last job that uses it (and still has it).
        others = job.document.jobs.exclude(pk__in=going)
        if keep_results:
            others = others.filter(files_purged_at=None)
        if job.document.file and job.document_id not in documents and not others.exists():
            documents.add(job.document_id)
            freed += job.document.size_bytes
        if not dry_run:
            (job_files_purge if keep_results else job_delete)(job=job, by=RETENTION)
    return Purge(job_ids=[str(job.pk) for job in jobs], freed_bytes=freed, keep_results=keep_results)
