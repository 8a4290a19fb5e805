"""Django's SQLite backend, with writers queued on a file lock instead of SQLite's busy handler.

SQLite lets one writer in at a time. The others retry in sleeps that grow to 100 ms
(``sqlite3_busy_timeout``), so a writer that lost a few rounds waited a second: with 20
clients submitting at once, submit p95 was 1.4 s while the median was 0.1 s. Here every
write, whether a transaction from ``BEGIN IMMEDIATE`` to its end or a single write
statement in autocommit, first takes an exclusive ``flock`` on ``<database>.writelock``.
The waiter retries every 2 ms at most, so it gets in within 2 ms of the lock being free.
Web, worker and scheduler processes and their threads all queue this way. Each
connection has its own lock file description, so the threads of one process exclude
each other too.

Readers take no lock: in WAL mode they never wait for the writer. SQLite's busy
timeout stays as the fallback for a writer from outside (the ``sqlite3`` shell).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time

from django.db import OperationalError
from django.db.backends.sqlite3 import base

WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER")
LONGEST_PAUSE = 0.002  # seconds between tries: how late a waiter may see the lock freed


class WriteLock:
    """An exclusive flock on one file, polled until ``timeout`` seconds (then "database is locked")."""

    def __init__(self, path: str, timeout: float):
        self.path, self.timeout = path, timeout
        self.fd: int | None = None
        self.held = False

    def acquire(self) -> None:
        if self.fd is None:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline, pause = None, 0.0001
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                now = time.monotonic()
                deadline = deadline or now + self.timeout
                if now >= deadline:
                    raise OperationalError("database is locked") from None
                time.sleep(pause)
                pause = min(pause * 2, LONGEST_PAUSE)
            else:
                self.held = True
                return

    def release(self) -> None:
        if self.held:
            self.held = False
            fcntl.flock(self.fd, fcntl.LOCK_UN)

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


class DatabaseWrapper(base.DatabaseWrapper):
    def get_new_connection(self, conn_params):
        connection = super().get_new_connection(conn_params)
        name = str(self.settings_dict["NAME"])
        in_memory = self.is_in_memory_db() or name.startswith("file:")
        timeout = float(self.settings_dict["OPTIONS"].get("timeout", 5))
        self.write_lock = None if in_memory else WriteLock(name + ".writelock", timeout)
        return connection

    def create_cursor(self, name=None):
        cursor = self.connection.cursor(factory=WriteLockedCursor)
        cursor.wrapper = self
        return cursor

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
        try:
            super()._close()
        finally:
            if getattr(self, "write_lock", None) is not None:
                self.write_lock.close()

    def _release_write_lock(self):
        if getattr(self, "write_lock", None) is not None:
            self.write_lock.release()
