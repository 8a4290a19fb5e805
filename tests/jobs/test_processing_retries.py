"""A transient database error inside a job's page loop is retried instead of burning the attempt."""

from __future__ import annotations

import pytest
from django.db import OperationalError

from jobs.services import processing


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    monkeypatch.setattr(processing, "DB_RETRY_DELAY_SECONDS", 0)


def flaky(failures: int):
    calls = []

    def heartbeat(**kwargs):
        calls.append(kwargs)
        if len(calls) <= failures:
            raise OperationalError("database is locked")
        return True

    return heartbeat, calls


@pytest.mark.django_db
def test_a_write_that_fails_transiently_succeeds_on_retry():
    write, calls = flaky(processing.DB_RETRIES - 1)

    assert processing._retrying_db(write, job_id="j", worker_id="w") is True
    assert len(calls) == processing.DB_RETRIES and calls[-1] == {"job_id": "j", "worker_id": "w"}


@pytest.mark.django_db
def test_a_database_that_stays_down_raises_after_the_last_try():
    write, calls = flaky(processing.DB_RETRIES)

    with pytest.raises(OperationalError):
        processing._retrying_db(write, job_id="j", worker_id="w")
    assert len(calls) == processing.DB_RETRIES
