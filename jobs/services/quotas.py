"""Per-user quotas, checked when a job is created: pages per day and stored bytes (documents, page images, exports),
and ``file_url`` jobs queued or running at once (their pages are not known until a worker has the file)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db.models import F, Sum
from django.utils import timezone

from jobs.errors import QuotaExceeded
from jobs.models import Job, StorageUsage, UserSettings

QUOTA_DAY = timedelta(days=1)  # the window of the pages-per-day quota


@dataclass(frozen=True)
class Quotas:
    """A user's limits (0: none): their own where set in ``UserSettings``, else the site's (OCR_QUOTA_*)."""

    pages_per_day: int
    storage_bytes: int
    queued_url_jobs: int

    @classmethod
    def of(cls, own: UserSettings | None) -> Quotas:
        """From the user's ``UserSettings`` (None when they have none)."""
        return cls(pages_per_day=_limit(own and own.max_pages_per_day, settings.OCR_QUOTA_PAGES_PER_DAY),
                   storage_bytes=_limit(own and own.max_storage_bytes, settings.OCR_QUOTA_STORAGE_BYTES),
                   queued_url_jobs=_limit(own and own.max_queued_url_jobs, settings.OCR_MAX_QUEUED_URL_JOBS))


@dataclass(frozen=True)
class Usage:
    """What a user has used of their quotas: pages submitted in the last ``QUOTA_DAY``, bytes stored."""

    pages_last_day: int
    stored_bytes: int

    @classmethod
    def of(cls, owner) -> Usage:
        pages = (Job.objects.filter(owner=owner, created_at__gte=timezone.now() - QUOTA_DAY)
                 .aggregate(pages=Sum("pages_total"))["pages"])
        stored = StorageUsage.objects.filter(user=owner).values_list("stored_bytes", flat=True).first()
        return cls(pages_last_day=pages or 0, stored_bytes=stored or 0)


def quota_check(*, quotas: Quotas, usage: Usage, pages: int, size_bytes: int) -> None:
    """Raise ``QuotaExceeded`` when this submission would take its owner over ``quotas``.

    Read ``usage`` inside the transaction that creates the job, after the owner's row
    is locked, so that concurrent submissions cannot both squeeze under it.
    """
    if quotas.pages_per_day and usage.pages_last_day + pages > quotas.pages_per_day:
        raise QuotaExceeded(f"This would make {usage.pages_last_day + pages} pages in 24 hours; your quota is "
                            f"{quotas.pages_per_day}. Try again later or ask an administrator for more.")
    if quotas.storage_bytes and usage.stored_bytes + size_bytes > quotas.storage_bytes:
        raise QuotaExceeded(f"This upload would make {usage.stored_bytes + size_bytes} stored bytes; your quota "
                            f"is {quotas.storage_bytes}. Delete old jobs to make room.")


def queued_url_jobs_check(*, owner, quotas: Quotas) -> None:
    """Raise ``QuotaExceeded`` when ``owner`` already has ``quotas.queued_url_jobs`` file_url jobs not finished.

    Called, like ``quota_check``, inside the transaction that creates the job, after the owner's row is locked.
    """
    if not quotas.queued_url_jobs:
        return
    waiting = (Job.objects.filter(owner=owner, status__in=Job.ACTIVE_STATUSES)
               .exclude(document__source_url="").count())
    if waiting >= quotas.queued_url_jobs:
        raise QuotaExceeded(f"You have {waiting} file_url jobs queued or running; the limit is "
                            f"{quotas.queued_url_jobs}. Submit more once some have finished.")


def stored_bytes_change(owner_id: int, by: int) -> None:
    """Add ``by`` (negative: take away) to the owner's ``StorageUsage``, in the caller's transaction.

    Every document, page image (with its thumbnail) and built export stored or deleted goes through
    here, in the transaction that inserts or deletes its row, so the total is the sum of the owner's
    files at every commit. The row is made on the owner's first file; the addition is done by the
    database (``F``), so two transactions never lose each other's change.
    """
    StorageUsage.objects.get_or_create(user_id=owner_id)
    StorageUsage.objects.filter(user_id=owner_id).update(stored_bytes=F("stored_bytes") + by)


def _limit(own: int | None, default: int) -> int:
    return default if own is None else own
