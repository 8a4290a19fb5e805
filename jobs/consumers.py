"""WebSocket consumers: authenticate, check access through a selector, join a group, forward.

Server -> client only; every message is JSON and carries the job's ``status``:

* ``{"event": "state", "status", "job": {...}, "pages": [...]}`` right after the
  handshake: ``ws/jobs/<id>/`` sends that job's, ``ws/jobs/`` one per active job
  of the user. ``pages`` lists finished pages (page_number, page_status,
  line_count, region_count).
* ``{"event": <jobs.progress.EVENTS>, "status", "job": {...}, ...}`` as the job
  changes; ``page_done`` adds page_number, page_status, line_count,
  region_count and timings (see ``jobs.progress``).

A socket for a job the user may not see, or without a user, is refused at the
handshake (HTTP 403): nobody learns whether the job exists.
"""

from __future__ import annotations

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from jobs import progress, selectors
from jobs.models import Job
from jobs.summary import job_summary


class JobConsumer(AsyncJsonWebsocketConsumer):
    """``ws/jobs/<id>/``: one job's state, then its events."""

    group: str | None = None

    async def connect(self):
        job_id = await _visible_job_id(self.scope.get("user"), self.scope["url_route"]["kwargs"]["job_id"])
        if job_id is None:
            await self.close()  # before accept(): the server answers the handshake with 403
            return
        # Join before reading the state: an event that lands in between is
        # queued behind the state message instead of being lost.
        self.group = progress.job_group(job_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send_json(await _job_state(job_id))

    async def disconnect(self, code):
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def job_event(self, message):
        await self.send_json(client_message(message))


class UserJobsConsumer(JobConsumer):
    """``ws/jobs/``: the state of the user's active jobs, then events of all their jobs."""

    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close()
            return
        self.group = progress.user_group(user.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        for state in await _active_job_states(user):
            await self.send_json(state)


def client_message(message: dict) -> dict:
    """A channel-layer event as the client sees it: without the routing ``type``, with the job's status on top."""
    body = {key: value for key, value in message.items() if key != "type"}
    body["status"] = message["job"]["status"]
    return body


@database_sync_to_async
def _visible_job_id(user, job_id) -> str | None:
    if user is None or not user.is_authenticated:
        return None
    try:
        return str(selectors.job_get_for_user(user, job_id).pk)
    except Job.DoesNotExist:
        return None


def _state(job: Job) -> dict:
    return {"event": "state", "status": job.status, "job": job_summary(job),
            "pages": selectors.job_page_summaries(job)}


@database_sync_to_async
def _job_state(job_id: str) -> dict:
    return _state(Job.objects.select_related("document").get(pk=job_id))


@database_sync_to_async
def _active_job_states(user) -> list[dict]:
    jobs = selectors.job_list_for_user(user).filter(owner=user, status__in=Job.ACTIVE_STATUSES)
    return [_state(job) for job in jobs]
