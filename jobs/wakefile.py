"""A file touched to tell other processes that something happened, and watched for those touches.

A watcher sleeps until the file is touched: on Linux it is woken by the kernel (inotify on the
file's folder) the moment that happens, and costs nothing meanwhile. Elsewhere, or where the folder
cannot be watched, it compares the file's modification time with the one it last saw every
``check_seconds``: a ``stat`` call where a database query would be needed otherwise. Where the
processes share no disk, or share it over the network (inotify sees only this machine's touches),
the watcher is never woken and falls back on its own polling. Two touches within the file system's
clock tick leave one mark: watchers that must not miss one still poll, less often.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
from pathlib import Path

from inotify_simple import INotify, flags

# What ``touch`` makes the kernel report for the file: its time changed, or it was created or renamed in.
TOUCHED = flags.ATTRIB | flags.CREATE | flags.MOVED_TO


def touch(path: str | os.PathLike) -> None:
    """Move the mark of ``path`` (created with its folder when missing); a failure only delays watchers."""
    try:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:
        pass


def _mark(path: str | os.PathLike) -> int:
    """The current mark of ``path``: its modification time in ns, 0 while it does not exist."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


class Watch:
    """Touches of one file, for one thread: ``settle()``, look at what the touches announce, ``wait()``.

    A process's watcher threads polled the mark every few milliseconds: each wake-up took the
    interpreter lock from the process's requests, 200 times a second while a long-poll waited.
    """

    def __init__(self, path: str | os.PathLike, check_seconds: float):
        self.path, self.check_seconds = Path(path), check_seconds
        self.notify = _notify_on(self.path.parent)
        self.seen = _mark(self.path)
        self.interrupted = threading.Event()
        # ``interrupt`` also writes to a pipe polled beside the inotify descriptor: the kernel
        # wakes ``wait`` for it as for a touch.
        self.interrupt_pipe = self.polls = None
        if self.notify is not None:
            self.interrupt_pipe = os.pipe()
            os.set_blocking(self.interrupt_pipe[1], False)
            self.polls = select.poll()
            for fd in (self.notify.fd, self.interrupt_pipe[0]):
                self.polls.register(fd, select.POLLIN)

    def settle(self) -> None:
        """Forget the touches so far: ``wait`` returns early only for later ones."""
        if self.notify is not None:
            self.notify.read(timeout=0)
        self.seen = _mark(self.path)

    def wait(self, seconds: float) -> bool:
        """True as soon as the file is touched after ``settle()``; False once ``seconds`` passed without,
        or at once when another thread calls ``interrupt``."""
        deadline = time.monotonic() + seconds
        while _mark(self.path) == self.seen:
            if self.interrupted.is_set():
                self.interrupted.clear()  # only here: one that came as the time ran out ends the next wait
                return False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if self._sleep(remaining):
                return True
        return True

    def _sleep(self, seconds: float) -> bool:
        """Until the kernel reports a touch (True), an interrupt, or ``seconds`` or a polling interval passed."""
        if self.notify is None:
            self.interrupted.wait(min(self.check_seconds, seconds))
            return False
        ready = dict(self.polls.poll(max(1, round(seconds * 1000))))
        if self.interrupt_pipe[0] in ready:
            os.read(self.interrupt_pipe[0], 4096)
        return self.notify.fd in ready and any(self._touched(event) for event in self.notify.read(timeout=0))

    def interrupt(self) -> None:
        """Make a ``wait`` of another thread return False now (or the next one, if none is waiting)."""
        self.interrupted.set()
        if self.interrupt_pipe is not None:
            with contextlib.suppress(BlockingIOError):  # full: the waiting thread has been woken already
                os.write(self.interrupt_pipe[1], b"!")

    def _touched(self, event) -> bool:
        # An overflow of the kernel's queue of events may have hidden a touch.
        return event.name == self.path.name or bool(event.mask & flags.Q_OVERFLOW)

    def close(self) -> None:
        if self.notify is not None:
            self.notify.close()
            self.notify = None
            for fd in self.interrupt_pipe:
                os.close(fd)


def _notify_on(folder: Path):
    """An inotify descriptor watching ``folder`` for touches, or None where there is none to be had."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        notify = INotify()
    except (OSError, AttributeError):  # AttributeError: a C library without inotify (not Linux)
        return None
    try:
        notify.add_watch(folder, TOUCHED)
    except OSError:  # no permission, or the system's limit of watches reached
        notify.close()
        return None
    return notify
