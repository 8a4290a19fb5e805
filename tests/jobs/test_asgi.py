"""The HTTP side of ``ocrsite.asgi``: Django's middleware chain and views, run sync on the request's thread."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from asgiref.sync import async_to_sync
from asgiref.testing import ApplicationCommunicator
from django.core.files.base import ContentFile
from rest_framework.authtoken.models import Token

from jobs.models import Job
from tests.jobs.factories import JobFactory, PageResultFactory, UserFactory
from tests.jobs.helpers import corrected_job


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
def test_the_training_set_streams_through_the_asgi_app_without_being_collected_first(recwarn):
    user = UserFactory()
    job = corrected_job(user, pages=2)
    token = Token.objects.create(user=user)

    start, body = http_get("/api/v1/training-set", [(b"authorization", f"Token {token.key}".encode())])

    assert start["status"] == 200
    archive = zipfile.ZipFile(io.BytesIO(body))
    assert archive.namelist() == [f"crops/{job.pk}-p1-p1-l1.png", f"crops/{job.pk}-p2-p2-l1.png",
                                  "rec_gt.txt", "engine_reading.txt"]
    # Django warns when its ASGI handler has to gather a synchronous iterator whole before sending it.
    assert not [w for w in recwarn if "consume synchronous iterators" in str(w.message)]


def post_in_pieces(path: str, pieces: list[bytes], headers: list[tuple[bytes, bytes]]) -> tuple[dict, bytes, int]:
    """POST ``pieces`` as a streamed body; returns the answer's start and body, and how many pieces were taken."""
    from ocrsite.asgi import application

    scope = {**get_scope(path, headers), "method": "POST"}

    async def call():
        communicator = ApplicationCommunicator(application, scope)
        for index, piece in enumerate(pieces):
            await communicator.send_input({"type": "http.request", "body": piece, "more_body": index < len(pieces) - 1})
        start = await communicator.receive_output(30)
        body = (await communicator.receive_output(30))["body"]
        await communicator.wait(5)
        return start, body

    start, body = async_to_sync(call)()
    return start, body


@pytest.mark.django_db(transaction=True)
def test_a_declared_length_past_the_limit_is_refused_before_the_body_is_read(settings):
    settings.OCR_MAX_BODY_BYTES = 1000
    start, body = post_in_pieces("/api/v1/webhook-secret", [b"x" * 10], [(b"content-length", b"1001")])
    assert start["status"] == 413
    assert json.loads(body)["code"] == "request_too_large"


@pytest.mark.django_db(transaction=True)
def test_a_streamed_body_is_counted_and_refused_once_past_the_limit(settings):
    settings.OCR_MAX_UPLOAD_BYTES = 5000
    user = UserFactory()
    auth = [(b"authorization", f"Token {Token.objects.create(user=user).key}".encode())]
    # No length declared: the pieces are counted as they come; the upload route allows the upload limit.
    start, body = post_in_pieces("/api/v1/jobs", [b"x" * 4000] * 400, auth)
    assert start["status"] == 413 and json.loads(body)["code"] == "request_too_large"
    assert not Job.objects.exists()
    # Without credentials the same route allows only the small limit; under it, Django answers.
    start, _ = post_in_pieces("/api/v1/jobs", [b"x" * 100], [])
    assert start["status"] == 401
