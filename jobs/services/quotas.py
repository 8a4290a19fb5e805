"""Per-user quotas, checked when a job is created: pages per day and stored bytes."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db.models import Sum
from django.utils import timezone

from jobs.errors import QuotaExceeded
from jobs.models import Document, Job, UserSettings


def quota_check(*, owner, pages: int, size_bytes: int) -> None:
    """Raise ``QuotaExceeded`` when this submission would take ``owner`` over a quota.

    Call it inside the transaction that creates the job, after the owner's row
    is locked, so that concurrent submissions cannot both squeeze under it.
    """
    own = UserSettings.objects.filter(user=owner).values("max_pages_per_day", "max_storage_bytes").first() or {}
    pages_limit = _limit(own.get("max_pages_per_day"), settings.OCR_QUOTA_PAGES_PER_DAY)
    if pages_limit:
        since = timezone.now() - timedelta(days=1)
        used = Job.objects.filter(owner=owner, created_at__gte=since).aggregate(n=Sum("pages_total"))["n"] or 0
        if used + pages > pages_limit:
            raise QuotaExceeded(f"This would make {used + pages} pages in 24 hours; your quota is {pages_limit}. "
                                "Try again later or ask an administrator for more.")
    storage_limit = _limit(own.get("max_storage_bytes"), settings.OCR_QUOTA_STORAGE_BYTES)
    if storage_limit:
        stored = Document.objects.filter(owner=owner).aggregate(n=Sum("size_bytes"))["n"] or 0
        if stored + size_bytes > storage_limit:
            raise QuotaExceeded(f"This upload would make {stored + size_bytes} stored bytes; your quota is "
                                f"{storage_limit}. Delete old jobs to make room.")


def _limit(own: int | None, default: int) -> int:
    return default if own is None else own
