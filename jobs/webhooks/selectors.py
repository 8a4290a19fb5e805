"""Reads of the webhook delivery log."""

from __future__ import annotations

from django.db.models import QuerySet

from jobs.models import WebhookDelivery
from jobs.selectors import job_get_for_user


def webhook_delivery_list_for_job(user, job_id) -> QuerySet[WebhookDelivery]:
    """Every attempt for a job ``user`` may see, oldest first; raises Job.DoesNotExist like ``job_get_for_user``."""
    return job_get_for_user(user, job_id).webhook_deliveries.order_by("created_at", "id")
