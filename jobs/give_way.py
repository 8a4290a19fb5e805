"""OCR workers that stop while the web answers requests, where both share one machine's cores.

On the embedded default (`make run`: SQLite, the web and the cluster on one machine) the workers
fill every core with OCR at nice 19. Yet bursts of twenty submits sent while OCR ran were answered
at a p95 of 62-130 ms (mean 99, six runs on a 2-core VM; ``SCHED_IDLE`` did no better than nice 19),
and at 59-83 ms (mean 72) with the workers stopped as below (docs/benchmarks.md, 2026-11-29 evening):
a worker that runs whenever a web thread waits for a moment still takes the cores' time and caches,
which only a stopped one gives back. So here a web
process that starts a request stops the cluster's workers (``SIGSTOP``), and the last web process to
finish its requests lets them go on (``SIGCONT``): OCR loses the milliseconds that the requests take.

What keeps it safe:

- **No lock held while stopped.** A worker stopped inside a write transaction would hold the
  database's write lock (``<database>.writelock``, ``ocrsite.db_sqlite3``) that every request
  waits for: with the cluster stopped at random moments, a burst of submits once waited a minute.
  So a web process signals the workers only while it holds that lock itself: none of them is
  writing then, and each stops on its way back from the kernel, before its next instruction. (A
  worker thread inside the ``flock`` call at the very instant the lock is released could leave
  it holding the lock: so a writer of a web process that has waited 20 ms for the lock lets the
  workers go on, ``let_go_of_the_lock_holder``.)
- **Only our workers.** Each worker records its pid and the kernel's start time of that pid in
  ``<database>.workers/`` (``register_worker``); a pid reused by another process after a worker died
  does not match.
- **Never for long.** Web processes hold a shared ``flock`` on ``<database>.foreground`` while they
  have requests in flight. The qcluster's main process looks every ``WATCH_SECONDS``
  (``watch_stopped_workers``): a worker stopped while no web process holds it (a web process that
  was killed) or for longer than ``OCR_YIELD_MAX_SECONDS`` (a steady stream of requests) goes on.
  A web process stops the workers once per run of requests, so one long run cannot keep them
  stopped; and for at most ``STOP_SHARE`` of its time over a few seconds, so that a steady stream of
  short runs cannot either. (Without that share, one client reading a job's status in a loop took
  the worker 2.5 times as long over a PDF, docs/benchmarks.md.)
- **Cheap for each request.** A web process signals the workers through pidfds
  (``RecordedWorkers``), opened when it reads the registry, once a second. Reading it for each
  request, as a first version did, cost a status read a third of its speed.

Long-polls, which wait for seconds, and WebSockets do not count as requests in flight
(``ocrsite.asgi``). With PostgreSQL the workers usually run on machines of their own, and a
stopped worker could hold row locks that a request needs, so nothing is stopped there;
``OCR_YIELD_TO_WEB=false`` switches it off on the embedded default too.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import signal
import threading
import time
from pathlib import Path

from django.conf import settings

from ocrsite.db_sqlite3 import base as db_sqlite3

WATCH_SECONDS = 0.25
# The longest share of a web process's time in which it keeps the workers stopped, over a steady
# stream of requests: a burst of submits takes a few hundredths of a second every few seconds.
STOP_SHARE = 0.1


def _database() -> str | None:
    """The embedded default's database file, where workers give way; None elsewhere, when switched off,
    or off Linux (pidfds and ``/proc``)."""
    database = settings.DATABASES["default"]
    if not settings.OCR_YIELD_TO_WEB or database["ENGINE"] != "ocrsite.db_sqlite3" or not hasattr(os, "pidfd_open"):
        return None
    return str(database["NAME"])


def _registry(database: str) -> Path:
    return Path(database + ".workers")


def _stat(pid: int) -> list[bytes]:
    """The fields of process ``pid``'s ``/proc/<pid>/stat`` after its name (state first); [] if there is none."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return []


def _started_at(pid: int) -> str | None:
    """The kernel's start time of process ``pid`` (field 22 of its stat), or None if there is none."""
    fields = _stat(pid)
    return fields[19].decode() if len(fields) > 19 else None


