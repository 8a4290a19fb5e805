"""Job progress events for WebSocket clients: the worker's one way out to browsers.

Services call ``publish`` after a state change has committed. Each event goes
to the job's group (``job-<id>``) and to its owner's group (``user-<id>``);
``jobs.consumers`` forwards them. Publishing is best effort: a channel-layer
outage is logged and swallowed, so it never fails or rolls back a job.

Message: {"type": "job.event", "event": <EVENTS>, "job": job_summary(job), ...}
(``jobs.summary.job_summary``: the same job summary webhooks send)
page_done adds page_number, page_status, line_count, region_count and timings.
corrected (a reviewer's edit or undo, jobs.services.page_edits) adds page_number, correction_id, kind, undone.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from jobs.models import Job
from jobs.summary import job_summary

logger = logging.getLogger(__name__)

EVENTS = ("queued", "started", "page_done", "succeeded", "failed", "canceled", "corrected")


def job_group(job_id) -> str:
    return f"job-{job_id}"


def user_group(user_id) -> str:
    return f"user-{user_id}"


def publish(job: Job, event: str, **payload: Any) -> None:
    if event not in EVENTS:
        raise ValueError(f"unknown progress event {event!r}")  # a programming error, not an outage
    try:
        message = {"type": "job.event", "event": event, "job": job_summary(job), **payload}
        layer = get_channel_layer()
        if layer is None:
            return
        send = async_to_sync(layer.group_send)
        send(job_group(job.id), message)
        send(user_group(job.owner_id), message)
    except Exception:  # noqa: BLE001 - progress is best effort by design
        logger.warning("Could not publish %s for job %s", event, job.id, exc_info=True)


class JobEvents:
    """A subscription to one job's events for a caller that waits on a thread (``GET /jobs/{id}?wait=``).

    Subscribe before reading the job's state, so an event sent in between still wakes the wait.
    """

    def __init__(self, job_id):
        self.layer = get_channel_layer()
        self.group = job_group(job_id)

    def __enter__(self) -> JobEvents:
        # A plain channel, not a process-specific one (new_channel): channels-lite reads those with a
        # background task that would inherit this request's thread, and stall once the request is gone.
        self.channel = f"job-wait.{uuid.uuid4().hex}"
        async_to_sync(self.layer.group_add)(self.group, self.channel)
        return self

    def __exit__(self, *exc_info) -> None:
        async_to_sync(self.layer.group_discard)(self.group, self.channel)

    def wait(self, seconds: float) -> bool:
        """True when an event came within ``seconds``."""
        async def receive() -> bool:
            try:
                await asyncio.wait_for(self.layer.receive(self.channel), seconds)
            except asyncio.TimeoutError:
                return False
            return True

        return async_to_sync(receive)()
