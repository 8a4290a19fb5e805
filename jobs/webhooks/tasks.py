"""django-q2 entry points for webhooks: an attempt (by delivery row id) and the sweep; each calls one service."""

from __future__ import annotations

from jobs.webhooks.services import webhook_deliver, webhook_sweep


def deliver_webhook(delivery_pk: int) -> None:
    webhook_deliver(delivery_pk=delivery_pk)


def sweep_webhooks() -> int:
    return webhook_sweep()
