"""WebSocket consumers through the real ASGI application and the real channel layer (Redis in tests).

Each scenario runs as one coroutine under ``async_to_sync``. The tests commit
for real (``transaction=True``): ``database_sync_to_async`` closes connections
that sit inside a transaction, as Channels documents. Events come from the real
services, which publish through ``jobs.progress`` once their changes commit.
"""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client
from rest_framework.authtoken.models import Token

from jobs import services
from jobs.models import Job
from jobs.progress import CLOSE_JOB_DELETED, CLOSE_TOKEN_REVOKED
from jobs.services.accounts import api_token_regenerate
from tests.jobs.factories import JobFactory, PageResultFactory
from tests.jobs.helpers import TESTER, page_record

pytestmark = pytest.mark.django_db(transaction=True)

TIMEOUT = 5


@pytest.fixture
def application():
    """The site's ASGI app. Imported once the test environment has added "testserver" to ALLOWED_HOSTS,
    which the WebSocket Origin check reads when the app is built."""
    from ocrsite.asgi import application as app

    return app


def session_headers(user, origin: str = "http://testserver") -> list[tuple[bytes, bytes]]:
    client = Client()
    client.force_login(user)
    headers = [(b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]
    return headers + ([(b"origin", origin.encode())] if origin else [])


def token_headers(user) -> list[tuple[bytes, bytes]]:
    key = Token.objects.get_or_create(user=user)[0].key
    return [(b"authorization", f"Token {key}".encode())]


def run(scenario):
    return async_to_sync(scenario)()


def test_job_socket_sends_state_on_connect(application, user):
    job = JobFactory(owner=user, status=Job.Status.RUNNING, pages_done=1, pages_total=2,
                     document__page_count=2)
    PageResultFactory(job=job, page_number=1, line_count=7, region_count=2)
    headers = session_headers(user)

    async def scenario():
        ws = WebsocketCommunicator(application, f"/ws/jobs/{job.pk}/", headers=headers)
        connected, _ = await ws.connect()
        assert connected
        state = await ws.receive_json_from(TIMEOUT)
        await ws.disconnect()
        return state

    state = run(scenario)
    assert state["event"] == "state" and state["status"] == "running"
    assert state["job"]["id"] == str(job.pk) and (state["job"]["pages_done"], state["job"]["pages_total"]) == (1, 2)
    assert state["pages"] == [{"page_number": 1, "page_status": "succeeded", "line_count": 7, "region_count": 2}]


def test_job_socket_forwards_worker_events_in_order(application, user):
    job = JobFactory(owner=user, document__page_count=2)
    headers = session_headers(user)

    async def scenario():
        ws = WebsocketCommunicator(application, f"/ws/jobs/{job.pk}/", headers=headers)
        assert (await ws.connect())[0]
        messages = [await ws.receive_json_from(TIMEOUT)]

        @database_sync_to_async
        def work():  # what a worker does, through the real services
            services.job_claim(job_id=job.pk, worker_id="w1")
            services.job_record_page(job_id=job.pk, worker_id="w1", record=page_record(1))
            services.job_record_page(job_id=job.pk, worker_id="w1", record=page_record(2))
            services.job_finish(job_id=job.pk, worker_id="w1")

        await work()
        for _ in range(4):
            messages.append(await ws.receive_json_from(TIMEOUT))
        assert await ws.receive_nothing(0.3)
        await ws.disconnect()
        return messages

    messages = run(scenario)
    assert [m["event"] for m in messages] == ["state", "started", "page_done", "page_done", "succeeded"]
    assert [m["status"] for m in messages] == ["queued", "running", "running", "running", "succeeded"]
    assert all(m["job"]["id"] == str(job.pk) for m in messages)
    assert [m["job"]["pages_done"] for m in messages] == [0, 0, 1, 2, 2]
    first_page = messages[2]
    assert (first_page["page_number"], first_page["page_status"], first_page["line_count"]) == (1, "succeeded", 2)
    assert "type" not in first_page


def test_frames_from_the_client_are_dropped_unread_and_events_still_arrive(application, user):
    job = JobFactory(owner=user, document__page_count=1)
    headers = token_headers(user)

    async def scenario():
        ws = WebsocketCommunicator(application, f"/ws/jobs/{job.pk}/", headers=headers)
        assert (await ws.connect())[0]
        messages = [await ws.receive_json_from(TIMEOUT)]
        await ws.send_to(text_data="{not json" + "x" * 3000)  # would fail a JSON decoder
        await ws.send_to(bytes_data=b"\x00\xff" * 100)
        assert await ws.receive_nothing(0.3)  # no answer, no close

        @database_sync_to_async
        def cancel():
            services.job_cancel(job=Job.objects.get(pk=job.pk), by=TESTER)

        await cancel()
        messages.append(await ws.receive_json_from(TIMEOUT))
        await ws.disconnect()
        return messages

    messages = run(scenario)
    assert [(m["event"], m["status"]) for m in messages] == [("state", "queued"), ("canceled", "canceled")]


def test_another_users_job_is_refused_at_the_handshake(application, user, other_user):
    job = JobFactory(owner=other_user)
    attempts = (
        (f"/ws/jobs/{job.pk}/", session_headers(user)),  # someone else's job
        (f"/ws/jobs/{job.pk}/", token_headers(user)),
        ("/ws/jobs/not-a-uuid/", session_headers(user)),
        (f"/ws/jobs/{job.pk}/", []),  # nobody logged in
        ("/ws/jobs/", []),
    )

    async def scenario():
        results = []
        for path, headers in attempts:
            ws = WebsocketCommunicator(application, path, headers=headers)
            results.append((await ws.connect())[0])
            await ws.disconnect()
        return results

    assert run(scenario) == [False, False, False, False, False]


def test_session_socket_from_another_site_is_refused(application, user):
    job = JobFactory(owner=user)
    foreign, missing = session_headers(user, "http://evil.example"), session_headers(user, "")

    async def scenario():
        results = []
        for headers in (foreign, missing):
            ws = WebsocketCommunicator(application, f"/ws/jobs/{job.pk}/", headers=headers)
            results.append((await ws.connect())[0])
            await ws.disconnect()
        return results

    assert run(scenario) == [False, False]


def test_token_client_follows_its_job_without_origin(application, user):
    job = JobFactory(owner=user)
    headers = token_headers(user)

    async def scenario():
        ws = WebsocketCommunicator(application, f"/ws/jobs/{job.pk}/", headers=headers)
        assert (await ws.connect())[0]
        state = await ws.receive_json_from(TIMEOUT)
        await database_sync_to_async(services.job_claim)(job_id=job.pk, worker_id="w1")
        started = await ws.receive_json_from(TIMEOUT)
        await ws.disconnect()

        bad = WebsocketCommunicator(application, f"/ws/jobs/{job.pk}/", headers=[(b"authorization", b"Token nope")])
        refused = not (await bad.connect())[0]
        await bad.disconnect()
        return state, started, refused

    state, started, refused = run(scenario)
    assert (state["event"], state["status"]) == ("state", "queued")
    assert (started["event"], started["status"]) == ("started", "running")
    assert refused


def test_a_deactivated_users_token_opens_no_socket(application, user):
    job = JobFactory(owner=user)
    headers = token_headers(user)
    user.is_active = False
    user.save()

    async def scenario():
        ws = WebsocketCommunicator(application, f"/ws/jobs/{job.pk}/", headers=headers)
        connected = (await ws.connect())[0]
        await ws.disconnect()
        return connected

    assert run(scenario) is False


def test_user_socket_streams_only_the_users_own_jobs(application, user, other_user):
    active = JobFactory(owner=user, status=Job.Status.RUNNING)
    JobFactory(owner=user, status=Job.Status.SUCCEEDED)
    others = JobFactory(owner=other_user)
    headers = token_headers(user)

    async def scenario():
        ws = WebsocketCommunicator(application, "/ws/jobs/", headers=headers)
        assert (await ws.connect())[0]
        messages = [await ws.receive_json_from(TIMEOUT)]  # one state per active job

        @database_sync_to_async
        def cancel_both():
            services.job_cancel(job=others, by=TESTER)
            services.job_cancel(job=active, by=TESTER)

        await cancel_both()
        messages.append(await ws.receive_json_from(TIMEOUT))
        assert await ws.receive_nothing(0.3)
        await ws.disconnect()
        return messages

    state, canceled = run(scenario)
    assert (state["event"], state["status"], state["job"]["id"]) == ("state", "running", str(active.pk))
    assert (canceled["event"], canceled["status"], canceled["job"]["id"]) == ("canceled", "canceled", str(active.pk))


def test_a_new_api_token_closes_the_sockets_of_the_old_one(application, user):
    job = JobFactory(owner=user)
    by_token, by_session = token_headers(user), session_headers(user)

    async def scenario():
        job_socket = WebsocketCommunicator(application, f"/ws/jobs/{job.pk}/", headers=by_token)
        user_socket = WebsocketCommunicator(application, "/ws/jobs/", headers=by_token)
        browser = WebsocketCommunicator(application, f"/ws/jobs/{job.pk}/", headers=by_session)
        for ws in (job_socket, user_socket, browser):
            assert (await ws.connect())[0]
        await job_socket.receive_json_from(TIMEOUT)  # the job's state
        await browser.receive_json_from(TIMEOUT)
        await user_socket.receive_json_from(TIMEOUT)  # the queued job's state

        await database_sync_to_async(api_token_regenerate)(user=user)
        closes = [await job_socket.receive_output(TIMEOUT), await user_socket.receive_output(TIMEOUT)]
        browser_still_open = await browser.receive_nothing(0.3)
        await browser.disconnect()

        reopened = WebsocketCommunicator(application, f"/ws/jobs/{job.pk}/", headers=by_token)
        refused = not (await reopened.connect())[0]
        await reopened.disconnect()
        return closes, browser_still_open, refused

    closes, browser_still_open, refused = run(scenario)
    assert closes == [{"type": "websocket.close", "code": CLOSE_TOKEN_REVOKED}] * 2 == [
        {"type": "websocket.close", "code": 4401}] * 2
    assert browser_still_open  # the session did not change
    assert refused  # the old key opens nothing any more


def test_deleting_a_job_closes_its_sockets_and_keeps_the_users_stream(application, user):
    job, other = JobFactory(owner=user, status=Job.Status.RUNNING), JobFactory(owner=user)
    headers = token_headers(user)

    async def scenario():
        job_socket = WebsocketCommunicator(application, f"/ws/jobs/{job.pk}/", headers=headers)
        other_socket = WebsocketCommunicator(application, f"/ws/jobs/{other.pk}/", headers=headers)
        user_socket = WebsocketCommunicator(application, "/ws/jobs/", headers=headers)
        for ws in (job_socket, other_socket, user_socket):
            assert (await ws.connect())[0]
        await job_socket.receive_json_from(TIMEOUT)
        await other_socket.receive_json_from(TIMEOUT)
        for _ in range(2):  # both jobs are active
            await user_socket.receive_json_from(TIMEOUT)

        await database_sync_to_async(services.job_delete)(job=job, by=TESTER)
        closed = await job_socket.receive_output(TIMEOUT)
        others_open = await other_socket.receive_nothing(0.3) and await user_socket.receive_nothing(0.1)
        await database_sync_to_async(services.job_cancel)(job=other, by=TESTER)
        canceled = await user_socket.receive_json_from(TIMEOUT)
        for ws in (other_socket, user_socket):
            await ws.disconnect()
        return closed, others_open, canceled

    closed, others_open, canceled = run(scenario)
    assert closed == {"type": "websocket.close", "code": CLOSE_JOB_DELETED} == {"type": "websocket.close", "code": 4404}
    assert others_open
    assert (canceled["event"], canceled["job"]["id"]) == ("canceled", str(other.pk))
