"""A client's WebSocket frames against a real web server (uvicorn, started with ``--ws-max-size`` as `make run`
and docker/ start it): a frame over the limit closes the socket before it is buffered, one within it is dropped
unread, and the job's events keep coming."""

from __future__ import annotations

import asyncio
import time

import aiohttp
import pytest
import requests
from rest_framework.authtoken.models import Token

from tests.e2e.conftest import WS_MAX_SIZE
from tests.jobs.factories import JobFactory

pytestmark = pytest.mark.e2e

MESSAGE_TOO_BIG = 1009  # RFC 6455


async def open_socket(session: aiohttp.ClientSession, base: str, job_id, token: str):
    ws = await session.ws_connect(f"{base.replace('http', 'ws')}/ws/jobs/{job_id}/",
                                  headers={"Authorization": f"Token {token}"})
    assert (await ws.receive_json(timeout=10))["event"] == "state"
    return ws


async def frames(base: str, job_id, token: str) -> tuple[int | None, float, list[dict]]:
    async with aiohttp.ClientSession() as session:
        big = await open_socket(session, base, job_id, token)
        started = time.monotonic()
        # 16 times the limit, small enough to sit in the socket's buffers whole (uvicorn's default limit,
        # 16 MiB, let a frame that size through to be JSON-parsed on the event loop).
        await big.send_str("x" * (16 * WS_MAX_SIZE))
        closing = await big.receive(timeout=10)
        refused_in = time.monotonic() - started
        close_code = big.close_code if closing.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED) else None

        small = await open_socket(session, base, job_id, token)
        await small.send_str("{not json" + "x" * (WS_MAX_SIZE - 100))
        await small.send_bytes(b"\x00" * 100)
        cancel = await asyncio.to_thread(requests.post, f"{base}/api/v1/jobs/{job_id}/cancel", timeout=10,
                                         headers={"Authorization": f"Token {token}"})
        assert cancel.status_code == 200, cancel.text
        events = [await small.receive_json(timeout=10)]
        await small.close()
    return close_code, refused_in, events


@pytest.mark.django_db(transaction=True)
def test_a_large_frame_is_refused_and_a_small_one_ignored(user, asgi_server):
    token = Token.objects.create(user=user).key
    job = JobFactory(owner=user, document__page_count=1)

    close_code, refused_in, events = asyncio.run(frames(asgi_server, job.pk, token))

    assert close_code == MESSAGE_TOO_BIG and refused_in < 2
    assert [(e["event"], e["status"]) for e in events] == [("canceled", "canceled")]
