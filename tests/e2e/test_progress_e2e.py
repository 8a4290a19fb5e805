"""A real qcluster's progress events reach a WebSocket client through a real daphne, on both channel layers.

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

import aiohttp
import pytest
import requests
from rest_framework.authtoken.models import Token

from tests.e2e.conftest import embedded_default
from tests.jobs.helpers import small_png

pytestmark = [pytest.mark.e2e, pytest.mark.models]

FINAL = {"succeeded", "failed", "canceled"}


async def follow_one_job(base_url: str, token: str, timeout: float = 240) -> tuple[str, list[dict]]:
    """Connect to ws/jobs/, submit a one-page PNG over the API, collect that job's messages until it ends."""
    headers = {"Authorization": f"Token {token}"}
    async with aiohttp.ClientSession() as session:
        async with session.ws_connect(base_url.replace("http", "ws") + "/ws/jobs/", headers=headers) as ws:
            response = await asyncio.to_thread(
                requests.post, f"{base_url}/api/v1/jobs", headers=headers, timeout=30,
                files={"file": ("note.png", small_png())}, data={"pipeline": "ocr"})
            assert response.status_code == 202, response.text
            job_id, messages = response.json()["id"], []
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
