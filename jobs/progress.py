"""Job progress events for WebSocket clients: the worker's one way out to browsers; and closing sockets
whose credentials or job are gone (``sockets_close``).

Services call ``publish`` after a state change has committed (``transaction.on_commit``). Each
event goes to the job's group (``job-<id>``) and to its owner's group (``user-<id>``);
``jobs.consumers`` forwards them. Publishing is best effort: a channel-layer outage is logged
and swallowed, so it never fails or rolls back a job (as eScriptorium's notifier does).

Message: {"type": "job.event", "event": <EVENTS>, "job": job_summary(job), ...}
(``jobs.summary.job_summary``: the same job summary webhooks send)
page_done adds page_number, page_status, line_count, region_count and timings.
corrected (a reviewer's edit or undo, jobs.services.page_edits) adds page_number, correction_id, kind, undone.

A batch's progress goes to its owner's group only, each time it changes (a batch made, one of its jobs
ended, the batch ended): {"type": "batch.event", "event": "batch", "batch": batch_summary(batch)}.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from jobs.models import Batch, Job
from jobs.summary import batch_summary, job_summary

logger = logging.getLogger(__name__)

EVENTS = ("queued", "started", "page_done", "succeeded", "failed", "canceled", "corrected")


# WebSocket close codes (RFC 6455 leaves 4000-4999 to applications), as HTTP would say it.
CLOSE_TOKEN_REVOKED = 4401  # the API token the socket opened with was replaced
CLOSE_JOB_DELETED = 4404  # the socket's job was deleted


def job_group(job_id) -> str:
    return f"job-{job_id}"


def user_group(user_id) -> str:
    return f"user-{user_id}"


def token_group(key: str) -> str:
    """The sockets opened with API token ``key``; named by its hash, so the key never reaches the channel layer."""
    return f"token-{hashlib.sha256(key.encode()).hexdigest()[:32]}"


def publish(job: Job, event: str, **payload: Any) -> None:
    """Send ``event`` to the job's and its owner's groups."""
    if event not in EVENTS:
        raise ValueError(f"unknown progress event {event!r}")  # a programming error, not an outage
    message = {"type": "job.event", "event": event, "job": job_summary(job), **payload}
    _send([job_group(job.id), user_group(job.owner_id)], message, f"publish {event} for job {job.id}")


def publish_batch(batch: Batch) -> None:
    """Send the batch's progress to its owner's group."""
    message = {"type": "batch.event", "event": "batch", "batch": batch_summary(batch)}
    _send([user_group(batch.owner_id)], message, f"publish the progress of batch {batch.id}")


def sockets_close(group: str, code: int) -> None:
    """Close every socket in ``group`` with ``code`` (``CLOSE_*``); call it once the change has committed."""
    _send([group], {"type": "socket.close", "code": code}, f"send a close ({code}) to {group}")


def _send(groups: list[str], message: dict, what: str) -> None:
    try:
        layer = get_channel_layer()
        if layer is None:  # no channel layer configured: nobody listens
            return
        for group in groups:
            async_to_sync(layer.group_send)(group, message)
    # CancelledError too: Django's ASGI handler cancels the task of a request whose client went away, while the
    # view's thread goes on; a send from that thread is cancelled with it. The change it reports has committed:
    # raised on, it reached job_create's clean-up, which deleted the file of a job already queued.
    except (Exception, asyncio.CancelledError):  # noqa: BLE001 - best effort by design
        logger.warning("Could not %s", what, exc_info=True)
