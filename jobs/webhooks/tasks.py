"""django-q2 entry point for webhook attempts: takes a delivery row id, calls one service."""

from __future__ import annotations

from jobs.webhooks.services import webhook_deliver


def deliver_webhook(delivery_pk: int) -> None:
    webhook_deliver(delivery_pk=delivery_pk)
