"""The README's PostgreSQL + Redis line, ``DATABASE_URL=postgres://… REDIS_URL=redis://… make run``, with no
other environment: it starts (its key from ``var/``), runs a job and streams its events."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import time
import uuid

import aiohttp
import psycopg
import pytest
import requests
from django.db import connection

from tests.e2e.conftest import background, free_port, wait_until_serving
from tests.jobs.helpers import small_png
from tests.ocr_engine import samples

pytestmark = [pytest.mark.e2e]

# The test process's own settings put these in its environment; a newcomer's shell has none of them.
TEST_ONLY = ("SECRET_KEY", "DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL", "CHANNEL_LAYER_PREFIX",
             "CACHE_KEY_PREFIX", "MEDIA_ROOT", "OCR_ALLOW_PRIVATE_URLS", "HTTPS", "METRICS_CACHE_SECONDS",
             "METRICS_PUBLIC", "API_THROTTLE_ANON", "API_THROTTLE_USER", "TEST_DATABASE_NAME")


@pytest.fixture
def fresh_database():
    """The URL of a new, empty PostgreSQL database on the machine's server, dropped afterwards."""
    settings = connection.settings_dict
    name = f"ocr_make_run_{uuid.uuid4().hex[:8]}"
    admin = f"postgresql://{settings['USER']}@{settings['HOST'] or '127.0.0.1'}:{settings['PORT'] or 5432}/postgres"
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(f'CREATE DATABASE "{name}"')
    yield admin.rsplit("/", 1)[0].replace("postgresql://", "postgres://") + f"/{name}"
    with psycopg.connect(admin, autocommit=True) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_readmes_postgresql_line_runs_a_job(fresh_database, tmp_path):
    env = {name: value for name, value in os.environ.items() if name not in TEST_ONLY}
    env.update(DATABASE_URL=fresh_database, REDIS_URL="redis://127.0.0.1:6379/0",
               MEDIA_ROOT=str(tmp_path / "media"))  # the test's files stay out of the checkout's var/
    port = free_port()
    log = tmp_path / "make-run.log"
    with background(["make", "--no-print-directory", "run", f"PORT={port}"], env, log) as make:
        base = f"http://127.0.0.1:{port}"
        wait_until_serving(f"{base}/healthz", make, log, timeout=240)
        token = re.search(r"API token: (\w+)", log.read_text()).group(1)
        auth = {"Authorization": f"Token {token}"}
        submitted = requests.post(f"{base}/api/v1/jobs", headers=auth, files={"file": ("page.png", small_png())},
                                  timeout=60)
        assert submitted.status_code == 202, submitted.text
        job_id = submitted.json()["id"]
        deadline = time.monotonic() + 180
        while (job := requests.get(f"{base}/api/v1/jobs/{job_id}?wait=30", headers=auth, timeout=60).json())[
                "status"] not in ("succeeded", "failed"):
            assert time.monotonic() < deadline, job
        assert job["status"] == "succeeded", job
        # Live events: a second job's, over the WebSocket, through Redis.
        events = asyncio.run(_follow_a_second_job(base, auth))
        assert [event["event"] for event in events][-1] == "succeeded", events
        os.killpg(make.pid, signal.SIGINT)
        make.wait(timeout=60)


async def _follow_a_second_job(base: str, auth: dict) -> list[dict]:
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(f"{base.replace('http', 'ws')}/ws/jobs/", headers=auth) as socket:
            form = aiohttp.FormData()
            form.add_field("file", samples.encode(samples.text_page(dpi=60).image, "PNG"), filename="second.png")
            async with session.post(f"{base}/api/v1/jobs", data=form, headers=auth) as answer:
                assert answer.status == 202
            events = []
            while not events or events[-1]["event"] not in ("succeeded", "failed"):
                events.append(json.loads((await socket.receive(timeout=120)).data))
            return events
