"""Watching a touched file (``jobs.wakefile``): the queue's wake-ups and the ends of awaited jobs."""

from __future__ import annotations

import threading
import time

import pytest

from jobs import wakefile


def touch_later(path, seconds: float) -> threading.Thread:
    thread = threading.Thread(target=lambda: (time.sleep(seconds), wakefile.touch(path)))
    thread.start()
    return thread


@pytest.fixture
def watch(tmp_path):
    # A check every 30 s: only the kernel's notice can wake these waits in time.
    watch = wakefile.Watch(tmp_path / "queue.wake", check_seconds=30)
    yield watch
    watch.close()


def test_the_kernel_wakes_a_waiter_the_moment_the_file_is_touched(watch, tmp_path):
    assert watch.notify is not None, "inotify is missing: this platform falls back on polling"
    for _ in range(2):  # created, then touched again
        watch.settle()
        touched = touch_later(watch.path, 0.1)
        started = time.monotonic()
        assert watch.wait(5)
        assert time.monotonic() - started < 1
        touched.join()


def test_other_files_of_the_folder_and_earlier_touches_do_not_wake_it(watch, tmp_path):
    wakefile.touch(watch.path)
    watch.settle()  # that touch is forgotten
    (tmp_path / "db.sqlite3-wal").write_bytes(b"x")  # the database's files live in the same folder
    wakefile.touch(tmp_path / "jobs.ended")
    started = time.monotonic()
    assert not watch.wait(0.3)
    assert time.monotonic() - started >= 0.3


def test_where_the_folder_cannot_be_watched_the_file_is_polled(tmp_path, monkeypatch):
    monkeypatch.setattr(wakefile, "_notify_on", lambda folder: None)
    watch = wakefile.Watch(tmp_path / "jobs.ended", check_seconds=0.01)
    touched = touch_later(watch.path, 0.1)
    assert watch.wait(5)
    watch.settle()
    assert not watch.wait(0.1)  # no touch after the one it saw
    touched.join()


@pytest.mark.parametrize("kernel", [True, False], ids=["inotify", "polling"])
def test_an_interrupt_ends_a_wait_at_once_without_a_touch(tmp_path, monkeypatch, kernel):
    if not kernel:
        monkeypatch.setattr(wakefile, "_notify_on", lambda folder: None)
    watch = wakefile.Watch(tmp_path / "jobs.ended", check_seconds=30)
    try:
        interrupter = threading.Thread(target=lambda: (time.sleep(0.1), watch.interrupt()))
        interrupter.start()
        started = time.monotonic()
        assert not watch.wait(30)
        assert time.monotonic() - started < 1
        interrupter.join()
        watch.interrupt()  # with no wait running: the next one returns at once
        assert not watch.wait(30)
        touch_later(watch.path, 0.1).join()
        assert watch.wait(5)  # the interrupts are spent: a touch is reported as one
    finally:
        watch.close()
