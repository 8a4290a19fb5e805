"""WebSocket consumers: authenticate, check access through a selector, join a group, forward.

Server -> client only; every message is JSON and carries the job's ``status``:

* ``{"event": "state", "status", "job": {...}, "pages": [...]}`` right after the
  handshake: ``ws/jobs/<id>/`` sends that job's, ``ws/jobs/`` one per active job
  of the user. ``pages`` lists finished pages (page_number, page_status,
  line_count, region_count).
* ``{"event": <jobs.progress.EVENTS>, "status", "job": {...}, ...}`` as the job
  changes; ``page_done`` adds page_number, page_status, line_count,
  region_count and timings (see ``jobs.progress``).
* on ``ws/jobs/`` only, ``{"event": "batch", "status", "batch": {...}}`` as a
  batch of the user's moves on (``jobs.progress.publish_batch``).

Frames a client sends are dropped unread: nothing here is asked of the client,
and parsing a frame (JSON, up to uvicorn's ``--ws-max-size``) would only spend
the event loop's time.

A socket for a job the user may not see, or without a user, is refused at the
handshake (HTTP 403): nobody learns whether the job exists. An open socket is
closed by the server with ``4401`` when the API token it opened with is replaced
(``jobs.services.accounts``) and, on ``ws/jobs/<id>/``, with ``4404`` when the
job is deleted (``jobs.services.lifecycle``); see ``jobs.progress.CLOSE_*``.
"""

from __future__ import annotations

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from rest_framework.authtoken.models import Token

from jobs import progress, selectors
from jobs.models import Job
from jobs.summary import job_summary


class JobConsumer(AsyncJsonWebsocketConsumer):
    """``ws/jobs/<id>/``: one job's state, then its events."""

    joined: tuple[str, ...] = ()

    async def connect(self):
        job_id = await _visible_job_id(self.scope.get("user"), self.scope["url_route"]["kwargs"]["job_id"])
        if job_id is None or not await self._join(progress.job_group(job_id)):
            await self.close()  # before accept(): the server answers the handshake with 403
            return
        await self.accept()
        state = await _job_state(job_id)
        if state is None:  # deleted since the check; its close event went out before this socket joined
            await self.close(code=progress.CLOSE_JOB_DELETED)
            return
        await self.send_json(state)

    async def _join(self, group: str) -> bool:
        """Join ``group`` and the group of the socket's API token; False if that token is gone by now.

        Joined before the state is read: an event that lands in between is queued behind
        the state message instead of being lost, and a close sent for the token from here
        on reaches this socket; one sent before is seen by the check after joining.
        """
        key = self.scope.get("api_token")
        self.joined = (group, progress.token_group(key)) if key else (group,)
        for name in self.joined:
            await self.channel_layer.group_add(name, self.channel_name)
        return key is None or await _token_exists(key)

    async def receive(self, text_data=None, bytes_data=None):
        """Drop the client's frame without decoding it (the JSON consumer's ``receive`` would parse it)."""

    async def disconnect(self, code):
        for name in self.joined:
            await self.channel_layer.group_discard(name, self.channel_name)

    async def job_event(self, message):
        await self.send_json(client_message(message))

    async def batch_event(self, message):
        await self.send_json({"event": message["event"], "status": message["batch"]["status"],
                              "batch": message["batch"]})

    async def socket_close(self, message):
        await self.close(code=message["code"])


class UserJobsConsumer(JobConsumer):
    """``ws/jobs/``: the state of the user's active jobs, then events of all their jobs."""

    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated or not await self._join(progress.user_group(user.pk)):
            await self.close()
            return
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
def _job_state(job_id: str) -> dict | None:
    job = Job.objects.select_related("document").filter(pk=job_id).first()
    return None if job is None else _state(job)


@database_sync_to_async
def _token_exists(key: str) -> bool:
    return Token.objects.filter(key=key).exists()


@database_sync_to_async
def _active_job_states(user) -> list[dict]:
    jobs = selectors.job_list_for_user(user).filter(owner=user, status__in=Job.ACTIVE_STATUSES)
    return [_state(job) for job in jobs]
