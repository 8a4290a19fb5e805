"""Job progress events for WebSocket clients: the worker's one way out to browsers.

Services call ``publish`` after a state change has committed. Each event goes
to the job's group (``job-<id>``) and to its owner's group (``user-<id>``);
``jobs.consumers`` forwards them. Publishing is best effort: a channel-layer
outage is logged and swallowed, so it never fails or rolls back a job.
``publish`` only queues the event: one thread per process sends them, in the
order they were published (``flush`` waits until they are out).

Message: {"type": "job.event", "event": <EVENTS>, "job": job_summary(job), ...}
(``jobs.summary.job_summary``: the same job summary webhooks send)
page_done adds page_number, page_status, line_count, region_count and timings.
corrected (a reviewer's edit or undo, jobs.services.page_edits) adds page_number, correction_id, kind, undone.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
import os
import threading
from typing import Any

from channels.layers import get_channel_layer
from django.apps import apps
from django.db import connection
from django.utils import timezone

from jobs import waits
from jobs.models import Job
from jobs.sql import placeholders, quoted_columns, quoted_table, thread_read
from jobs.summary import job_summary

logger = logging.getLogger(__name__)

EVENTS = ("queued", "started", "page_done", "succeeded", "failed", "canceled", "corrected")


def job_group(job_id) -> str:
    return f"job-{job_id}"


def user_group(user_id) -> str:
    return f"user-{user_id}"


def publish(job: Job, event: str, **payload: Any) -> None:
    """Queue ``event`` for the job's and its owner's groups; this process's sender thread sends it."""
    if event not in EVENTS:
        raise ValueError(f"unknown progress event {event!r}")  # a programming error, not an outage
    message = {"type": "job.event", "event": event, "job": job_summary(job), **payload}
    _sender.put((job_group(job.id), user_group(job.owner_id)), message)
    if event in Job.FINAL_STATUSES:
        waits.announce_job_end()  # held ``GET /jobs/{id}?wait=`` requests look at once


def flush(timeout: float = 5.0) -> bool:
    """Wait until every event this process published has been handed to the channel layer (or dropped
    after a logged failure); False when ``timeout`` seconds passed first."""
    return _sender.flush(timeout)


class _Sender:
    """One thread per process that sends published events through the channel layer, oldest first.

    Sent from the caller's thread, an event cost a submit 2-5 ms: an event-loop hop per group and,
    on the embedded default, the layer's queries, while the request held its web process. The
    thread keeps one event loop for its whole life (a loop per send was half of that cost).
    """

    MAX_WAITING = 10_000  # events held while the layer is slow or down; newer ones are dropped

    def __init__(self):
        self.changed = threading.Condition()
        self.outbox: collections.deque = collections.deque()
        self.sending = 0  # events taken from the outbox and not sent yet
        self.thread: threading.Thread | None = None

    def put(self, groups: tuple[str, ...], message: dict) -> None:
        with self.changed:
            if len(self.outbox) >= self.MAX_WAITING:
                logger.warning("Dropped %s for job %s: %d events wait for the channel layer",
                               message["event"], message["job"]["id"], len(self.outbox))
                return
            self.outbox.append((groups, message))
            if self.thread is None:
                self.thread = threading.Thread(target=self._run, name="job-events-out", daemon=True)
                self.thread.start()
            self.changed.notify_all()

    def flush(self, timeout: float) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: not self.outbox and not self.sending, timeout)

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        while True:
            with self.changed:
                self.changed.wait_for(lambda: self.outbox)
                batch = list(self.outbox)
                self.outbox.clear()
                self.sending = len(batch)
            listened = _listened({group for groups, _ in batch for group in groups})
            batch = [(tuple(group for group in groups if group in listened), message) for groups, message in batch]
            loop.run_until_complete(self._send(batch))
            with self.changed:
                self.sending = 0
                self.changed.notify_all()

    @staticmethod
    async def _send(batch: list[tuple[tuple[str, ...], dict]]) -> None:
        for groups, message in batch:
            try:
                layer = get_channel_layer()
                if layer is None:  # no channel layer configured: nobody listens
                    continue
                for group in groups:
                    await layer.group_send(group, message)
            except Exception:  # noqa: BLE001 - progress is best effort by design
                logger.warning("Could not publish %s for job %s", message["event"], message["job"]["id"],
                               exc_info=True)


def _listened(groups: set[str]) -> set[str]:
    """Those of ``groups`` that someone may listen to.

    On the embedded default, one query of channels-lite's membership table, from this thread:
    the layer's own ``group_send`` looks each group up in a thread hand-off, and most events
    (of jobs nobody watches) go to nobody. The statement is fixed SQL (``_listened_sql``):
    the ORM built it anew for every event, 0.56 ms of CPU against 0.14 ms. Other layers
    (Redis) look up their groups cheaply themselves: all of ``groups``.
    """
    if not apps.is_installed("channels_lite"):
        return groups
    from channels_lite.layers.core import SQLiteChannelLayer  # its models exist where it is installed

    if not isinstance(get_channel_layer(), SQLiteChannelLayer):
        return groups
    names = sorted(groups)
    try:
        rows = thread_read(_listened_sql(connection.vendor, len(names)),
                           [*names, connection.ops.adapt_datetimefield_value(timezone.now())])
    except Exception:  # noqa: BLE001 - best effort, as sending is: let the layer try every group
        logger.warning("Could not look up who listens to job events", exc_info=True)
        return groups
    return {name for (name,) in rows}


@functools.lru_cache(maxsize=64)
def _listened_sql(vendor: str, count: int) -> str:
    """The groups among ``count`` names with a live membership (``GroupMembership``: group, expiry)."""
    from channels_lite.models import GroupMembership

    table, column = quoted_table(GroupMembership), quoted_columns(GroupMembership)
    return (f"SELECT DISTINCT {column.group_name} FROM {table} "
            f"WHERE {column.group_name} IN ({placeholders(count)}) AND {column.expires_at} >= %s")


_sender = _Sender()


def _new_sender_after_fork() -> None:
    global _sender
    # The parent's thread does not exist here, and the events it queued are its own to send.
    _sender = _Sender()


os.register_at_fork(after_in_child=_new_sender_after_fork)
# Events queued just before the interpreter exits still go out (a daemon thread is stopped at exit).
# Registered with threading, not atexit: at atexit time concurrent.futures already refuses work,
# and the channel layer sends through an executor. Threading's exit hooks run newest first,
# so this one runs before concurrent.futures' own.
threading._register_atexit(flush)
