"""Held waits (``jobs.waits``): a job's end announced through the end file wakes its waiters at once;
an end nobody announced (web and workers on different disks) is found by the next read."""

from __future__ import annotations

import time

import pytest

from jobs import progress, waits
from jobs.models import Job
from tests.jobs.factories import JobFactory

# The watcher thread reads on a connection of its own: it sees committed rows only.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def watcher(settings, tmp_path, monkeypatch):
    """This test's own watcher thread, reading the database every ``poll`` seconds."""
    settings.OCR_JOB_END_FILE = str(tmp_path / "jobs.ended")
    monkeypatch.setattr(waits, "_watcher", waits._Watcher())

    def reading_every(poll: float) -> None:
        monkeypatch.setattr(waits, "POLL_SECONDS", poll)

    return reading_every


def test_a_published_end_wakes_the_waiter_before_the_next_read(watcher):
    watcher(poll=30.0)
    job = JobFactory()
    with waits.JobEnd(job.pk) as end:
        time.sleep(0.2)  # the watcher's first read: the job is still queued
        Job.objects.filter(pk=job.pk).update(status=Job.Status.SUCCEEDED)
        assert not end.wait(0.5)  # ended, not announced: the next read is 30 s away
        job.refresh_from_db()
        progress.publish(job, "succeeded")  # what a worker does once the job's end committed
        started = time.monotonic()
        assert end.wait(2.0)
        assert time.monotonic() - started < 0.5


def test_an_end_nobody_announced_is_found_by_the_next_read(watcher):
    watcher(poll=0.05)
    job = JobFactory()
    with waits.JobEnd(job.pk) as end:
        time.sleep(0.2)
        assert not end.wait(0.2)  # still queued
        Job.objects.filter(pk=job.pk).update(status=Job.Status.FAILED)
        assert end.wait(2.0)


def test_reads_are_rare_while_ends_are_announced_and_frequent_again_after_one_that_is_not(watcher, monkeypatch):
    watcher(poll=0.05)
    reads = []
    ended_among = waits._ended_among
    monkeypatch.setattr(waits, "_ended_among", lambda job_ids: reads.append(job_ids) or ended_among(job_ids))

    def reads_while_waiting(end: waits.JobEnd, seconds: float = 0.6) -> int:
        before = len(reads)
        assert not end.wait(seconds)
        return len(reads) - before

    announced, unannounced, later = JobFactory(), JobFactory(), JobFactory()
    with waits.JobEnd(announced.pk) as end:
        assert reads_while_waiting(end) >= 6  # no end seen yet: a read every 50 ms
        # A read of its own between the commit and the touch would find the end unannounced.
        watcher(poll=30.0)
        time.sleep(0.2)
        Job.objects.filter(pk=announced.pk).update(status=Job.Status.SUCCEEDED)
        announced.refresh_from_db()
        progress.publish(announced, "succeeded")
        assert end.wait(2.0)
    watcher(poll=0.05)
    with waits.JobEnd(unannounced.pk) as end:
        time.sleep(0.1)  # the read for the new waiter
        assert reads_while_waiting(end) <= 1  # ends come with their touch: a read a second
        Job.objects.filter(pk=unannounced.pk).update(status=Job.Status.FAILED)
        started = time.monotonic()
        assert end.wait(3.0)  # found by the thread's own read, without a touch
        assert time.monotonic() - started < waits.ANNOUNCED_POLL_SECONDS + 0.5
    with waits.JobEnd(later.pk) as end:
        assert reads_while_waiting(end) >= 6  # an end came unannounced: a read every 50 ms again
