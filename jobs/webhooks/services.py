"""Webhook deliveries: schedule one per job (or batch) event, send it signed, retry with backoff.

Everything here runs on the django-q2 cluster, never in a request or inside the
OCR task's page loop::

    job_finish / job_fail --on_commit--> webhook_schedule_for_job
        attempt 1 row (pending) + a queued ``deliver_webhook`` task
    a batch's end (jobs.services.batches) --on_commit--> webhook_schedule_for_batch: the same
    deliver_webhook --> webhook_deliver: claim, URL guard, signed POST, record
        2xx                              -> delivered
        connection error, time-out,
        3xx/4xx/5xx, unresolvable host   -> failed; attempt n+1 (pending) due after
                                            BACKOFF x 2^(n-1) s, until MAX_ATTEMPTS
        address refused by the URL guard -> failed, no retry (policy, not an outage)

Waiting for a retry holds no worker: the next attempt is a django-q2 ``Schedule``
of type ONCE, which the cluster's scheduler turns into a task once due. The
scheduler looks every ~30 s, so that is the resolution of the backoff.

A crash can lose a step: the worker dies after the job's commit but before its
delivery row exists, or the queue push after the row's commit fails (Redis
down). ``webhook_sweep``, every few minutes on the default cluster, schedules
the missing rows and queues attempts nobody took.

Safe to run twice (django-q2 delivers at least once): the delivery id is derived
from the job's finish, ``(delivery_id, attempt)`` is unique, and an attempt is
claimed by a conditional UPDATE before anything is sent.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone
from django_q.models import Schedule
from django_q.tasks import async_task, schedule

from jobs.errors import UrlNotAllowed, UrlTimedOut
from jobs.models import Batch, Job, UserSettings, WebhookDelivery
from jobs import urlguard
from jobs.webhooks.payloads import batch_event_payload, job_event_payload
from jobs.webhooks.signing import signature_header
from ocr_engine.errors import OcrError

logger = logging.getLogger(__name__)

DELIVER_TASK = "jobs.webhooks.tasks.deliver_webhook"
USER_AGENT = "ocr-platform-webhooks/1"


@dataclass(frozen=True)
class AttemptOutcome:
    delivered: bool
    response_status: int | None = None
    error: str = ""
    retry: bool = True  # False: retrying cannot help (the URL is refused by policy)


def webhook_schedule_for_job(*, job: Job, event: str) -> WebhookDelivery | None:
    """Queue the first attempt at notifying ``job.webhook_url`` of ``event``; None when the job has no URL.

    Call it after the job's final state has committed. Calling it again for the
    same finish returns the existing delivery and sends nothing more; a job
    that is retried and finishes again gets a new delivery.
    """
    if not job.webhook_url:
        return None
    return _schedule(job, event, payload=job_event_payload, about={"job": job})


def webhook_schedule_for_batch(*, batch: Batch, event: str) -> WebhookDelivery | None:
    """``webhook_schedule_for_job`` for a batch's end: once per end, to ``batch.webhook_url``."""
    if not batch.webhook_url:
        return None
    return _schedule(batch, event, payload=batch_event_payload, about={"batch": batch})


def _schedule(row: Job | Batch, event: str, *, payload, about: dict) -> WebhookDelivery:
    event = WebhookDelivery.Event(event)
    # Same row + event + finish time -> same id, whoever calls and how often.
    finished = row.finished_at.isoformat() if row.finished_at else ""
    delivery_id = uuid.uuid5(row.pk, f"{event}:{finished}")
    now = timezone.now()
    with transaction.atomic():
        delivery, created = WebhookDelivery.objects.get_or_create(
            delivery_id=delivery_id,
            attempt=1,
            defaults={
                **about,
                "event": event,
                "url": row.webhook_url,
                "next_attempt_at": now,
                "payload": payload(row, event=event, delivery_id=delivery_id, timestamp=row.finished_at or now),
            },
        )
        if created:
            _enqueue(delivery.pk)
    return delivery


