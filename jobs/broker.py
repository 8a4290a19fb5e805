"""django-q2's ORM broker, woken by new tasks instead of waiting out its poll.

The ORM broker (the embedded default) finds new tasks by asking the database
every ``Q_POLL`` seconds; on average a job waited half that before a worker
took it, which is a tenth of a one-page job's time. Here every commit that
queued a task touches a small file (``Q_WAKE_FILE``), and an idle pusher
sleeps until the file is touched (``jobs.wakefile.Watch``: woken by the kernel
on Linux, elsewhere a ``stat`` call every ``WAKE_CHECK_SECONDS``) instead of
querying. Where the web and the workers share no disk the file never changes
for the workers and they poll as before.

``SignOnly`` lets a submission sign its task before the write transaction that
inserts the task's row.
"""

from __future__ import annotations

import os

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_q.brokers import Broker
from django_q.brokers.orm import ORM
from django_q.conf import Conf
from django_q.models import OrmQ

from jobs import wakefile
from jobs.sql import PreparedInsert

WAKE_CHECK_SECONDS = 0.02


def _wake_workers() -> None:
    """Tell idle pushers that a task was queued (after the task's row committed)."""
    wakefile.touch(settings.Q_WAKE_FILE)  # where it fails, the workers find the task at their next poll


class WakingOrm(ORM):
    def enqueue(self, task):
        task_id = super().enqueue(task)
        # The row is visible to the pusher only once committed (now, outside a transaction).
        transaction.on_commit(_wake_workers, using=Conf.ORM)
        return task_id

    def dequeue(self):
        """Claim ready tasks; when there are none, wait up to ``Q_POLL`` for a wake-up and look once more."""
        wake = self._wake_watch()
        wake.settle()
        if tasks := self._claim():
            return tasks
        if wake.wait(Conf.POLL):
            return self._claim() or None
        return None

    def _wake_watch(self) -> wakefile.Watch:
        # One per process: a pusher forked from a process that had one must not share its descriptor.
        if getattr(self, "_wake_pid", None) != os.getpid():
            self._wake, self._wake_pid = wakefile.Watch(settings.Q_WAKE_FILE, WAKE_CHECK_SECONDS), os.getpid()
        return self._wake

    def _claim(self) -> list[tuple]:
        """ORM.dequeue without its sleep: lock each ready task (up to ``Conf.BULK``) that no other cluster took."""
        queue = self.get_connection()
        tasks = queue.filter(key=self.list_key, lock__lt=timezone.now())[:Conf.BULK]
        return [(task.pk, task.payload) for task in tasks
                if queue.filter(id=task.id, lock=task.lock).update(lock=self.timeout(task))]


class SignOnly(Broker):
    """A broker for ``async_task(..., broker=SignOnly(cluster))`` that keeps the signed task instead
    of queueing it: ``entry.queue()`` inserts its row later, in the caller's transaction.

    ``async_task`` packs, signs and inserts in one call, and a submission made it inside its write
    transaction, which holds the database's write lock: 0.48 ms of CPU there. With this broker
    only the insert is left for the transaction (``PreparedInsert``): 0.09 ms.
    """

    def __init__(self, list_key: str):
        self.list_key = list_key  # no connection or cache: this broker reads nothing
        self.entry: QueueEntry | None = None

    def enqueue(self, task):
        self.entry = QueueEntry(PreparedInsert(OrmQ(key=self.list_key, payload=task, lock=timezone.now()),
                                               using=Conf.ORM))
        return "(signed; queued if its transaction commits)"  # async_task logs "Enqueued [<cluster>] <this>"


class QueueEntry:
    """A signed task whose queue row is inserted by ``queue``, in the caller's transaction."""

    def __init__(self, row: PreparedInsert):
        self.row = row

    def queue(self) -> None:
        self.row.execute()
        transaction.on_commit(_wake_workers, using=Conf.ORM)  # as WakingOrm.enqueue
