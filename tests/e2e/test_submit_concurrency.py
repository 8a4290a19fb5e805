"""Concurrent submits through a real web server (uvicorn): on PostgreSQL, and on the embedded default's
SQLite while a worker writes, every upload becomes a job and none gets a 5xx; identical uploads at
once make one job on both databases; the worker cluster runs niced.
"""

from __future__ import annotations

import io
import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from PIL import Image
from rest_framework.authtoken.models import Token

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
        # Room for five more pages today, then twelve at once: each submission's transaction sees the
        # ones committed before it, and the refused ones roll back alone.
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