def webhook_deliver(*, delivery_pk: int) -> WebhookDelivery | None:
    """Make one attempt; returns the recorded row, or None when this attempt is not (any more) ours to make."""
    now = timezone.now()
    # A conditional UPDATE, so of two runs of one task only one sends. An
    # attempt claimed longer ago than Q_TIMEOUT belonged to a worker that was
    # killed mid-request (django-q2 kills tasks at Q_TIMEOUT): take it over.
    claimed = (
        WebhookDelivery.objects.filter(pk=delivery_pk, status=WebhookDelivery.Status.PENDING)
        .filter(Q(attempted_at__isnull=True) | Q(attempted_at__lt=now - timedelta(seconds=settings.Q_TIMEOUT)))
        .update(attempted_at=now)
    )
    if not claimed:
        return None
    delivery = WebhookDelivery.objects.get(pk=delivery_pk)
    outcome = _send(delivery)
    return _record(delivery, outcome)


SWEEP_GRACE = timedelta(minutes=5)  # longer than a finish takes to reach its delivery's queue entry
SWEEP_HORIZON = timedelta(days=1)  # older losses are left alone: the receiver has moved on


def webhook_sweep(*, grace: timedelta = SWEEP_GRACE, horizon: timedelta = SWEEP_HORIZON) -> int:
    """Schedule deliveries a crash lost and queue attempts nobody took; returns how many.

    Both steps may repeat what a slow but living worker is about to do: the
    deterministic delivery id and the claim in ``webhook_deliver`` make that harmless.
    """
    now = timezone.now()
    window = (now - horizon, now - grace)
    lost = (
        Job.objects.filter(status__in=[Job.Status.SUCCEEDED, Job.Status.FAILED], finished_at__range=window)
        .exclude(webhook_url="")
        .exclude(Exists(WebhookDelivery.objects.filter(job=OuterRef("pk"), created_at__gte=OuterRef("finished_at"))))
    )
    count = 0
    for job in lost:
        webhook_schedule_for_job(job=job, event=f"job.{job.status}")
        count += 1
    lost_batches = (
        Batch.objects.filter(status__in=[Batch.Status.SUCCEEDED, Batch.Status.FAILED, Batch.Status.PARTIAL],
                             finished_at__range=window)
        .exclude(webhook_url="")
        .exclude(Exists(WebhookDelivery.objects.filter(batch=OuterRef("pk"), created_at__gte=OuterRef("finished_at"))))
    )
    for batch in lost_batches:
        webhook_schedule_for_batch(batch=batch, event=f"batch.{batch.status}")
        count += 1
    untaken = WebhookDelivery.objects.filter(status=WebhookDelivery.Status.PENDING, next_attempt_at__range=window).filter(
        Q(attempted_at__isnull=True) | Q(attempted_at__lt=now - timedelta(seconds=settings.Q_TIMEOUT))
    )
    for delivery_pk in untaken.values_list("pk", flat=True):
        _enqueue(delivery_pk)
        count += 1
    if count:
        logger.warning("Webhook sweep: %d lost delivery step(s) queued again", count)
    return count


def _enqueue(delivery_pk: int) -> None:
    # On the default cluster, which always runs and also fires the retry
    # schedules; with a GPU cluster it is free of OCR work too.
    push = partial(async_task, DELIVER_TASK, delivery_pk, cluster=settings.Q_CLUSTER["name"])
    if settings.Q_BROKER == "orm":
        push()  # the queue entry commits with the delivery row, or neither does
    else:
        transaction.on_commit(push)  # a worker must not receive the id of a row it cannot see yet


