"""A real qcluster's progress events reach a WebSocket client through a real web server (uvicorn), on both channel layers.

* Redis (the layer of PostgreSQL deployments and of the test settings).
* The embedded default: SQLite and channels-lite, no servers at all. Worker
  and web are separate processes, so this is the path an in-memory layer
  would silently break.

The client is an API client: it authenticates with ``Authorization: Token``
on the handshake and follows ``ws/jobs/`` (all of its user's jobs) from
before the job exists, so it must see every event of it.
"""

from __future__ import annotations

import asyncio
import re
import subprocess

import aiohttp
import pytest
import requests
from rest_framework.authtoken.models import Token

from tests.e2e.conftest import REPO, embedded_default
from tests.jobs.helpers import small_png

pytestmark = [pytest.mark.e2e, pytest.mark.models]

FINAL = {"succeeded", "failed", "canceled"}


def submit_over_the_api(base_url: str, token: str) -> str:
    response = requests.post(f"{base_url}/api/v1/jobs", headers={"Authorization": f"Token {token}"}, timeout=30,
                             files={"file": ("note.png", small_png())}, data={"pipeline": "ocr"})
    assert response.status_code == 202, response.text
    return response.json()["id"]


async def follow_one_job(base_url: str, token: str, submit=submit_over_the_api, timeout: float = 240
                         ) -> tuple[str, list[dict]]:
    """Connect to ws/jobs/, submit a one-page PNG (``submit(base_url, token)`` returns the job id),
    collect that job's messages until it ends."""
    headers = {"Authorization": f"Token {token}"}
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(base_url.replace("http", "ws") + "/ws/jobs/", headers=headers) as ws:
            job_id, messages = await asyncio.to_thread(submit, base_url, token), []
            async with asyncio.timeout(timeout):
                while not messages or messages[-1]["status"] not in FINAL:
                    message = await ws.receive_json()
                    if message["job"]["id"] == job_id:
                        messages.append(message)
    return job_id, messages


def assert_full_progress(messages: list[dict]) -> None:
    assert [m["event"] for m in messages] == ["queued", "started", "page_done", "succeeded"], messages
    assert [m["status"] for m in messages] == ["queued", "running", "running", "succeeded"]
    page = messages[2]
    assert (page["page_number"], page["page_status"]) == (1, "succeeded") and page["line_count"] > 0
    assert page["job"]["pages_done"] == 1 and page["timings"]["ocr"] > 0


@pytest.mark.django_db(transaction=True)
def test_worker_events_reach_a_websocket_client_over_redis(user, asgi_server, qcluster):  # noqa: F811
    token = Token.objects.create(user=user).key
    qcluster()

    job_id, messages = asyncio.run(follow_one_job(asgi_server, token))

    assert_full_progress(messages)
    assert all(m["job"]["id"] == job_id for m in messages)


def test_worker_events_reach_a_websocket_client_on_the_embedded_default(tmp_path):
    """SQLite + channels-lite: what `make run` gives without DATABASE_URL and REDIS_URL."""
    with embedded_default(tmp_path) as (base, token, _, _):
        job_id, messages = asyncio.run(follow_one_job(base, token))

    assert_full_progress(messages)
    assert all(m["job"]["id"] == job_id for m in messages)


def test_a_job_queued_from_the_command_line_is_announced_before_the_command_exits(tmp_path):
    """``manage.py ocr_submit --no-wait`` publishes "queued" and exits at once: the event still goes out."""
    with embedded_default(tmp_path) as (base, token, manage, env):
        document = tmp_path / "note.png"
        document.write_bytes(small_png())
        errors: list[str] = []

        def submit_from_the_command_line(base_url: str, token: str) -> str:
            done = subprocess.run([*manage, "ocr_submit", str(document), "--pipeline", "ocr", "--no-wait"],
                                  cwd=REPO, env=env, capture_output=True, text=True, check=True)
            errors.append(done.stderr)
            return re.search(r"Job ([0-9a-f-]{36}) queued", done.stdout).group(1)

        job_id, messages = asyncio.run(follow_one_job(base, token, submit_from_the_command_line))

    assert "Could not publish" not in errors[0], errors[0]
    assert_full_progress(messages)
