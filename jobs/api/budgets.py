"""Where the API's rate limits keep each client's budget: one number, the time it is spent until.

``take`` checks a budget and spends one call of it in one step. Where the site has Redis, budgets
live in its cache; while Redis is down, limits are not enforced (they fail open, and say so in the
log once a minute). On the embedded default they live in a table of a small SQLite file in shared
memory (``API_RATE_BUDGETS_FILE``), checked and spent by a single statement: the file-based cache
that held them before wrote a temporary file, renamed it and listed its folder on every call,
0.24 ms of a request's CPU for each limit (a submission has two), and two web processes could
both spend the last call of a budget.
"""

from __future__ import annotations

import fcntl
import functools
import logging
import math
import os
import sqlite3
import threading
import time
from pathlib import Path

from django.conf import settings
from django.core.cache import cache

logger = logging.getLogger(__name__)

# Spend one call: a new budget starts at ``now``, time passing gives calls back (``max``), and a
# budget already one ``duration`` ahead of ``now`` is not changed, so no row comes back. A new budget
# too takes no more than it holds: a batch spends one call per member in one take.
_TAKE = ("INSERT INTO budget (key, free_at) SELECT :key, :now + :interval WHERE :interval <= :duration "
         "ON CONFLICT (key) DO UPDATE SET free_at = max(free_at, :now) + :interval "
         "WHERE max(free_at, :now) + :interval - :now <= :duration RETURNING free_at")
# Budgets whose time has passed are full, as absent ones are: removed now and then, so clients
# that come and go (anonymous addresses) do not pile up.
_FORGET_EVERY = 1000  # takes
_FORGET = "DELETE FROM budget WHERE free_at < ?"


def take(key: str, interval: float, duration: float) -> float:
    """Spend one call of ``key``'s budget of ``duration / interval`` calls; returns 0.0, or, when it
    is spent, the seconds until the next call is allowed."""
    path = settings.API_RATE_BUDGETS_FILE
    if not path:
        return _take_from_cache(key, interval, duration)
    return _file_budgets(path).take(key, interval, duration)


def _take_from_cache(key: str, interval: float, duration: float) -> float:
    now = time.time()
    try:
        free_at = max(cache.get(key, now), now) + interval
        if free_at - now > duration:
            return free_at - duration - now
        cache.set(key, free_at, math.ceil(free_at - now))
    except Exception:  # noqa: BLE001 - the cache's server (Redis) is down: the API answers unlimited meanwhile
        _log_outage()
    return 0.0


def _log_outage() -> None:
    """Say once a minute per process that rate limits are off, rather than on every request."""
    global _outage_logged_at
    if time.monotonic() - _outage_logged_at >= 60:
        _outage_logged_at = time.monotonic()
        logger.warning("Rate limits are not enforced: their budgets' cache cannot be reached", exc_info=True)


_outage_logged_at = -math.inf


class _FileBudgets:
    """The budgets table of one SQLite file, through one connection per process."""

    def __init__(self, path: str):
        self.path = path
        self.lock = threading.Lock()
        self.connection: sqlite3.Connection | None = None
        self.takes = 0

    def take(self, key: str, interval: float, duration: float) -> float:
        now = time.time()
        with self.lock:
            connection = self._connection()
            taken = connection.execute(_TAKE, {"key": key, "now": now, "interval": interval,
                                               "duration": duration}).fetchone()
            if taken is None:
                row = connection.execute("SELECT free_at FROM budget WHERE key = ?", [key]).fetchone()
                free_at = row[0] if row else now
                return max(free_at, now) + interval - now - duration  # the statement's order: > 0
            self.takes += 1
            if self.takes % _FORGET_EVERY == 0:
                connection.execute(_FORGET, [now])
        return 0.0

    def _connection(self) -> sqlite3.Connection:
        if self.connection is None:
            Path(self.path).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            # Web processes that start together set the file up together: SQLite answers a second
            # one switching it to WAL with "database is locked" at once, without waiting.
            with open(f"{self.path}.setup", "a") as setup:
                fcntl.flock(setup, fcntl.LOCK_EX)
                connection = sqlite3.connect(self.path, timeout=5, isolation_level=None, check_same_thread=False)
                connection.execute("PRAGMA journal_mode=WAL")
                connection.execute("CREATE TABLE IF NOT EXISTS budget (key TEXT PRIMARY KEY, free_at REAL NOT NULL) "
                                   "WITHOUT ROWID")
            # Budgets need no durability: after a crash, clients only get their full budgets back.
            connection.execute("PRAGMA synchronous=OFF")
            self.connection = connection
        return self.connection


@functools.cache
def _file_budgets(path: str) -> _FileBudgets:
    return _FileBudgets(path)


# SQLite connections must not cross a fork: the child opens its own.
os.register_at_fork(after_in_child=_file_budgets.cache_clear)