def register_worker(**_) -> None:
    """Record this worker process as one that stops for the web (django-q2's ``post_spawn``)."""
    database = _database()
    if database is not None:
        register(database, os.getpid())


def register(database: str, pid: int) -> Path:
    """Record process ``pid`` as a worker of ``database``; returns its entry.

    Written whole under another name, then renamed: a reader that found it half-written would take it
    for a dead worker's.
    """
    entry = _registry(database) / str(pid)
    with contextlib.suppress(OSError):
        entry.parent.mkdir(exist_ok=True)
        partial = entry.with_name(f"{pid}.partial")
        partial.write_text(_started_at(pid) or "")
        partial.replace(entry)
    return entry


def registered_workers(database: str) -> list[int]:
    """Pids of the live workers recorded for ``database``. A worker leaves its entry behind when it ends
    (django-q2's processes skip ``atexit``): entries whose pid is gone, or is another process now, are removed."""
    pids = []
    with contextlib.suppress(OSError):
        for entry in _registry(database).iterdir():
            with contextlib.suppress(OSError, ValueError):
                pid = int(entry.name)
                if _started_at(pid) == entry.read_text():
                    pids.append(pid)
                else:
                    entry.unlink(missing_ok=True)
    return pids


def _stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped."""
    return _stat(pid)[:1] in ([b"T"], [b"t"])


def _try_flock(fd: int, operation: int) -> bool:
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _signal(pids: list[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)


class RecordedWorkers:
    """The live workers recorded for a database, held as pidfds: signalled without reading the registry
    for each request, and never a process that took the pid of a worker that ended."""

    # How often the registry is read again: a worker that django-q2 starts in place of another runs on
    # for up to that long before it is stopped with the rest (or, stopped by a web process that read
    # the registry sooner, waits for the watch to let it go); an ended one is dropped at once.
    REFRESH_SECONDS = 1.0

    def __init__(self, database: str):
        self.database = database
        self.pidfds: dict[int, int] = {}
        self.read_at = -self.REFRESH_SECONDS

    def signal(self, signum: int) -> None:
        self._refresh()
        for pid, pidfd in list(self.pidfds.items()):
            try:
                signal.pidfd_send_signal(pidfd, signum)
            except ProcessLookupError:  # it ended
                os.close(self.pidfds.pop(pid))
            except PermissionError:
                pass

    def _refresh(self) -> None:
        now = time.monotonic()
        if now - self.read_at < self.REFRESH_SECONDS:
            return
        self.read_at = now
        for pidfd in self.pidfds.values():
            os.close(pidfd)
        self.pidfds = {}
        for pid in registered_workers(self.database):
            with contextlib.suppress(OSError):
                self.pidfds[pid] = os.pidfd_open(pid)
        # Checked again once the pidfds are open: a pid that is still its worker's now was then too.
        live = set(registered_workers(self.database))
        for pid in set(self.pidfds) - live:
            os.close(self.pidfds.pop(pid))


class Foreground:
    """A web process's side: stops the workers when requests start, lets them go when all have ended.

    Called on the server's event loop only (``started``/``finished`` around each request).
    """

    def __init__(self, database: str | None = None):
        self.database = (database or _database()) if settings.OCR_YIELD_TO_WEB else None
        self.in_flight = 0
        self.holding = False  # the shared lock on ``<database>.foreground``
        self.stopped_this_run = False
        self.lock_fd = self.write_fd = None
        # Seconds of stopped workers that this process may still cause, refilled at STOP_SHARE.
        self.allowance, self.allowance_at = settings.OCR_YIELD_MAX_SECONDS, time.monotonic()
        self.stopped_at: float | None = None  # when this run stopped the workers
        if self.database is not None:
            self.workers = RecordedWorkers(self.database)
            self.lock_fd = os.open(self.database + ".foreground", os.O_RDWR | os.O_CREAT, 0o600)
            self.write_fd = os.open(self.database + ".writelock", os.O_RDWR | os.O_CREAT, 0o600)
            if let_go_of_the_lock_holder not in db_sqlite3.long_wait_hooks:
                db_sqlite3.long_wait_hooks.append(let_go_of_the_lock_holder)

    def started(self) -> None:
        if self.lock_fd is None:
            return
        self.in_flight += 1
        if not self.holding:
            # Never waited for: the watch, at nice 19, may hold it exclusively for a moment.
            self.holding = _try_flock(self.lock_fd, fcntl.LOCK_SH)
            self.stopped_this_run = False
        if self.holding and not self.stopped_this_run:
            self.stopped_this_run = self._stop_workers()

    def finished(self) -> None:
        if self.lock_fd is None:
            return
        self.in_flight -= 1
        if self.in_flight or not self.holding:
            return
        self.holding = False
        if self.stopped_at is not None:
            self.allowance -= time.monotonic() - self.stopped_at
            self.stopped_at = None
        fcntl.flock(self.lock_fd, fcntl.LOCK_UN)
        if not _try_flock(self.lock_fd, fcntl.LOCK_EX):
            return  # another web process still answers: it lets them go when it is done
        try:
            self.workers.signal(signal.SIGCONT)
        finally:
            fcntl.flock(self.lock_fd, fcntl.LOCK_UN)

    def _stop_workers(self) -> bool:
        """Stop the workers outside their writes; False where a writer was in (try again later).
        True without stopping them where this process has stopped them for its share already."""
        now = time.monotonic()
        self.allowance = min(settings.OCR_YIELD_MAX_SECONDS,
                             self.allowance + (now - self.allowance_at) * STOP_SHARE)
        self.allowance_at = now
        if self.allowance <= 0:
            return True
        if not _try_flock(self.write_fd, fcntl.LOCK_EX):
            return False  # a worker may be that writer
        try:
            self.workers.signal(signal.SIGSTOP)
        finally:
            fcntl.flock(self.write_fd, fcntl.LOCK_UN)
        self.stopped_at = now
        return True


def let_go_of_the_lock_holder(write_lock: str) -> None:
    """A writer of this process has waited long for ``write_lock``: a stopped worker may hold it."""
    _signal(registered_workers(write_lock.removesuffix(".writelock")), signal.SIGCONT)


def watch_stopped_workers() -> None:
    """In the qcluster's main process: let go workers left stopped with no web request in flight,
    or stopped for longer than ``OCR_YIELD_MAX_SECONDS``."""
    database = _database()
    if database is not None:
        threading.Thread(target=watch, args=(database, settings.OCR_YIELD_MAX_SECONDS), name="stopped-workers-watch",
                         daemon=True).start()
        let_go_at_exit(database)


def let_go_at_exit(database: str) -> None:
    """Let the workers go on when this process ends: a worker stopped as the cluster is stopped (``pkill``,
    whose SIGTERM waits in a stopped process) would otherwise outlive its cluster, stopped for good."""
    atexit.register(lambda: _signal(registered_workers(database), signal.SIGCONT))


def watch(database: str, max_seconds: float, until: threading.Event | None = None) -> None:
    """Every ``WATCH_SECONDS`` until ``until`` is set: ``SIGCONT`` to each stopped worker that no web
    process attends, or that has been stopped for ``max_seconds``."""
    until = until or threading.Event()
    stopped_since: dict[int, float] = {}
    with open(database + ".foreground", "a+b") as foreground:
        while not until.wait(WATCH_SECONDS):
            now = time.monotonic()
            stopped = [pid for pid in registered_workers(database) if _stopped(pid)]
            stopped_since = {pid: stopped_since.get(pid, now) for pid in stopped}
            if not stopped:
                continue
            if _try_flock(foreground.fileno(), fcntl.LOCK_EX):
                fcntl.flock(foreground, fcntl.LOCK_UN)
                unattended = stopped
            else:
                unattended = [pid for pid in stopped if now - stopped_since[pid] >= max_seconds]
            _signal(unattended, signal.SIGCONT)
            for pid in unattended:
                stopped_since.pop(pid)
