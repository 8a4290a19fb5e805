"""django-q2's ORM broker, woken by new tasks instead of waiting out its poll.

The ORM broker (the embedded default) finds new tasks by asking the database
every ``Q_POLL`` seconds; on average a job waited half that before a worker
took it, which is a tenth of a one-page job's time. Here every commit that
queued a task touches a small file (``Q_WAKE_FILE``), and an idle pusher
watches the file's modification time between its polls, which costs a
``stat`` call every ``WAKE_CHECK_SECONDS`` instead of a query. Where the web
and the workers share no disk the file never changes for the workers and they
poll as before.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_q.brokers.orm import ORM
from django_q.conf import Conf

WAKE_CHECK_SECONDS = 0.02


def _wake_file() -> Path:
    return Path(settings.Q_WAKE_FILE)


def _wake_mark() -> int:
    try:
        return os.stat(_wake_file()).st_mtime_ns
    except OSError:
        return 0


def _wake_workers() -> None:
    """Tell idle pushers that a task was queued (after the task's row committed)."""
    try:
        path = _wake_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:
        pass  # the workers find the task at their next poll


class WakingOrm(ORM):
    def enqueue(self, task):
        task_id = super().enqueue(task)
        # The row is visible to the pusher only once committed (now, outside a transaction).
        transaction.on_commit(_wake_workers, using=Conf.ORM)
        return task_id

    def dequeue(self):
        """Claim ready tasks; when there are none, wait up to ``Q_POLL`` for a wake-up and look once more."""
        seen = _wake_mark()
        if tasks := self._claim():
            return tasks
        deadline = time.monotonic() + Conf.POLL
        while time.monotonic() < deadline:
            time.sleep(WAKE_CHECK_SECONDS)
            if _wake_mark() != seen:
                return self._claim() or None
        return None

    def _claim(self) -> list[tuple]:
        """ORM.dequeue without its sleep: lock each ready task (up to ``Conf.BULK``) that no other cluster took."""
        queue = self.get_connection()
        tasks = queue.filter(key=self.list_key, lock__lt=timezone.now())[:Conf.BULK]
        return [(task.pk, task.payload) for task in tasks
                if queue.filter(id=task.id, lock=task.lock).update(lock=self.timeout(task))]
