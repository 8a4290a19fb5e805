"""Job progress events for WebSocket clients: the worker's one way out to browsers.

Services call ``publish`` after a state change has committed (``transaction.on_commit``). Each
event goes to the job's group (``job-<id>``) and to its owner's group (``user-<id>``);
``jobs.consumers`` forwards them. Publishing is best effort: a channel-layer outage is logged
and swallowed, so it never fails or rolls back a job (as eScriptorium's notifier does).

Message: {"type": "job.event", "event": <EVENTS>, "job": job_summary(job), ...}
(``jobs.summary.job_summary``: the same job summary webhooks send)
page_done adds page_number, page_status, line_count, region_count and timings.
corrected (a reviewer's edit or undo, jobs.services.page_edits) adds page_number, correction_id, kind, undone.
"""

from __future__ import annotations

import logging
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
    """Send ``event`` to the job's and its owner's groups."""
    if event not in EVENTS:
        raise ValueError(f"unknown progress event {event!r}")  # a programming error, not an outage
    message = {"type": "job.event", "event": event, "job": job_summary(job), **payload}
    try:
        layer = get_channel_layer()
        if layer is None:  # no channel layer configured: nobody listens
            return
        for group in (job_group(job.id), user_group(job.owner_id)):
            async_to_sync(layer.group_send)(group, message)
    except Exception:  # noqa: BLE001 - progress is best effort by design
        logger.warning("Could not publish %s for job %s", event, job.id, exc_info=True)
