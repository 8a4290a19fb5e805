"""Request bodies are bounded before they are stored (``ocrsite.body_limit``): no disk fill without logging in."""

from __future__ import annotations

import os
import socket
import time

import pytest
import requests

from tests.e2e.conftest import web_server
from tests.e2e.workers import database_url

pytestmark = [pytest.mark.e2e]

MB = 1024 * 1024


@pytest.fixture
def server(transactional_db, settings, tmp_path):
    spool = tmp_path / "spool"  # where the server's temporary files go
    spool.mkdir()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ocrsite.settings.test", "DATABASE_URL": database_url(),
           "MEDIA_ROOT": str(settings.MEDIA_ROOT), "TMPDIR": str(spool), "OCR_MAX_UPLOAD_BYTES": str(5 * MB)}
    with web_server(env, tmp_path / "web.log") as base:
        yield base, spool


def spooled_bytes(spool) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(spool) for f in files)


def send_streaming(base: str, path: str, declared: int | None, send: int, headers: dict[str, str] = {}) -> bytes:
    """Send a POST whose body streams in 64 KiB pieces; return what the server answered."""
    host, port = base.removeprefix("http://").split(":")
    head = [f"POST {path} HTTP/1.1", f"Host: {host}", "Content-Type: application/octet-stream"]
    head += [f"Content-Length: {declared}"] if declared is not None else ["Transfer-Encoding: chunked"]
    head += [f"{k}: {v}" for k, v in headers.items()]
    answer = b""
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        piece, sent = b"x" * 65536, 0
        try:
            while sent < send:
                chunk = piece if declared is not None else b"%x\r\n%s\r\n" % (len(piece), piece)
                sock.sendall(chunk)
                sent += len(piece)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server closed the connection: what a refusal looks like mid-body
        try:
            while data := sock.recv(65536):
                answer += data
        except (ConnectionResetError, socket.timeout):
            pass
    return answer


def test_sixty_megabytes_without_login_are_refused_before_they_are_stored(server):
    base, spool = server
    started = time.monotonic()
    answer = send_streaming(base, "/healthz", declared=60 * MB, send=60 * MB)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert b'"request_too_large"' in answer
    assert time.monotonic() - started < 30
    assert spooled_bytes(spool) == 0


def test_chunked_bodies_are_counted_as_they_stream(server):
    base, spool = server
    answer = send_streaming(base, "/api/v1/jobs", declared=None, send=20 * MB)
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert spooled_bytes(spool) < 2 * MB


def test_uploads_with_credentials_get_the_upload_limit(server):
    base, _ = server
    headers = {"Authorization": "Token not-a-real-one"}
    # Under the upload limit: the request reaches Django, which refuses the bad token.
    small = requests.post(f"{base}/api/v1/jobs", data=b"x" * (2 * MB), headers=headers, timeout=60)
    assert small.status_code == 401
    # Over it: refused before the body is read.
    answer = send_streaming(base, "/api/v1/jobs", declared=8 * MB, send=8 * MB, headers=headers)
    assert answer.startswith(b"HTTP/1.1 413")
    # And the server is still serving.
    assert requests.get(f"{base}/healthz", timeout=10).status_code == 200
