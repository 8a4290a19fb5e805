"""A web process's short requests, one after another on one thread, while each one is quick.

Twenty submits arriving at once used to run on as many threads of a process as arrived, taking
turns on the interpreter lock, so that they were all answered together near the end of the burst.
One after another, each is answered once its own work is done, for the same CPU: on a fast VM the
18th answer of twenty came 10-15 % sooner; on a slow one the median answer came sooner and the last
ones did not, since they wait for the whole burst's CPU either way (docs/benchmarks.md, 2026-11-29).
A slow request (a large export) must not hold up the process's others, so once the running one has
taken ``patience`` seconds, the requests queued behind it, and those that arrive while it runs, go to
the process's pool of threads instead. (Large uploads, slow requests known as they arrive, never take
the lane: ``ocrsite.asgi``.)
"""

from __future__ import annotations

import threading
import time
from collections import deque
from concurrent.futures import Executor, Future


class RequestLane(Executor):
    """Runs what it is given in order on one thread of its own; hands work to ``overflow`` while one
    item has been running for ``patience`` seconds or more."""

    def __init__(self, overflow: Executor, patience: float, name: str = "lane"):
        self.overflow, self.patience = overflow, patience
        self.queue: deque[tuple[Future, object, tuple, dict]] = deque()
        lock = threading.Lock()
        self.work = threading.Condition(lock)  # the lane's thread waits here for an item
        self.watch = threading.Condition(lock)  # the watchdog waits here for an item queued behind another
        self.started_at: float | None = None  # when the running item started; None while the lane is idle
        self.watchdog_idle = False
        threading.Thread(target=self._run, name=name, daemon=True).start()
        threading.Thread(target=self._watch, name=f"{name}-watchdog", daemon=True).start()

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        with self.work:
            if self._running_long():
                self._hand_over(future, fn, args, kwargs)
                return future
            self.queue.append((future, fn, args, kwargs))
            self.work.notify()
            if self.started_at is not None and self.watchdog_idle:
                self.watch.notify()
        return future

    def _running_long(self) -> bool:
        return self.started_at is not None and time.monotonic() - self.started_at >= self.patience

    def _hand_over(self, future: Future, fn, args, kwargs) -> None:
        self.overflow.submit(_call, future, fn, args, kwargs)

    def _run(self) -> None:
        while True:
            with self.work:
                while not self.queue:
                    self.work.wait()
                future, fn, args, kwargs = self.queue.popleft()
                self.started_at = time.monotonic()
                if self.queue and self.watchdog_idle:  # queued while the lane was between two items
                    self.watch.notify()
            _call(future, fn, args, kwargs)
            with self.work:
                self.started_at = None

    def _watch(self) -> None:
        """Hands the queue over once the running item has run for ``patience``.

        It sleeps until that moment for the item running when it looked; a later item moves the
        moment later, so it looks again then, and it is woken only for an item queued while it idles.
        """
        with self.watch:
            while True:
                if self.started_at is None or not self.queue:
                    self.watchdog_idle = True
                    self.watch.wait()
                    self.watchdog_idle = False
                    continue
                left = self.started_at + self.patience - time.monotonic()
                if left > 0:
                    self.watch.wait(left)
                    continue
                while self.queue:
                    self._hand_over(*self.queue.popleft())


def _call(future: Future, fn, args, kwargs) -> None:
    if not future.set_running_or_notify_cancel():
        return
    try:
        result = fn(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - the caller gets it from the future
        future.set_exception(exc)
    else:
        future.set_result(result)
