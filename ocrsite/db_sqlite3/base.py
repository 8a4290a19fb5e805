"""Django's SQLite backend, with writers queued on a file lock instead of SQLite's busy handler.

SQLite lets one writer in at a time. The others retry in sleeps that grow to 100 ms
(``sqlite3_busy_timeout``), so a writer that lost a few rounds waited a second: with 20
clients submitting at once, submit p95 was 1.4 s while the median was 0.1 s. Here every
write, whether a transaction from ``BEGIN IMMEDIATE`` to its end or a single write
statement in autocommit, first takes an exclusive ``flock`` on ``<database>.writelock``.
The waiter retries every 2 ms at most, so it gets in within 2 ms of the lock being free.
Web, worker and scheduler processes all queue this way. The threads of one process first
queue on a lock of the process (``_process_gate``), so one thread per process polls the
file: in a burst of 20 submits, 18 threads polling every 2 ms took the interpreter lock
from the one thread that held the write lock and had work to finish. The gate is handed
to the next thread of the process the moment it is released. Code that writes in bursts can
also share one transaction among the threads waiting to write (``group_commit``).

Readers take no lock: in WAL mode they never wait for the writer. SQLite's busy
timeout stays as the fallback for a writer from outside (the ``sqlite3`` shell).

Connections are pooled per process. Under ASGI every request runs on a thread of its
own, so Django opened and closed a connection per request (``CONN_MAX_AGE`` cannot keep
one), and each new one registers Django's SQL functions and runs the PRAGMAs: 1 ms of
CPU a request. A closed connection outside a transaction now waits in the pool, with
its write lock's file, for the next thread of the process.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from collections.abc import Callable

from django.db import OperationalError, connections
from django.db.backends.sqlite3 import base

from ocrsite.db_sqlite3.group_commit import GroupCommit

WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER")
LONGEST_PAUSE = 0.002  # seconds between tries: how late a waiter may see the lock freed
# Called with the lock file's path by each writer that has waited LONG_WAIT_SECONDS for the lock: where
# the web stops the workers while it answers (jobs.give_way), one of them may hold it.
long_wait_hooks: list[Callable[[str], None]] = []
LONG_WAIT_SECONDS = 0.02
# Idle connections a process keeps per database file: as many as a web process starts request
# threads before it listens (``ocrsite.asgi.WARM_REQUEST_THREADS``), so that a burst of submits
# on all of them opens none.
POOL_SIZE = 16


_process_gates: dict[str, threading.Lock] = {}
_process_groups: dict[tuple[str, str], GroupCommit] = {}
_process_state_lock = threading.Lock()


def _process_gate(path: str) -> threading.Lock:
    """The lock the threads of this process take before they try the write lock file ``path``."""
    with _process_state_lock:
        return _process_gates.setdefault(path, threading.Lock())


def _process_group(path: str, alias: str) -> GroupCommit:
    with _process_state_lock:
        return _process_groups.setdefault((path, alias), GroupCommit(alias))


def _new_process_state() -> None:
    # A child forked while another thread held a gate, or led a group, would find it held forever.
    global _process_gates, _process_groups, _process_state_lock
    _process_gates, _process_groups, _process_state_lock = {}, {}, threading.Lock()


os.register_at_fork(after_in_child=_new_process_state)


class WriteLock:
    """An exclusive flock on one file, polled until ``timeout`` seconds (then "database is locked")."""

    def __init__(self, path: str, timeout: float):
        self.path, self.timeout = path, timeout
        self.fd: int | None = None
        self.held = False
        self.gate: threading.Lock | None = None

    def acquire(self) -> None:
        deadline = time.monotonic() + self.timeout
        self.gate = _process_gate(self.path)  # looked up each time: a forked child has new gates
        if not self.gate.acquire(timeout=self.timeout):
            raise OperationalError("database is locked")
        try:
            self._acquire_file(deadline)
        except BaseException:
            self.gate.release()
            raise
        self.held = True

    def _acquire_file(self, deadline: float) -> None:
        if self.fd is None:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        pause = 0.0001
        long_wait_at = time.monotonic() + LONG_WAIT_SECONDS
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                now = time.monotonic()
                if now >= deadline:
                    raise OperationalError("database is locked") from None
                if now >= long_wait_at:
                    long_wait_at = deadline
                    for hook in long_wait_hooks:
                        hook(self.path)
                time.sleep(pause)
                pause = min(pause * 2, LONGEST_PAUSE)

    def release(self) -> None:
        if self.held:
            self.held = False
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            self.gate.release()

    def __enter__(self) -> None:
        self.acquire()

    def __exit__(self, *exc_info) -> None:
        self.release()

    def close(self) -> None:
        self.release()
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class WriteLockedCursor(base.SQLiteCursorWrapper):
    """Takes the write lock around a write statement run outside a transaction."""

    wrapper: DatabaseWrapper

    def execute(self, query, params=None):
        with self.wrapper.write_statement(query):
            return super().execute(query, params)

    def executemany(self, query, param_list):
        with self.wrapper.write_statement(query):
            return super().executemany(query, param_list)


class ConnectionPool:
    """Idle connections of this process, by database file, each with its write lock."""

    def __init__(self):
        self.lock = threading.Lock()
        self.idle: dict[str, list[tuple]] = {}

    def take(self, name: str) -> tuple | None:
        with self.lock:
            idle = self.idle.get(name)
            return idle.pop() if idle else None

    def give(self, name: str, connection, write_lock: WriteLock) -> bool:
        """Keep an idle connection; False when the pool is full (the caller closes it)."""
        with self.lock:
            idle = self.idle.setdefault(name, [])
            if len(idle) >= POOL_SIZE:
                return False
            idle.append((connection, write_lock))
            return True

    def close_all(self) -> None:
        with self.lock:
            for connection, write_lock in (pair for idle in self.idle.values() for pair in idle):
                connection.close()
                write_lock.close()
            self.idle.clear()


_pool = ConnectionPool()
# SQLite forbids using a connection in a forked child, and one closed there could checkpoint
# and remove the WAL file the parent still writes: idle connections are closed before a fork.
os.register_at_fork(before=_pool.close_all)


class DatabaseWrapper(base.DatabaseWrapper):
    def _database_file(self) -> str | None:
        """The database's file, which connections are pooled and writes locked for; None in memory."""
        name = str(self.settings_dict["NAME"])
        return None if self.is_in_memory_db() or name.startswith("file:") else name

    def get_new_connection(self, conn_params):
        name = self._database_file()
        timeout = float(self.settings_dict["OPTIONS"].get("timeout", 5))
        pooled = None if name is None else _pool.take(name)
        if pooled is not None:
            connection, self.write_lock = pooled
            self.write_lock.timeout = timeout
            return connection
        connection = super().get_new_connection(conn_params)
        # SQLite reads the schema (every table and index of the site) on a connection's first
        # statement that names a table: 0.6 ms of CPU. Read now, so that a connection opened ahead
        # of the requests (ocrsite.asgi) spares the first request on it that cost.
        connection.execute("SELECT 1 FROM sqlite_master LIMIT 0").fetchall()
        self.write_lock = None if name is None else WriteLock(name + ".writelock", timeout)
        return connection

    def fill_pool(self, count: int) -> None:
        """Open connections until this process's pool holds ``count`` idle ones (at most ``POOL_SIZE``).

        Each is opened whole, schema read, by a wrapper of its own, and all are held until the
        last is open: given back one by one, the next would take the same one from the pool.
        """
        if self._database_file() is None:
            return
        opened = []
        try:
            for _ in range(min(count, POOL_SIZE)):
                wrapper = connections.create_connection(self.alias)
                opened.append(wrapper)
                wrapper.ensure_connection()
        finally:
            for wrapper in opened:
                wrapper.close()

    def create_cursor(self, name=None):
        cursor = self.connection.cursor(factory=WriteLockedCursor)
        cursor.wrapper = self
        return cursor

    @property
    def group_commit(self) -> GroupCommit | None:
        """Write transactions shared by the threads of this process (None for an in-memory database)."""
        name = self._database_file()
        return None if name is None else _process_group(name, self.alias)

    def write_statement(self, query: str) -> WriteLock | contextlib.nullcontext:
        """The write lock for ``query`` when it writes outside a transaction (which holds the lock already)."""
        outside_transaction = self.write_lock is not None and self.get_autocommit()
        if outside_transaction and query.lstrip()[:7].upper().startswith(WRITES):
            return self.write_lock
        return contextlib.nullcontext()

    def _start_transaction_under_autocommit(self):
        if self.write_lock is not None:
            self.write_lock.acquire()
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self._release_write_lock()
            raise

    def _commit(self):
        try:
            super()._commit()
        finally:
            self._release_write_lock()

    def _rollback(self):
        try:
            super()._rollback()
        finally:
            self._release_write_lock()

    def _close(self):
        write_lock = getattr(self, "write_lock", None)
        reusable = (write_lock is not None and not write_lock.held and not self.errors_occurred
                    and not self.connection.in_transaction)
        if reusable and _pool.give(str(self.settings_dict["NAME"]), self.connection, write_lock):
            return
        try:
            super()._close()
        finally:
            if write_lock is not None:
                write_lock.close()

    def _release_write_lock(self):
        if getattr(self, "write_lock", None) is not None:
            self.write_lock.release()
