"""Requests waiting for their job to end (``GET /jobs/{id}?wait=``), watched by one thread per process.

While anyone in the process waits, the thread reads which of the awaited jobs have ended, in one
fixed statement, and wakes their waiters. Waits were first woken by the
channel layer's job events: each one joined and then left its job's group, two writes that on
the embedded default took SQLite's write lock and cost the request 5.7 ms of CPU, more than the
submission before it. In a burst of clients that submit and then wait, those writes were half of
the web's CPU. A read of the job rows needs no channel layer and misses no event: a job that
ended before its waiter registered is seen on the next read.

Between reads the thread waits on a small file (``OCR_JOB_END_FILE``) that every commit of a job's
end touches (``announce_job_end``, from ``progress.publish``; ``jobs.wakefile``, as for the queue's
wake-up), and reads as soon as it is touched. A waiter learned of its job's end 29 ms late on
average with reads alone: for a client that submits, waits and submits again, a twenty-fifth of a
one-page job. The kernel wakes the thread (inotify); where it cannot, the thread looks at the file
every ``MARK_CHECK_SECONDS``.

Where the web and the workers share no disk the file never changes for the web, so the thread
also reads on its own: every ``POLL_SECONDS`` until an end is found that a touch announced, and
then only every ``ANNOUNCED_POLL_SECONDS``. Reads every 50 ms cost a waiting process 11 ms of CPU
a second. A read of its own that finds an end no touch announced (a worker on another disk)
puts it back to every ``POLL_SECONDS``. A waiter's job may also have ended before it came, with
its touch before the waiter was looked for: a new waiter wakes the thread for a read.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import time
import uuid

from django.conf import settings
from django.db import connection

from jobs import wakefile
from jobs.models import Job
from jobs.sql import placeholders, quoted_columns, quoted_table, thread_read

logger = logging.getLogger(__name__)

# How late a waiter may learn that its job ended where no touch announces it; the embedded
# default's channel layer polled its table as often.
POLL_SECONDS = 0.05
# Between the thread's own reads while the ends found come with their touch: how late a waiter may
# learn of the first end that does not.
ANNOUNCED_POLL_SECONDS = 1.0
MARK_CHECK_SECONDS = 0.005  # how often the end file is looked at between reads, without inotify


def announce_job_end() -> None:
    """Tell the waiting requests of this site that a job ended (after its final status committed)."""
    wakefile.touch(settings.OCR_JOB_END_FILE)  # where it fails, the waiters' next read finds the end


class JobEnd:
    """A waiter for one job: ``wait(seconds)`` is True once the job has ended (succeeded, failed, canceled)."""

    def __init__(self, job_id: uuid.UUID):
        self.job_id = job_id

    def __enter__(self) -> JobEnd:
        self.ended = _watcher.add(self.job_id)
        return self

    def __exit__(self, *exc_info) -> None:
        _watcher.remove(self.job_id, self.ended)

    def wait(self, seconds: float) -> bool:
        return self.ended.wait(seconds)


class _Watcher:
    def __init__(self):
        self.changed = threading.Condition()
        self.waiting: dict[uuid.UUID, set[threading.Event]] = {}
        self.arrived = False  # a waiter came since the last read
        self.job_ends: wakefile.Watch | None = None
        self.thread: threading.Thread | None = None

    def add(self, job_id: uuid.UUID) -> threading.Event:
        ended = threading.Event()
        with self.changed:
            self.waiting.setdefault(job_id, set()).add(ended)
            self.arrived = True
            if self.thread is None:
                self.job_ends = wakefile.Watch(settings.OCR_JOB_END_FILE, MARK_CHECK_SECONDS)
                self.thread = threading.Thread(target=self._run, name="job-ends", daemon=True)
                self.thread.start()
            self.changed.notify()
        self.job_ends.interrupt()  # its job may have ended before it came: read now
        return ended

    def remove(self, job_id: uuid.UUID, ended: threading.Event) -> None:
        with self.changed:
            waiters = self.waiting.get(job_id, set())
            waiters.discard(ended)
            if not waiters:
                self.waiting.pop(job_id, None)

    def _run(self) -> None:
        touched, announced, next_read = False, False, 0.0
        while True:
            with self.changed:
                self.changed.wait_for(lambda: self.waiting)
                awaited = list(self.waiting)
                arrived, self.arrived = self.arrived, False
            if touched or arrived or time.monotonic() >= next_read:
                self.job_ends.settle()  # before the read: an end announced during it is looked for again
                found = _ended_among(awaited)
                if found and (touched or not arrived):  # an end found for a new waiter proves nothing
                    announced = touched
                next_read = time.monotonic() + (ANNOUNCED_POLL_SECONDS if announced else POLL_SECONDS)
                with self.changed:
                    for job_id in found:
                        for ended in self.waiting.get(job_id, ()):
                            ended.set()
            touched = self.job_ends.wait(next_read - time.monotonic())


def _ended_among(job_ids: list[uuid.UUID]) -> list[uuid.UUID]:
    """Those of ``job_ids`` whose jobs have ended, or none when the database cannot say (the waits
    then run to their own end, and answer with the job as it is)."""
    pk = Job._meta.pk
    try:
        rows = thread_read(_ended_sql(connection.vendor, len(job_ids)),
                           [*(pk.get_db_prep_value(job_id, connection) for job_id in job_ids), *Job.FINAL_STATUSES])
    except Exception:  # noqa: BLE001 - a database outage must not end the thread every waiter relies on
        logger.warning("Could not read whether awaited jobs have ended", exc_info=True)
        return []
    return [pk.to_python(value) for (value,) in rows]


@functools.lru_cache(maxsize=64)
def _ended_sql(vendor: str, count: int) -> str:
    table, column = quoted_table(Job), quoted_columns(Job)
    return (f"SELECT {column.id} FROM {table} WHERE {column.id} IN ({placeholders(count)}) "
            f"AND {column.status} IN ({placeholders(len(Job.FINAL_STATUSES))})")


_watcher = _Watcher()


def _new_watcher_after_fork() -> None:
    global _watcher
    _watcher = _Watcher()  # the parent's thread does not exist here, nor do its waiters


os.register_at_fork(after_in_child=_new_watcher_after_fork)
