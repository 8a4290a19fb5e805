"""End-to-end fixtures: a real ASGI server (uvicorn: HTTP + WebSockets) and a headless Chromium.

The server is a separate process on the test database and the test's
MEDIA_ROOT, like the platform's ``qcluster`` fixture (tests/e2e/test_api_e2e.py),
so a browser, a worker and the test all see the same rows and files.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from tests.e2e.workers import database_url, qcluster  # noqa: F401 - qcluster is a fixture for every e2e test

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "test-artifacts"
# Debian's chromium, never a downloaded browser; flags that keep it off the network and quiet.
CHROMIUM = "/usr/bin/chromium"
WS_MAX_SIZE = 4096  # uvicorn's --ws-max-size, as `make run` and docker/ start it (tests/deploy checks they agree)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_serving(url: str, process: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    """Until ``url`` answers at all (any status below 500)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited with {process.returncode}:\n{log.read_text(errors='replace')}")
        # Timeout too: a server's connections wait in its socket's backlog until all its processes have loaded.
        with contextlib.suppress(requests.ConnectionError, requests.Timeout):
            if requests.get(url, timeout=5).status_code < 500:
                return
        time.sleep(0.3)
    raise AssertionError(f"server did not answer {url} within {timeout} s:\n{log.read_text(errors='replace')}")


def processes_in_group(pgid: int) -> list[int]:
    """The processes of process group ``pgid`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.getpgid(int(entry)) == pgid:
                found.append(int(entry))
        except ProcessLookupError:
            pass
    return found


@contextlib.contextmanager
def background(args: list[str], env: dict[str, str], log: Path):
    """Run ``args`` in the repository as its own process group; stop the whole group afterwards."""
    with log.open("wb") as out:
        process = subprocess.Popen(args, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    try:
        yield process
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
        print(f"--- {log.name} ---\n" + log.read_text(errors="replace")[-3000:])


def uvicorn_command(port: int, *options: str) -> list[str]:
    """The web server as `make run` starts it (less its worker processes), on ``port``."""
    return [sys.executable, "-m", "uvicorn", "ocrsite.asgi:application", "--host", "127.0.0.1", "--port", str(port),
            "--no-proxy-headers", "--ws-max-size", str(WS_MAX_SIZE), *options]


@contextlib.contextmanager
def web_server(env: dict[str, str], log: Path, ready_path: str = "/accounts/login/", *options: str):
    """Run the web server (uvicorn, ``uvicorn_command`` with ``options``) on a free port; yield its base URL."""
    port = free_port()
    with background(uvicorn_command(port, *options), {**env, "ALLOWED_HOSTS": "127.0.0.1,localhost"}, log) as process:
        base = f"http://127.0.0.1:{port}"
        wait_until_serving(base + ready_path, process, log)
        yield base


@contextlib.contextmanager
def embedded_default(tmp_path: Path, worker: bool = True):
    """What `make run` gives with no DATABASE_URL or REDIS_URL: SQLite, channels-lite, the ORM broker,
    a worker (unless not ``worker``) and the server's two processes. Yields (base URL, the bootstrap admin's
    API token, the manage.py command and environment, for checks afterwards)."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CHANNEL_LAYER_PREFIX", "Q_BROKER")}
    env.update({
        "DJANGO_SETTINGS_MODULE": "ocrsite.settings.base",
        "SECRET_KEY": "embedded-e2e-only",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",  # var/db.sqlite3 without it: same engine
        "MEDIA_ROOT": str(tmp_path / "media"),
        "CACHE_DIR": str(tmp_path / "cache"),  # not a folder in /dev/shm per test run
        "Q_WORKERS": "1",
            })
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput", "-v", "0"], cwd=REPO, env=env, check=True)
    bootstrap = subprocess.run([*manage, "ocr_bootstrap"], cwd=REPO, env=env, check=True, capture_output=True,
                               text=True)
    token = re.search(r"API token: (\w+)", bootstrap.stdout).group(1)
    with background([*manage, "qcluster"], env, tmp_path / "qcluster.log") if worker else contextlib.nullcontext(), \
            web_server(env, tmp_path / "web.log", "/api/v1/pipelines", "--workers", "2") as base:
        yield base, token, manage, env


def server_env(settings) -> dict[str, str]:
    """The environment of a web server on the test database and the test's MEDIA_ROOT."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "ocrsite.settings.test",
        "DATABASE_URL": database_url(),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
    }


@pytest.fixture
def asgi_server(transactional_db, settings, tmp_path):
    """Base URL of a real web server on the test database (channel layer: Redis, from the test settings)."""
    with web_server(server_env(settings), tmp_path / "web.log") as base:
        yield base


@contextlib.contextmanager
def browser_page(base_url: str, username: str, password: str, viewport=(1280, 800), enforce_csp: bool = False):
    """A logged-in page in headless Chromium. Use it after the test's database work:
    Playwright's sync API runs an event loop, inside which Django refuses ORM calls.

    Tests that evaluate JavaScript strings in the page (``wait_for_function``)
    need the page's Content-Security-Policy bypassed, since it forbids eval;
    ``enforce_csp=True`` keeps it, and then any violation fails the test."""
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]},
                                          bypass_csp=not enforce_csp)
            context.on("weberror", lambda error: errors.append(str(error.error)))
            page = context.new_page()
            # Anything the Content-Security-Policy blocked is a broken page too.
            page.on("console", lambda message: errors.append(f"{page.url}: {message.text}")
                    if "Content Security Policy" in message.text else None)
            page.goto(f"{base_url}/accounts/login/")
            page.fill("#id_username", username)
            page.fill("#id_password", password)
            page.click("button[type=submit]")
            page.wait_for_url(f"{base_url}/")
            yield page
        finally:
            browser.close()
    assert not errors, f"JavaScript errors: {errors}"


def screenshot(page, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path))
    return path
