"""The shipped reverse proxy (docker/proxy/nginx.conf) in front of a real web server (uvicorn): TLS, redirects,
body limits, client addresses.

nginx comes from Debian's package, unpacked by `make system-deps` (never
installed as a service); the test runs the repository's config file with only
its addresses, certificate folder and log paths changed. The web server runs
as compose and Kubernetes run it: it believes X-Forwarded-For from the proxy's
address only (FORWARDED_ALLOW_IPS; here nginx connects from 127.0.0.1). Clients
connect from other loopback addresses (all of 127/8 is loopback on Linux), so
one machine is several clients.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import ssl
import subprocess
import time

import pytest
import requests
from rest_framework.authtoken.models import Token

from tests.e2e.conftest import background, free_port, server_env, web_server
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
def deployed_web(transactional_db, settings, tmp_path):
    """Base URL of the web server as deployed behind the proxy, which it trusts at 127.0.0.1; anonymous API
    calls limited to 3 a minute per client address."""
    env = {**server_env(settings), "FORWARDED_ALLOW_IPS": "127.0.0.1", "API_THROTTLE_ANON": "3/min"}
    # `make run` adds --proxy-headers, as compose and Kubernetes do, when FORWARDED_ALLOW_IPS is set.
    with web_server(env, tmp_path / "web.log", "/accounts/login/", "--proxy-headers") as base:
        yield base


@pytest.fixture
def proxy(deployed_web, tmp_path):
    """(https base URL, http base URL, its certificate) of nginx running the shipped config in front of
    ``deployed_web``."""
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
              .replace("http://web:8000", deployed_web)
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


class FromAddress(requests.adapters.HTTPAdapter):
    """Connections from ``address``, one of loopback's."""

    def __init__(self, address: str):
        self.address = address
        super().__init__()

    def init_poolmanager(self, *args, **kwargs):
        super().init_poolmanager(*args, source_address=(self.address, 0), **kwargs)


def client_at(address: str) -> requests.Session:
    session = requests.Session()
    session.mount("http://", FromAddress(address))
    session.mount("https://", FromAddress(address))
    return session


def log_in(session: requests.Session, base: str, password: str, certificate=None, **headers: str) -> int:
    """The status of alice's login with ``password``: 302 logged in, 200 the form again, 429 locked out."""
    page = session.get(base + "/accounts/login/", verify=certificate, timeout=10)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
    return session.post(base + "/accounts/login/", data={"username": "alice", "password": password,
                                                        "csrfmiddlewaretoken": token},
                        headers=headers, verify=certificate, allow_redirects=False, timeout=10).status_code


def test_lockout_and_throttles_hold_the_client_address_behind_the_proxy(proxy, deployed_web, user, tmp_path):
    https, _, certificate = proxy
    # A browser's Origin on port 443: nginx passes the Host without the test's port.
    origin = {"Origin": "https://localhost"}
    guesser, colleague = client_at("127.0.0.2"), client_at("127.0.0.3")
    assert [log_in(guesser, https, "wrong", certificate, **origin) for _ in range(4)] == [200] * 4
    log_in(guesser, https, "wrong", certificate, **origin)  # the fifth: alice is locked out, from there
    # Locked out even with the right password, and whatever the client says it forwards.
    assert log_in(guesser, https, "pw-alice", certificate, **origin, **{"X-Forwarded-For": "127.0.0.3"}) == 429
    assert log_in(colleague, https, "pw-alice", certificate, **origin) == 302  # another address: not locked out
    # Straight to the web port, a forwarded address is believed from the proxy's address only.
    assert log_in(client_at("127.0.0.2"), deployed_web, "pw-alice", **{"X-Forwarded-For": "127.0.0.3"}) == 429

    anonymous = [client_at("127.0.0.4").get(https + "/api/v1/jobs", verify=certificate, timeout=10).status_code
                 for _ in range(4)]
    assert anonymous == [401, 401, 401, 429]
    assert client_at("127.0.0.5").get(https + "/api/v1/jobs", verify=certificate, timeout=10).status_code == 401
    spoofed = client_at("127.0.0.4").get(deployed_web + "/api/v1/jobs", headers={"X-Forwarded-For": "127.0.0.6"},
                                         timeout=10)
    assert spoofed.status_code == 429
    log = (tmp_path / "web.log").read_text()
    assert '127.0.0.2:0 - "POST /accounts/login/ HTTP/1.1" 429' in log  # the access log names the client
