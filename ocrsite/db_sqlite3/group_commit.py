"""Group commit: the threads of a process that wait to write share one transaction.

In a burst of submissions every request needs the write lock for about a millisecond of
work, and took it once each. The lock holder shared its interpreter with the nine other
requests of its process, so each hold stretched to 10–30 ms while the other process's
requests, all waiting for the lock, left their core to the OCR workers. Here a thread that
finds no batch running leads one: it takes the work queued at that moment (its own first),
takes the lock once and runs each piece in a savepoint, so one that fails (a quota exceeded)
rolls back alone (a batch of one needs none). Threads that arrive meanwhile sleep instead of
competing for the interpreter; when the batch ends, the first of them leads the next batch
with all of them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.db import transaction


class _Work:
    def __init__(self, run: Callable[[], Any]):
        self.run = run
        self.ended = threading.Event()  # set when done, or when this thread is to lead the next batch
        self.leads = False
        self.value: Any = None
        self.error: BaseException | None = None


class GroupCommit:
    """Runs callables in write transactions shared with the other threads of this process."""

    def __init__(self, alias: str):
        self.alias = alias
        self.lock = threading.Lock()
        self.waiting: list[_Work] = []
        self.leader_active = False

    def run(self, run: Callable[[], Any]) -> Any:
        """``run()`` inside a write transaction on ``alias``; its result, or its exception raised here.

        The transaction may hold other threads' work too: ``run`` uses the connection of the
        thread that runs it (``django.db.connection``), and its ``on_commit`` callbacks run
        on that thread after the shared commit.
        """
        work = _Work(run)
        with self.lock:
            self.waiting.append(work)
            work.leads = not self.leader_active
            self.leader_active = True
        if not work.leads:
            work.ended.wait()
        if work.leads:
            self._lead()
        if work.error is not None:
            raise work.error
        return work.value

    def _lead(self) -> None:
        with self.lock:
            batch, self.waiting = self.waiting, []
        try:
            # Alone, a work needs no savepoint: its failure rolls the whole transaction back. Django
            # names each savepoint anew, so SQLite parsed its SAVEPOINT and RELEASE each time, and
            # every statement gave up the interpreter lock, which the lock holder then waited for
            # behind the process's other requests. Most batches in a burst are single; with
            # savepoints they held the write lock 1.6 times as long.
            savepoints = len(batch) > 1
            with transaction.atomic(using=self.alias):
                for work in batch:
                    try:
                        with transaction.atomic(using=self.alias, savepoint=savepoints):
                            work.value = work.run()
                    except Exception as error:  # noqa: BLE001 - raised in the thread it belongs to
                        work.error = error
        except BaseException as error:  # the commit failed, or the leader was interrupted: nothing was written
            for work in batch:
                if work.error is None:
                    work.value, work.error = None, error
        finally:
            with self.lock:
                if self.waiting:
                    self.waiting[0].leads = True
                    self.waiting[0].ended.set()
                else:
                    self.leader_active = False
            for work in batch:
                work.leads = False
                work.ended.set()
