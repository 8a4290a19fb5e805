"""The embedded default's SQLite backend (ocrsite/db_sqlite3): writers queue on a file lock.

Connections are made directly on a temporary file, as the web, worker and scheduler processes
make theirs, so these tests need neither the test database nor a server.
"""

from __future__ import annotations

import multiprocessing
import threading
import time

import pytest
from django.db import OperationalError, connections

from ocrsite.db_sqlite3.base import DatabaseWrapper


ALIAS = "writers"


def connect(path, timeout: float = 30) -> DatabaseWrapper:
    settings_dict = {
        "ENGINE": "ocrsite.db_sqlite3", "NAME": str(path), "USER": "", "PASSWORD": "", "HOST": "", "PORT": "",
        "OPTIONS": {"timeout": timeout, "transaction_mode": "IMMEDIATE",
                    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"},
        "TIME_ZONE": None, "CONN_MAX_AGE": 0, "CONN_HEALTH_CHECKS": False, "AUTOCOMMIT": True,
        "ATOMIC_REQUESTS": False, "TEST": {},
    }
    return DatabaseWrapper(settings_dict, alias=ALIAS)


def begin(connection: DatabaseWrapper) -> None:
    """What ``transaction.atomic`` does on entry, on a connection outside Django's registry."""
    connection.set_autocommit(False, force_begin_transaction_with_broken_autocommit=True)


def commit(connection: DatabaseWrapper) -> None:
    connection.commit()
    connection.set_autocommit(True)


@pytest.fixture(autouse=True)
def own_connections(django_db_blocker):
    with django_db_blocker.unblock():  # these connections are not the test database's
        yield


@pytest.fixture
def database(tmp_path):
    path = tmp_path / "db.sqlite3"
    setup = connect(path)
    setup.cursor().execute("CREATE TABLE counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL)")
    setup.cursor().execute("INSERT INTO counter (id, n) VALUES (1, 0)")
    setup.close()
    return path


def count(path) -> int:
    reader = connect(path)
    try:
        return reader.cursor().execute("SELECT n FROM counter WHERE id = 1").fetchone()[0]
    finally:
        reader.close()


def test_a_write_waits_for_the_open_transaction_and_gets_in_as_it_commits(database):
    holder = connect(database)
    begin(holder)
    holder.cursor().execute("UPDATE counter SET n = n + 1")
    done = threading.Event()

    def write_outside_a_transaction():
        writer = connect(database)
        writer.cursor().execute("UPDATE counter SET n = n + 10")
        writer.close()
        done.set()

    thread = threading.Thread(target=write_outside_a_transaction)
    thread.start()
    assert not done.wait(0.5), "the second writer got in while the first transaction was open"
    committed = time.monotonic()
    commit(holder)
    assert done.wait(5)
    assert time.monotonic() - committed < 0.1  # woken within milliseconds, not SQLite's growing sleeps
    thread.join()
    assert count(database) == 11
    holder.close()


def test_a_writer_that_waits_past_the_timeout_gets_database_is_locked(database):
    holder = connect(database)
    begin(holder)
    holder.cursor().execute("UPDATE counter SET n = n + 1")
    failure = []

    def impatient():
        writer = connect(database, timeout=0.3)
        try:
            begin(writer)
        except OperationalError as exc:
            failure.append(str(exc))
        writer.close()

    thread = threading.Thread(target=impatient)
    started = time.monotonic()
    thread.start()
    thread.join(5)
    assert failure == ["database is locked"]
    assert 0.25 < time.monotonic() - started < 3
    commit(holder)
    holder.close()
    assert count(database) == 1


def increment(path, times: int) -> None:
    connection = connect(path)
    for _ in range(times):
        begin(connection)
        cursor = connection.cursor()
        n = cursor.execute("SELECT n FROM counter WHERE id = 1").fetchone()[0]
        cursor.execute("UPDATE counter SET n = %s WHERE id = 1", [n + 1])
        commit(connection)
    connection.close()


def test_writers_in_several_processes_each_see_the_last_commit(database):
    """Web, worker and scheduler processes read-modify-write the same rows: none is lost, none fails."""
    context = multiprocessing.get_context("fork")  # no connection is open here (SQLite's rule for fork)
    children = [context.Process(target=increment, args=(database, 100)) for _ in range(3)]
    for child in children:
        child.start()
    increment(database, 100)
    for child in children:
        child.join(60)
        assert child.exitcode == 0
    assert count(database) == 400


def hold_until(path, holding, release) -> None:
    connection = connect(path)
    begin(connection)
    connection.cursor().execute("UPDATE counter SET n = n + 1")
    holding.set()
    release.wait(20)
    commit(connection)
    connection.close()


def test_a_child_forked_while_a_thread_waits_for_the_write_lock_can_write(database):
    """Threads of a process queue on a lock of the process before the file. A child forked while a
    thread held that queue's lock (django-q2 forks workers from a process whose event sender thread
    writes) must not inherit it held: it would wait out the timeout on every write."""
    fork = multiprocessing.get_context("fork")  # before this process opens any connection
    holding, release = fork.Event(), fork.Event()
    holder = fork.Process(target=hold_until, args=(database, holding, release))
    holder.start()
    assert holding.wait(10)
    waiter = threading.Thread(target=increment, args=(database, 1))
    waiter.start()  # takes this process's queue, then polls the file the holder has
    time.sleep(0.3)
    child = fork.Process(target=increment, args=(database, 1))
    child.start()
    release.set()
    for process in (holder, child):
        process.join(20)
        assert process.exitcode == 0
    waiter.join(20)
    assert count(database) == 3


def test_a_closed_connection_serves_the_next_thread_and_one_closed_mid_transaction_is_dropped(database):
    """Connections are pooled per process: reused after a clean close, never with a transaction open."""
    first = connect(database)
    first.cursor().execute("UPDATE counter SET n = n + 1")
    raw = first.connection
    first.close()
    reused = []
    thread = threading.Thread(target=lambda: reused.append(connect(database).cursor().connection))
    thread.start()
    thread.join()
    assert reused == [raw]  # the next thread's connection is the pooled one, opened once

    holder = connect(database)
    begin(holder)
    holder.cursor().execute("UPDATE counter SET n = n + 1")
    abandoned = holder.connection
    holder.close()  # mid-transaction: rolled back with the connection, never pooled, lock released
    writer = connect(database, timeout=0.5)
    assert writer.cursor().connection is not abandoned
    writer.cursor().execute("UPDATE counter SET n = n + 10")  # gets the write lock at once
    writer.close()
    assert count(database) == 11


def test_writers_queued_behind_the_lock_share_one_transaction_and_a_failing_one_rolls_back_alone(database):
    """Group commit: threads that queue while another transaction holds the write lock run in one
    transaction, each in a savepoint, and get their own result or exception back."""
    holder = connect(database)
    begin(holder)  # holds the write lock: the first writer leads a batch that waits behind it
    group = holder.group_commit
    results: dict[int, object] = {}

    def write(index: int) -> None:
        connections[ALIAS] = connect(database)  # this thread's connection, as Django makes one per thread

        def increment_on_the_leaders_connection():
            connection = connections[ALIAS]
            connection.cursor().execute("UPDATE counter SET n = n + 1")
            if index == 3:
                raise ValueError("this one fails after writing")
            return id(connection)

        try:
            results[index] = group.run(increment_on_the_leaders_connection)
        except ValueError as error:
            results[index] = error
        finally:
            connections[ALIAS].close()

    threads = [threading.Thread(target=write, args=(index,)) for index in range(8)]
    for thread in threads:
        thread.start()
        time.sleep(0.05)  # the first one leads; the others queue behind it
    commit(holder)
    for thread in threads:
        thread.join(20)

    assert isinstance(results.pop(3), ValueError)
    assert count(database) == 7  # the failed one's write rolled back with its savepoint
    assert len(set(results.values())) == 2  # the first writer's transaction, then one for the seven queued


def test_a_writer_alone_in_its_batch_gets_its_exception_back_and_nothing_it_wrote_stays(database):
    """A batch of one runs without a savepoint of its own: its failure rolls the whole transaction back."""
    connections[ALIAS] = connect(database)
    group = connections[ALIAS].group_commit

    def increment():
        return connections[ALIAS].cursor().execute("UPDATE counter SET n = n + 1").rowcount

    def increment_then_fail():
        increment()
        raise ValueError("quota exceeded after writing")

    try:
        with pytest.raises(ValueError, match="quota exceeded"):
            group.run(increment_then_fail)
        assert count(database) == 0
        assert group.run(increment) == 1  # the next batch leads and commits as usual
        assert count(database) == 1
    finally:
        connections[ALIAS].close()
        del connections[ALIAS]
