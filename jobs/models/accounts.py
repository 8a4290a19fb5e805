"""Per-user state: settings and quotas, API tokens as the admin shows them, storage in use."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from rest_framework.authtoken.models import TokenProxy


def new_webhook_secret() -> str:
    return secrets.token_hex(32)


class UserSettings(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ocr_settings")
    default_webhook_url = models.URLField(max_length=2000, blank=True)
    webhook_secret = models.CharField(max_length=128, default=new_webhook_secret)
    # Quotas; empty: the site's default (OCR_QUOTA_*), 0: no limit.
    max_pages_per_day = models.PositiveIntegerField(null=True, blank=True, help_text=(
        "Pages this user may submit in any 24 hours. Empty: the site default; 0: no limit."))
    max_storage_bytes = models.PositiveBigIntegerField(null=True, blank=True, help_text=(
        "Bytes this user may keep stored: documents, page images, built exports. Empty: the site default; "
        "0: no limit."))
    max_queued_url_jobs = models.PositiveIntegerField(null=True, blank=True, help_text=(
        "file_url jobs this user may have queued or running at once. Empty: the site default "
        "(OCR_MAX_QUEUED_URL_JOBS); 0: no limit."))
    retention_days = models.PositiveIntegerField(null=True, blank=True, help_text=(
        "Days this user's finished jobs are kept. Empty: the site default (OCR_RETENTION_DAYS); 0: kept."))

    class Meta:
        verbose_name_plural = "user settings"

    def __str__(self) -> str:
        return f"settings of {self.user}"


class ApiToken(TokenProxy):
    """A user's API token as the admin (``jobs.admin.ApiTokenAdmin``) shows it: by the start of its key.

    DRF's tokens are named by their whole key (``str(token)``), and the admin names objects that way on
    every page (titles, breadcrumbs, history, messages, its log), so anyone who may view tokens could act
    as their owners. DRF's ``TokenProxy`` keeps the key out of the admin's URLs (its pk is the user's id).
    """

    SHOWN_CHARACTERS = 8  # of 40 hex digits: 128 bits stay unknown

    class Meta:
        proxy = True
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{(self.key or '')[:self.SHOWN_CHARACTERS]}…"


class StorageUsage(models.Model):
    """The bytes a user keeps stored (documents, page images and thumbnails, built exports), changed with
    each of them stored or deleted.

    The storage quota reads this one row inside the submission's write transaction: summing
    every document there took 1.5 ms at 10,000 documents and 12 ms at 100,000, with the
    database's write lock held. ``jobs.services.quotas.stored_bytes_change`` keeps it.
    """

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True,
                                related_name="ocr_storage_usage")
    stored_bytes = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"storage of {self.user}"
