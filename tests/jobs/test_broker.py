"""The embedded default's queue: an idle worker takes a task when its row commits, not at its next poll."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection, transaction
from django.utils import timezone
from django_q.brokers import get_broker
from django_q.conf import Conf
from django_q.models import OrmQ
from django_q.signing import SignedPackage
from django_q.tasks import async_task

from jobs.broker import SignOnly, WakingOrm

pytestmark = pytest.mark.django_db(transaction=True)  # the idle worker is another thread: its own connection


@pytest.fixture
def broker(settings, tmp_path, monkeypatch):
    settings.Q_WAKE_FILE = str(tmp_path / "queue.wake")
    monkeypatch.setattr(Conf, "POLL", 5.0)  # far longer than any wait below
    return WakingOrm(list_key="test-wake")


def idle_worker(broker, seen: dict) -> threading.Thread:
    def dequeue():
        try:
            seen["tasks"], seen["at"] = broker.dequeue(), time.monotonic()
        finally:
            connection.close()

    thread = threading.Thread(target=dequeue)
    thread.start()
    time.sleep(0.3)  # it found the queue empty and waits
    return thread


def test_the_orm_broker_is_the_waking_one():
    assert isinstance(get_broker(), WakingOrm)


def test_an_idle_worker_takes_a_task_as_soon_as_it_commits(broker):
    seen = {}
    worker = idle_worker(broker, seen)
    with transaction.atomic():
        broker.enqueue("the payload")
        time.sleep(0.5)  # not committed yet: the worker can neither see nor be woken for it
        assert "at" not in seen
        committing = time.monotonic()
    worker.join(timeout=6)
    assert [payload for _, payload in seen["tasks"]] == ["the payload"]
    assert seen["at"] - committing < 1.0  # not the 5 s poll


def test_a_task_queued_without_a_wake_up_is_found_at_the_next_poll(broker, monkeypatch):
    """As when the web runs on another machine, with no disk shared with the worker."""
    monkeypatch.setattr(Conf, "POLL", 0.6)
    seen = {}
    worker = idle_worker(broker, seen)
    started = time.monotonic() - 0.3
    OrmQ.objects.create(key=broker.list_key, payload="late", lock=timezone.now())  # no wake-up
    worker.join(timeout=6)
    assert seen["tasks"] is None and seen["at"] - started >= 0.55
    assert [payload for _, payload in broker.dequeue()] == ["late"]


def test_a_signed_task_is_queued_by_the_transaction_that_queues_it(broker):
    signer = SignOnly(broker.list_key)
    task_id = async_task("math.floor", 1.5, broker=signer)
    assert not OrmQ.objects.filter(key=broker.list_key).exists()  # signed, not queued
    with pytest.raises(RuntimeError), transaction.atomic():
        signer.entry.queue()
        raise RuntimeError("the submission failed after queueing")
    assert not OrmQ.objects.filter(key=broker.list_key).exists()
    seen = {}
    worker = idle_worker(broker, seen)
    with transaction.atomic():
        signer.entry.queue()
        committing = time.monotonic()
    worker.join(timeout=6)
    [(_, payload)] = seen["tasks"]
    assert SignedPackage.loads(payload)["id"] == task_id and SignedPackage.loads(payload)["args"] == (1.5,)
    assert seen["at"] - committing < 1.0  # woken by the commit, not the 5 s poll
