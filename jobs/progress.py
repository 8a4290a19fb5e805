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
import os
import threading
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
        self.job_id = str(job_id)

    def __enter__(self) -> JobEvents:
        self.woken = _reader.subscribe(self.job_id)
        return self

    def __exit__(self, *exc_info) -> None:
        _reader.unsubscribe(self.job_id, self.woken)

    def wait(self, seconds: float) -> bool:
        """True when an event came within ``seconds``."""
        woken = self.woken.wait(seconds)
        self.woken.clear()
        return woken


class _EventReader:
    """One channel per process that every waiting request's job is subscribed to, read by one thread.

    With a channel per waiting request, each one polled the embedded default's channel table
    every 50 ms: 20 clients waiting cost the web process 0.2 CPU s per page read. The thread
    stops reading while nobody waits (its polling cost an idle server 4 % of a core).
    """

    IDLE = {"type": "job.wait.idle"}  # ends a read once the last waiter has left

    def __init__(self):
        self.lock = threading.Lock()
        self.waiting: dict[str, set[threading.Event]] = {}
        self.anyone_waiting = threading.Event()
        # A plain channel, not a process-specific one (new_channel): channels-lite reads those
        # with a background task bound to the thread that first asked.
        self.channel = f"job-wait.{uuid.uuid4().hex}"
        self.thread: threading.Thread | None = None

    def subscribe(self, job_id: str) -> threading.Event:
        woken = threading.Event()
        with self.lock:  # group changes in order: a discard never overtakes the add after it
            if self.thread is None:
                self.thread = threading.Thread(target=self._read, name="job-events", daemon=True)
                self.thread.start()
            if job_id not in self.waiting:
                async_to_sync(get_channel_layer().group_add)(job_group(job_id), self.channel)
            self.waiting.setdefault(job_id, set()).add(woken)
            self.anyone_waiting.set()
        return woken

    def unsubscribe(self, job_id: str, woken: threading.Event) -> None:
        with self.lock:
            waiting = self.waiting.get(job_id, set())
            waiting.discard(woken)
            if waiting:
                return
            self.waiting.pop(job_id, None)
            layer = get_channel_layer()
            async_to_sync(layer.group_discard)(job_group(job_id), self.channel)
            if not self.waiting:
                self.anyone_waiting.clear()
                async_to_sync(layer.send)(self.channel, self.IDLE)

    def _read(self) -> None:
        async def forever():
            layer = get_channel_layer()
            while True:
                self.anyone_waiting.wait()  # blocks this thread's own loop, which has nothing else to do
                try:
                    message = await layer.receive(self.channel)
                except Exception:  # noqa: BLE001 - a layer outage: waits fall back to their rechecks
                    logger.warning("Could not read job events", exc_info=True)
                    await asyncio.sleep(1)
                    continue
                with self.lock:
                    for woken in self.waiting.get(str(message.get("job", {}).get("id")), ()):
                        woken.set()

        asyncio.run(forever())


_reader = _EventReader()


def _new_reader_after_fork() -> None:
    global _reader
    _reader = _EventReader()  # the parent's reading thread does not exist here


os.register_at_fork(after_in_child=_new_reader_after_fork)
