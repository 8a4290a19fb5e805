"""The HTTP side of ``ocrsite.asgi``: Django's middleware chain and views, run sync on the request's thread."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from django.core.files.base import ContentFile
from rest_framework.authtoken.models import Token

from jobs.models import Job
from tests.jobs.factories import JobFactory, PageResultFactory, UserFactory


def get_scope(path: str, headers: list[tuple[bytes, bytes]], root_path: str = "", query: bytes = b"") -> dict:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
            "path": path, "raw_path": path.encode(), "query_string": query, "root_path": root_path,
            "headers": [(b"host", b"testserver"), *headers], "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000)}


def http_get(path: str, headers: list[tuple[bytes, bytes]], root_path: str = "") -> tuple[dict, bytes]:
    # Imported here, not at collection: the app reads ALLOWED_HOSTS (for WebSocket origins) when
    # it is built, and the test environment sets it only once tests start (test_consumers.py).
    from ocrsite.asgi import application

    scope = get_scope(path, headers, root_path)

    async def call():
        communicator = ApplicationCommunicator(application, scope)
        await communicator.send_input({"type": "http.request", "body": b"", "more_body": False})
        start, body = await communicator.receive_output(30), b""
        while True:  # a streamed file comes in several messages
            message = await communicator.receive_output(30)
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        await communicator.wait(5)
        return start, body

    return async_to_sync(call)()


@pytest.mark.django_db(transaction=True)  # the view reads on a thread of its own
def test_an_api_call_passes_every_middleware_and_reaches_the_view():
    user = UserFactory()
    JobFactory(owner=user)
    JobFactory()  # someone else's
    token = Token.objects.create(user=user)
    start, body = http_get("/api/v1/jobs", [(b"authorization", f"Token {token.key}".encode())])
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    assert start["status"] == 200
    assert json.loads(body)["count"] == 1
    assert headers["content-security-policy"].startswith("default-src 'self'")  # ours
    assert headers["x-frame-options"] == "DENY"  # Django's clickjacking middleware
    assert headers["x-content-type-options"] == "nosniff"  # Django's security middleware


@pytest.mark.django_db(transaction=True)
def test_an_app_mounted_under_a_prefix_links_to_its_resources_under_that_prefix():
    # The prefix comes from the server (``root_path``) on the event loop's side; the links are made on
    # the request's thread.
    job = JobFactory()
    token = Token.objects.create(user=job.owner)
    start, body = http_get("/ocr/api/v1/jobs", [(b"authorization", f"Token {token.key}".encode())], root_path="/ocr")
    assert start["status"] == 200
    assert json.loads(body)["results"][0]["links"]["self"] == f"http://testserver/ocr/api/v1/jobs/{job.id}"


@pytest.mark.django_db(transaction=True)
def test_an_anonymous_api_call_is_refused_through_the_asgi_app():
    start, body = http_get("/api/v1/jobs", [])
    assert start["status"] == 401
    assert json.loads(body)["code"] == "not_authenticated"


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_a_page_image_streams_through_the_asgi_app_and_each_request_returns_its_connection():
    from django.db import connections

    user = UserFactory()
    page = PageResultFactory(job=JobFactory(owner=user))
    image = bytes(range(256)) * 4096  # 1 MiB: more than one chunk
    page.image.save("page.jpg", ContentFile(image))
    token = Token.objects.create(user=user)
    auth = [(b"authorization", f"Token {token.key}".encode())]
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT clock_timestamp()")
        test_start = cursor.fetchone()[0]
    for _ in range(3):  # one thread serves them all, in turn
        start, body = http_get(f"/api/v1/jobs/{page.job_id}", auth)
        assert start["status"] == 200 and json.loads(body)["id"] == str(page.job_id)
        start, body = http_get(f"/api/v1/jobs/{page.job_id}/pages/1/image", auth)
        assert start["status"] == 200
        assert dict(start["headers"])[b"Content-Type"] == b"image/jpeg"
        assert body == image
    with connections["default"].cursor() as cursor:
        # The request threads closed theirs: no connection opened since the test started is left but
        # this one. (An earlier test's server processes may still be exiting, with their connections.)
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                       "AND pid <> pg_backend_pid() AND backend_start >= %s", [test_start])
        assert cursor.fetchone()[0] == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("other_request_ends", [True, False])
def test_a_long_poll_starts_once_the_requests_in_flight_are_answered(other_request_ends):
    # A client's wait for its job (``?wait=``) is not urgent; the submissions of a burst are. A
    # request in flight here is one whose body is still arriving.
    from ocrsite.asgi import LONG_POLL_DEFER_SECONDS, application

    job = JobFactory(status=Job.Status.SUCCEEDED)
    auth = [(b"authorization", f"Token {Token.objects.create(user=job.owner).key}".encode())]

    async def call():
        other = ApplicationCommunicator(application, get_scope("/api/v1/jobs", auth))
        await other.send_input({"type": "http.request", "body": b"", "more_body": True})
        await asyncio.sleep(0.05)  # the other request is in flight
        started = time.monotonic()
        long_poll = ApplicationCommunicator(application, get_scope(f"/api/v1/jobs/{job.id}", auth, query=b"wait=30"))
        await long_poll.send_input({"type": "http.request", "body": b"", "more_body": False})
        await asyncio.sleep(0.15)
        answered_meanwhile = not long_poll.output_queue.empty()
        if other_request_ends:
            await other.send_input({"type": "http.request", "body": b"", "more_body": False})
            assert (await other.receive_output(30))["status"] == 200
        answer = await long_poll.receive_output(30)
        waited = time.monotonic() - started
        body = json.loads((await long_poll.receive_output(30))["body"])
        if not other_request_ends:
            await other.send_input({"type": "http.request", "body": b"", "more_body": False})
            assert (await other.receive_output(30))["status"] == 200
        await other.wait(5)
        await long_poll.wait(5)
        return answered_meanwhile, answer["status"], body["status"], waited

    answered_meanwhile, status, job_status, waited = async_to_sync(call)()
    assert not answered_meanwhile
    assert (status, job_status) == (200, "succeeded")
    if not other_request_ends:  # it starts anyway after a while: a stream of requests does not hold it forever
        assert LONG_POLL_DEFER_SECONDS <= waited < 10


@pytest.mark.django_db(transaction=True)
def test_quick_requests_take_the_request_lane_and_long_polls_and_large_uploads_the_pool(monkeypatch):
    from ocrsite.asgi import LANE_MAX_BODY_BYTES, application, django_asgi_app

    ran_on = []

    def recorded(name, submit):
        def submit_and_record(fn, *args, **kwargs):
            ran_on.append(name)
            return submit(fn, *args, **kwargs)
        return submit_and_record

    monkeypatch.setattr(django_asgi_app.lane, "submit", recorded("lane", django_asgi_app.lane.submit))
    monkeypatch.setattr(django_asgi_app.executor, "submit", recorded("pool", django_asgi_app.executor.submit))
    job = JobFactory(status=Job.Status.SUCCEEDED)
    auth = [(b"authorization", f"Token {Token.objects.create(user=job.owner).key}".encode())]

    async def call(method: str, path: str, query: bytes = b"", body: bytes = b"") -> int:
        scope = {**get_scope(path, auth, query=query), "method": method}
        communicator = ApplicationCommunicator(application, scope)
        await communicator.send_input({"type": "http.request", "body": body, "more_body": False})
        status = (await communicator.receive_output(30))["status"]
        await communicator.receive_output(30)
        await communicator.wait(5)
        return status

    assert async_to_sync(call)("GET", f"/api/v1/jobs/{job.id}") == 200
    assert async_to_sync(call)("GET", f"/api/v1/jobs/{job.id}", query=b"wait=30") == 200  # it has ended: at once
    # No file in them: refused, once the whole body was read and handed to a thread.
    assert async_to_sync(call)("POST", "/api/v1/jobs", body=b"x" * (LANE_MAX_BODY_BYTES + 1)) == 400
    assert async_to_sync(call)("POST", "/api/v1/jobs", body=b"x" * 1000) == 400
    assert ran_on == ["lane", "pool", "pool", "lane"]


@pytest.mark.parametrize(("method", "query", "long_poll"), [
    ("GET", b"wait=30", True), ("GET", b"fields=id&wait=0.5", True), ("GET", b"wait=0", False),
    ("GET", b"wait=soon", False), ("GET", b"", False), ("POST", b"wait=30", False)])
def test_long_polls_are_the_gets_that_wait(method, query, long_poll):
    from ocrsite.asgi import is_long_poll

    assert is_long_poll({"method": method, "query_string": query}) is long_poll


def test_the_app_has_its_urls_resolved_before_the_first_request():
    # A fresh interpreter, as a web process starts: the first submit each process answered
    # used to wait half a second while Django imported the URLconf, and the first burst of
    # submits read the MIME table, loaded Pillow's plugins, built the models' columns,
    # imported the upload handlers and the queue's broker, and started a thread each (now the
    # process's request lane and its pool), each thread opening a database connection, and
    # reversed a job's links and built its serializer's fields on every thread at once. What the
    # start built is then kept out of the garbage collector's full passes (50-100 ms pauses).
    probe = ("import gc, sys, threading, mimetypes, PIL.Image, ocrsite.asgi; from django.urls import get_resolver; "
             "from django.conf import settings; from jobs.models import Job; from jobs.api import serializers; "
             "from ocrsite.db_sqlite3.base import _pool; "
             "print('jobs.api.views' in sys.modules, get_resolver()._populated, mimetypes.inited, "
             "'PNG' in PIL.Image.OPEN, 'cached_col' in Job._meta.get_field('dedup_key').__dict__, "
             "settings.FILE_UPLOAD_HANDLERS[0].rpartition('.')[0] in sys.modules, "
             "sum(t.name.startswith('request') for t in threading.enumerate()) == ocrsite.asgi.WARM_REQUEST_THREADS, "
             "any(t.name == 'lane' for t in threading.enumerate()), "
             "serializers._route_path.cache_info().currsize >= 15, '_bound_once' in vars(serializers.JobSerializer), "
             "gc.get_freeze_count() > 100_000, settings.DATABASES['default']['ENGINE'] != 'ocrsite.db_sqlite3' "
             "or [len(idle) for idle in _pool.idle.values()] == [ocrsite.asgi.WARM_REQUEST_THREADS])")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["True"] * 12


@pytest.mark.django_db(transaction=True)
def test_the_workers_stop_while_a_request_is_in_flight_and_not_for_a_long_poll(monkeypatch, tmp_path):
    # ``jobs.give_way``: on the embedded default a worker recorded for the database stops (SIGSTOP)
    # while the web answers, and goes on once nothing is in flight.
    from jobs.give_way import Foreground, register
    from ocrsite.asgi import application, django_asgi_app

    database = str(tmp_path / "db.sqlite3")
    monkeypatch.setattr(django_asgi_app.foreground, "workers", Foreground(database))
    worker = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    register(database, worker.pid)
    job = JobFactory(status=Job.Status.RUNNING)
    auth = [(b"authorization", f"Token {Token.objects.create(user=job.owner).key}".encode())]

    def state() -> str:
        with open(f"/proc/{worker.pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0].decode()

    async def call() -> list[str]:
        states = []
        long_poll = ApplicationCommunicator(application, get_scope(f"/api/v1/jobs/{job.id}", auth, query=b"wait=2"))
        await long_poll.send_input({"type": "http.request", "body": b"", "more_body": False})
        await asyncio.sleep(0.5)  # it waits for its job
        states.append(state())
        submit = ApplicationCommunicator(application, {**get_scope("/api/v1/jobs", auth), "method": "POST"})
        await submit.send_input({"type": "http.request", "body": b"", "more_body": True})
        await asyncio.sleep(0.1)  # the submission's body is still arriving
        states.append(state())
        await submit.send_input({"type": "http.request", "body": b"", "more_body": False})
        assert (await submit.receive_output(30))["status"] == 400  # no file
        await submit.receive_output(30)
        await submit.wait(5)
        await asyncio.sleep(0.1)
        states.append(state())
        assert (await long_poll.receive_output(30))["status"] == 200
        await long_poll.receive_output(30)
        await long_poll.wait(5)
        return states

    try:
        assert async_to_sync(call)() == ["R", "T", "R"]
    finally:
        worker.kill()
        worker.wait()
