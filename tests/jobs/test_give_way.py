"""Workers that stop while the web answers (``jobs.give_way``), with real processes, signals and locks."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from jobs import give_way


def state(pid: int) -> str:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return stat.read().rsplit(b")", 1)[1].split()[0].decode()


def eventually(check, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def database(tmp_path) -> str:
    return str(tmp_path / "db.sqlite3")


@pytest.fixture
def worker(database):
    """A busy process recorded as a worker of ``database``."""
    process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    give_way.register(database, process.pid)
    yield process.pid
    process.kill()
    process.wait()


def test_requests_stop_the_workers_until_the_last_web_process_has_answered(database, worker):
    first, second = give_way.Foreground(database), give_way.Foreground(database)
    first.started()
    assert eventually(lambda: state(worker) == "T")
    second.started()
    first.finished()
    assert state(worker) == "T"  # the second web process still answers
    second.finished()
    assert eventually(lambda: state(worker) == "R")


def test_workers_are_not_stopped_while_a_writer_holds_the_write_lock(database, worker):
    foreground = give_way.Foreground(database)
    with open(database + ".writelock", "a") as write_lock:
        fcntl.flock(write_lock, fcntl.LOCK_EX)
        foreground.started()
        time.sleep(0.1)
        assert state(worker) == "R"
    foreground.started()  # the next request of the same run, once the writer is out
    assert eventually(lambda: state(worker) == "T")
    foreground.finished()
    foreground.finished()
    assert eventually(lambda: state(worker) == "R")


def test_only_recorded_live_workers_are_signalled(database, worker):
    time.sleep(0.05)  # start times count in clock ticks (10 ms)
    other = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        # Each entry holds its process's start time, which tells a later process from the worker.
        later, earlier = give_way.register(database, other.pid).read_text(), open(f"{database}.workers/{worker}").read()
        assert later.isdigit() and earlier.isdigit() and int(later) > int(earlier)
        # An entry whose pid now belongs to another process (the worker died, its pid was reused).
        (give_way.register(database, other.pid)).write_text("1")
        assert give_way.registered_workers(database) == [worker]
        assert not os.path.exists(f"{database}.workers/{other.pid}")  # forgotten
        foreground = give_way.Foreground(database)
        foreground.started()
        assert eventually(lambda: state(worker) == "T")
        assert state(other.pid) == "R"
        foreground.finished()
    finally:
        other.kill()
        other.wait()


def test_the_watch_lets_go_workers_that_no_request_holds_or_held_too_long(database, worker):
    until = threading.Event()
    watch = threading.Thread(target=give_way.watch, args=(database, 2.0, until))
    watch.start()
    try:
        os.kill(worker, signal.SIGSTOP)  # as a web process that was killed mid-request leaves it
        assert eventually(lambda: state(worker) == "R", seconds=2 * give_way.WATCH_SECONDS + 0.2)  # not 2 s

        foreground = give_way.Foreground(database)
        foreground.started()  # a request that never ends
        stopped_at = time.monotonic()
        assert eventually(lambda: state(worker) == "T")
        assert eventually(lambda: state(worker) == "R", seconds=4)
        assert time.monotonic() - stopped_at >= 2.0
    finally:
        until.set()
        watch.join()


def test_nothing_is_stopped_when_switched_off(settings, database, worker):
    settings.OCR_YIELD_TO_WEB = False
    foreground = give_way.Foreground(database)
    foreground.started()
    time.sleep(0.1)
    assert state(worker) == "R"
    foreground.finished()


def test_a_writer_that_waits_for_the_lock_lets_stopped_workers_go_on(database, worker):
    # A stopped worker that holds the write lock (the lock taken as it was stopped) would hold every
    # writer until the watch lets it go; the waiting writer lets it go after LONG_WAIT_SECONDS instead.
    from ocrsite.db_sqlite3.base import LONG_WAIT_SECONDS, WriteLock

    foreground = give_way.Foreground(database)
    foreground.started()
    assert eventually(lambda: state(worker) == "T")
    with open(database + ".writelock", "a") as held_by_the_worker:
        fcntl.flock(held_by_the_worker, fcntl.LOCK_EX)
        writer = WriteLock(database + ".writelock", timeout=5)
        waiting = threading.Thread(target=writer.acquire)
        waiting.start()
        time.sleep(LONG_WAIT_SECONDS / 2)
        assert state(worker) == "T"
        assert eventually(lambda: state(worker) == "R", seconds=LONG_WAIT_SECONDS * 10)
    waiting.join(5)
    assert writer.held
    writer.close()
    foreground.finished()


def test_the_cluster_lets_its_workers_go_on_as_it_exits(database, worker):
    os.kill(worker, signal.SIGSTOP)
    assert eventually(lambda: state(worker) == "T")
    subprocess.run([sys.executable, "-c", f"from jobs import give_way; give_way.let_go_at_exit({database!r})"],
                   check=True, cwd=os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    assert eventually(lambda: state(worker) == "R")


def test_a_web_process_stops_workers_recorded_after_it_first_looked_and_forgets_ended_ones(database, worker):
    foreground = give_way.Foreground(database)
    foreground.started()
    foreground.finished()
    later = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        give_way.register(database, later.pid)
        foreground.started()
        assert eventually(lambda: state(worker) == "T")
        time.sleep(0.1)
        assert state(later.pid) == "R"  # the registry is not read for each request
        foreground.finished()
        time.sleep(give_way.RecordedWorkers.REFRESH_SECONDS)
        foreground.started()
        assert eventually(lambda: state(later.pid) == state(worker) == "T")
        foreground.finished()
        assert eventually(lambda: state(later.pid) == "R")
    finally:
        later.kill()
        later.wait()
    foreground.started()  # the ended worker's pidfd is dropped, the live one still stopped
    assert eventually(lambda: state(worker) == "T")
    foreground.finished()
    assert list(foreground.workers.pidfds) == [worker]


def test_a_steady_stream_of_requests_stops_the_workers_for_a_share_of_the_time_only(settings, database, worker):
    settings.OCR_YIELD_MAX_SECONDS = 0.2
    foreground = give_way.Foreground(database)
    runs_stopped = []
    started_at = time.monotonic()
    while time.monotonic() - started_at < 2.0:  # 20 ms requests, 5 ms apart: in flight 80 % of the time
        foreground.started()
        time.sleep(0.005)
        runs_stopped.append(state(worker) == "T")
        time.sleep(0.015)
        foreground.finished()
        time.sleep(0.005)
    stopped_seconds = 0.02 * sum(runs_stopped)
    assert all(runs_stopped[:5])  # the first runs, within OCR_YIELD_MAX_SECONDS
    # At most the allowance and STOP_SHARE of the time after it (a run's length of slack).
    assert stopped_seconds <= 0.2 + give_way.STOP_SHARE * 2.0 + 0.04
    assert eventually(lambda: state(worker) == "R")
