"""Concurrent submits through a real daphne: on PostgreSQL every upload becomes a job and none gets
a 5xx, as on the embedded default while a worker writes (and stops for the web's requests); identical
uploads at once make one job on both databases; the worker cluster runs niced.
"""

from __future__ import annotations

import io
import os
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from PIL import Image
from rest_framework.authtoken.models import Token

from jobs import give_way
from jobs.models import Job
from tests.e2e.conftest import REPO, embedded_default

pytestmark = [pytest.mark.e2e]

CLIENTS = 50


def distinct_png(index: int) -> bytes:
    """A small PNG that differs per index, so deduplication does not merge the submissions."""
    image = Image.new("L", (400, 200), 255)
    image.putpixel((index % 400, index // 400), 0)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def submit_all(base_url: str, token: str, uploads: list[bytes]) -> list[requests.Response]:
    def one(data: bytes) -> requests.Response:
        return requests.post(f"{base_url}/api/v1/jobs", headers={"Authorization": f"Token {token}"},
                             files={"file": ("page.png", data)}, data={"pipeline": "ocr"}, timeout=120)

    with ThreadPoolExecutor(max_workers=len(uploads)) as pool:
        return list(pool.map(one, uploads))


def assert_all_accepted(responses: list[requests.Response]) -> set[str]:
    """202 for a new job, 200 for a deduplicated one; returns the job ids."""
    refused = [(r.status_code, r.text[:200]) for r in responses if r.status_code not in (200, 202)]
    assert not refused
    return {r.json()["id"] for r in responses}


def test_concurrent_submits_while_a_worker_writes_on_the_embedded_default(tmp_path):
    """SQLite + channels-lite + the ORM broker in one file, a worker writing results meanwhile.

    Before WAL and IMMEDIATE transactions four clients already got HTTP 500
    "database is locked". SQLite ignores select_for_update, so only IMMEDIATE
    transactions keep deduplication from making one job per identical request.
    """
    with embedded_default(tmp_path) as (base, token, manage, env):
        distinct = assert_all_accepted(submit_all(base, token, [distinct_png(i) for i in range(CLIENTS)]))
        same = assert_all_accepted(submit_all(base, token, [distinct_png(CLIENTS)] * 10))
        # Room for five more pages today, then twelve at once: the submissions that share a
        # transaction (group commit) each see the ones before them, and the refused ones roll back alone.
        subprocess.run([*manage, "shell", "-c", (
            "from jobs.models import UserSettings; from django.contrib.auth import get_user_model; "
            f"UserSettings.objects.create(user=get_user_model().objects.get(), max_pages_per_day={CLIENTS + 6})")],
            cwd=REPO, env=env, check=True)
        over_quota = submit_all(base, token, [distinct_png(CLIENTS + 1 + i) for i in range(12)])

    assert len(distinct) == CLIENTS and len(same) == 1
    assert sorted(r.status_code for r in over_quota) == [202] * 5 + [429] * 7
    assert {r.json()["code"] for r in over_quota if r.status_code == 429} == {"quota_exceeded"}
    count = subprocess.run(
        [*manage, "shell", "-c", "from jobs.models import Job; print(Job.objects.count())"],
        cwd=REPO, env=env, check=True, capture_output=True, text=True,
    )
    assert count.stdout.split()[-1] == str(CLIENTS + 1 + 5)


@pytest.mark.django_db(transaction=True)
def test_fifty_concurrent_submits_on_postgresql(user, asgi_server):
    token = Token.objects.create(user=user).key

    distinct = assert_all_accepted(submit_all(asgi_server, token, [distinct_png(i) for i in range(CLIENTS)]))
    same = assert_all_accepted(submit_all(asgi_server, token, [distinct_png(CLIENTS)] * 10))

    assert len(distinct) == CLIENTS and len(same) == 1
    assert Job.objects.filter(owner=user).count() == CLIENTS + 1


@pytest.mark.django_db(transaction=True)
def test_the_worker_cluster_runs_below_the_web_process_priority(qcluster):
    process = qcluster()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        if os.getpriority(os.PRIO_PROCESS, process.pid) >= os.getpriority(os.PRIO_PROCESS, 0) + 10:
            break
        time.sleep(0.5)
    assert os.getpriority(os.PRIO_PROCESS, process.pid) >= os.getpriority(os.PRIO_PROCESS, 0) + 10


def process_state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0].decode()


def test_the_embedded_defaults_worker_stops_for_requests_and_is_never_left_stopped(tmp_path):
    """`make run`'s worker records itself for the web processes to stop while they answer
    (``jobs.give_way``); one left stopped with no request in flight, as a web process killed
    mid-request leaves it, is let go by the cluster, and its job still ends."""
    with embedded_default(tmp_path) as (base, token, manage, env):
        database = str(tmp_path / "db.sqlite3")
        deadline = time.monotonic() + 120
        while not (workers := give_way.registered_workers(database)):
            assert time.monotonic() < deadline, "no worker recorded itself"
            time.sleep(0.2)
        (worker,) = workers
        assert b"qcluster" in Path(f"/proc/{worker}/cmdline").read_bytes()
        os.kill(worker, signal.SIGSTOP)
        deadline = time.monotonic() + 2
        while process_state(worker) != "T":  # it stops as it next runs (read without pause: the watch may be quick)
            assert time.monotonic() < deadline
        deadline = time.monotonic() + 2
        while process_state(worker) == "T":  # no request is made meanwhile: the cluster's watch lets it go
            assert time.monotonic() < deadline, "the worker was left stopped"
            time.sleep(0.05)
        submitted = submit_all(base, token, [distinct_png(0)])[0]
        assert submitted.status_code == 202
        job_url = f"{base}/api/v1/jobs/{submitted.json()['id']}"
        job = requests.get(f"{job_url}?wait=30", headers={"Authorization": f"Token {token}"}, timeout=60).json()
        assert job["status"] == "succeeded", job