def _send(delivery: WebhookDelivery) -> AttemptOutcome:
    # The owner's current secret, so a rotated secret applies to pending retries too.
    owner_id = delivery.job.owner_id if delivery.job_id else delivery.batch.owner_id
    secret = UserSettings.objects.get_or_create(user_id=owner_id)[0].webhook_secret
    body = json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": USER_AGENT,
        "X-OCR-Event": delivery.event,
        "X-OCR-Delivery": str(delivery.delivery_id),
        "X-OCR-Signature": signature_header(secret=secret, body=body, timestamp=int(time.time())),
    }
    # Checked (and the address pinned) at every attempt: the host's DNS may have
    # changed since the job was created. Redirects are not followed: re-POSTing
    # across hosts is ill-defined. The receiver's body is never read. Errors are
    # the fetcher's coarse words: the delivery log is visible to the job's owner.
    timeout = settings.OCR_WEBHOOK_TIMEOUT_SECONDS
    try:
        reply = urlguard.request("POST", delivery.url, body=body, headers=headers,
                                 deadline=time.monotonic() + timeout)
    except UrlTimedOut:
        return AttemptOutcome(delivered=False, error=f"No response within {timeout:g} s.")
    except UrlNotAllowed as exc:
        return AttemptOutcome(delivered=False, error=f"{exc.code}: {exc.message}", retry=False)
    except OcrError as exc:  # url_fetch_failed: unresolvable, refused, timed out: may pass
        return AttemptOutcome(delivered=False, error=exc.message)
    if 200 <= reply.status < 300:
        return AttemptOutcome(delivered=True, response_status=reply.status)
    return AttemptOutcome(delivered=False, response_status=reply.status, error=f"HTTP {reply.status}")


def _record(delivery: WebhookDelivery, outcome: AttemptOutcome) -> WebhookDelivery | None:
    """Store the attempt's outcome and, after a retryable failure, schedule the next attempt."""
    now = timezone.now()
    with transaction.atomic():
        # Still ours? (not taken over after a stall longer than Q_TIMEOUT)
        held = WebhookDelivery.objects.select_for_update().filter(
            pk=delivery.pk, status=WebhookDelivery.Status.PENDING, attempted_at=delivery.attempted_at
        )
        if not held.exists():
            return None
        delivery.response_status = outcome.response_status
        delivery.error = outcome.error
        delivery.next_attempt_at = None
        if outcome.delivered:
            delivery.status, delivery.delivered_at = WebhookDelivery.Status.DELIVERED, now
        else:
            delivery.status = WebhookDelivery.Status.FAILED
            if outcome.retry and delivery.attempt < settings.OCR_WEBHOOK_MAX_ATTEMPTS:
                delivery.next_attempt_at = now + timedelta(
                    seconds=settings.OCR_WEBHOOK_BACKOFF_SECONDS * 2 ** (delivery.attempt - 1)
                )
                _schedule_attempt(delivery, number=delivery.attempt + 1, due=delivery.next_attempt_at)
        delivery.save(update_fields=["status", "response_status", "error", "delivered_at", "next_attempt_at"])
    log = logger.info if outcome.delivered else logger.warning
    log("Webhook %s attempt %s for %s -> %s: %s", delivery.event, delivery.attempt,
        f"job {delivery.job_id}" if delivery.job_id else f"batch {delivery.batch_id}", delivery.url,
        delivery.status if outcome.delivered else outcome.error)
    return delivery


def _schedule_attempt(previous: WebhookDelivery, *, number: int, due) -> None:
    retry, created = WebhookDelivery.objects.get_or_create(
        delivery_id=previous.delivery_id,
        attempt=number,
        defaults={"job_id": previous.job_id, "batch_id": previous.batch_id, "event": previous.event,
                  "url": previous.url, "payload": previous.payload, "next_attempt_at": due},
    )
    if created:
        # repeats=-1 on a ONCE schedule: django-q2 deletes it after it fires.
        schedule(DELIVER_TASK, retry.pk, name=f"webhook-delivery-{retry.pk}", schedule_type=Schedule.ONCE,
                 next_run=due, repeats=-1)
