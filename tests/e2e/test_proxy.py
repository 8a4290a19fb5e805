"""The shipped reverse proxy (docker/proxy/nginx.conf) in front of a real web server (uvicorn): TLS, redirects, body limits.

nginx comes from Debian's package, unpacked by `make system-deps` (never
installed as a service); the test runs the repository's config file with only
its addresses, certificate folder and log paths changed.
"""

from __future__ import annotations

import http.client
import os
import shutil
import ssl
import subprocess
import time

import pytest
import requests
from rest_framework.authtoken.models import Token

from tests.e2e.conftest import background, free_port
from tests.e2e.workers import REPO
from tests.jobs.helpers import small_png

pytestmark = [pytest.mark.e2e]

CONFIG = REPO / "docker" / "proxy" / "nginx.conf"
MB = 1024 * 1024
# Debian's build keeps these under /var/lib/nginx; the test's nginx keeps them in its own folder.
TEMP_PATHS = ("client_body_temp_path", "proxy_temp_path", "fastcgi_temp_path", "uwsgi_temp_path", "scgi_temp_path")


def nginx_binary() -> str:
    unpacked = REPO / ".nginx" / "usr" / "sbin" / "nginx"
    found = str(unpacked) if unpacked.exists() else shutil.which("nginx")
    if found is None:
        pytest.fail("nginx is missing: `make system-deps` unpacks Debian's package into .nginx/")
    return found


@pytest.fixture
def proxy(asgi_server, tmp_path):
    """(https base URL, http base URL, its certificate) of nginx running the shipped config in front of
    ``asgi_server``."""
    tls = tmp_path / "tls"
    tls.mkdir()
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", str(tls / "tls.key"), "-out", str(tls / "tls.crt")], check=True, capture_output=True)
    http_port, https_port = free_port(), free_port()
    config = (CONFIG.read_text()
              .replace("listen 80;", f"listen 127.0.0.1:{http_port};")
              .replace("listen 443 ssl;", f"listen 127.0.0.1:{https_port} ssl;")
              .replace("/etc/nginx/tls/", f"{tls}/")
              .replace("http://web:8000", asgi_server)
              .replace("http {", "http {\n" + "".join(f"    {name} {tmp_path}/{name};\n" for name in TEMP_PATHS)
                       + f"    access_log {tmp_path}/access.log;", 1))
    (tmp_path / "nginx.conf").write_text(config)
    main = f"daemon off; pid {tmp_path}/nginx.pid; error_log {tmp_path}/error.log;"
    if os.geteuid() == 0:
        main += " user root;"  # workers would otherwise drop to nobody, who cannot enter tmp_path
    args = [nginx_binary(), "-p", str(tmp_path), "-c", str(tmp_path / "nginx.conf"), "-g", main]
    with background(args, dict(os.environ), tmp_path / "nginx.log"):
        https = f"https://localhost:{https_port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                requests.get(https + "/healthz", verify=tls / "tls.crt", timeout=2)
                break
            except requests.ConnectionError:
                assert time.monotonic() < deadline, "nginx did not start (its log is printed below)"
                time.sleep(0.2)
        yield https, f"http://127.0.0.1:{http_port}", str(tls / "tls.crt")


def declared_post(proxy, path: str, length: int, headers: dict[str, str] = {}) -> tuple[int, bytes]:
    """POST that declares ``length`` bytes and sends none: what the proxy answers from the headers alone."""
    base, _, certificate = proxy
    host, port = base.removeprefix("https://").split(":")
    connection = http.client.HTTPSConnection(host, int(port), timeout=10,
                                             context=ssl.create_default_context(cafile=certificate))
    try:
        connection.putrequest("POST", path)
        for name, value in {"Content-Length": str(length), "Content-Type": "application/octet-stream",
                            **headers}.items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_plain_http_is_redirected_to_https(proxy):
    _, plain, _ = proxy
    response = requests.get(plain + "/api/v1/pipelines", allow_redirects=False, timeout=5)
    assert response.status_code == 301
    assert response.headers["Location"].startswith("https://") and response.headers["Location"].endswith(
        "/api/v1/pipelines")


def token_header(user) -> dict[str, str]:
    return {"Authorization": f"Token {Token.objects.get_or_create(user=user)[0].key}"}


def test_large_bodies_are_refused_at_the_proxy(proxy, user):
    token = token_header(user)
    # Outside the upload routes 1 MiB is the most anyone may send, logged in or not.
    status, body = declared_post(proxy, "/healthz", 2 * MB)
    assert status == 413 and b"nginx" in body  # nginx's page: the app never saw the request
    status, _ = declared_post(proxy, "/api/v1/webhook-secret", 2 * MB, token)
    assert status == 413
    # Upload routes take OCR_MAX_UPLOAD_BYTES plus the form, not 60 MB.
    status, body = declared_post(proxy, "/api/v1/jobs", 60 * MB, token)
    assert status == 413 and b"nginx" in body


def test_an_upload_goes_through_the_proxy(proxy, user):
    https, _, certificate = proxy
    response = requests.post(https + "/api/v1/jobs", files={"file": ("note.png", small_png(), "image/png")},
                             data={"pipeline": "ocr"}, headers=token_header(user),
                             verify=certificate, timeout=30)
    assert response.status_code == 202, response.text
    assert response.json()["status"] == "queued"
    assert requests.get(https + "/healthz", verify=certificate, timeout=5).json() == {"status": "ok"}
