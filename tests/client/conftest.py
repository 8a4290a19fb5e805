"""One real stack for every test of the client: a uvicorn web server, a qcluster with the real engine, PostgreSQL.

Package-scoped: started once for tests/client (the SDK, the command line, the MCP server) and
stopped, its rows flushed (the migrations' schedules kept), before the next package's tests. Tests here talk to it over HTTP only,
as the client's users do. Mark each module ``pytest.mark.django_db`` (not ``transaction=True``): the mark
makes pytest-django create the test database, and each test's empty transaction is rolled back, while
a transactional test's flush would remove the package's users and jobs. Two users with API
tokens: ``alice`` owns the jobs, ``bob`` is the other user who must see none of them.

The server's submit rate is real and low (``SUBMIT_RATE``) so that the client's 429 handling runs
against the server's own throttle and ``Retry-After``.
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.conftest import background, web_server
from tests.e2e.workers import LEASE_SECONDS, database_url
from tests.ocr_engine import samples

SUBMIT_RATE = "2/s"  # a burst of two submissions, then one each half second (Retry-After: 1)


@dataclass(frozen=True)
class Account:
    username: str
    token: str


@dataclass(frozen=True)
class Live:
    url: str
    alice: Account
    bob: Account
    carol: Account  # a user whose submit budget only the rate-limit test spends
    media: Path
    server_env: dict[str, str]  # the environment the web server and the worker run with

    def env(self, account: Account, **extra: str) -> dict[str, str]:
        """An environment for the ``ocr-client`` command as ``account``, without any config file of the machine's."""
        return {**os.environ, "OCR_URL": self.url, "OCR_TOKEN": account.token,
                "OCR_CONFIG": str(self.media.parent / "no-config.toml"), **extra}


def _accounts() -> dict[str, Account]:
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    made = {}
    for name in ("client-alice", "client-bob", "client-carol"):
        user = get_user_model().objects.create_user(username=name, password=f"pw-{name}")
        made[name.split("-")[1]] = Account(name, Token.objects.create(user=user).key)
    return made


@pytest.fixture(scope="package")
def live(django_db_setup, django_db_blocker, tmp_path_factory):
    """The running stack (``Live``); its rows are flushed once every test of the package has run."""
    from django.conf import settings
    from django.core.management import call_command

    tmp = tmp_path_factory.mktemp("client-stack")
    with django_db_blocker.unblock():
        accounts = _accounts()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ocrsite.settings.test", "DATABASE_URL": database_url(),
           "MEDIA_ROOT": str(tmp / "media"), "OCR_MODELS_DIR": str(settings.OCR_MODELS_DIR),
           "OCR_LEASE_SECONDS": str(LEASE_SECONDS), "Q_WORKERS": "1", "API_THROTTLE_SUBMIT": SUBMIT_RATE}
    try:
        with background([sys.executable, "manage.py", "qcluster"], env, tmp / "qcluster.log"), \
                web_server(env, tmp / "web.log", "/api/v1/pipelines") as url:
            yield Live(url, accounts["alice"], accounts["bob"], accounts["carol"], tmp / "media", env)
    finally:
        with django_db_blocker.unblock():
            flush_keeping_schedules(call_command)


def flush_keeping_schedules(call_command) -> None:
    """Empty every table, then put back the schedules the migrations made: the tests that run later in
    the same database (pytest-django runs the non-transactional ones first) expect them there."""
    from django_q.models import Schedule

    schedules = list(Schedule.objects.all())
    call_command("flush", interactive=False, verbosity=0)
    for schedule in schedules:
        schedule.pk = None  # the flush reset the table's sequence: new ids, or later inserts collide
    Schedule.objects.bulk_create(schedules)


@pytest.fixture(scope="package")
def alice(live):
    """A ``Client`` as alice."""
    from ocr_client import Client

    with Client(live.url, live.alice.token) as client:
        yield client


@pytest.fixture(scope="package")
def bob(live):
    from ocr_client import Client

    with Client(live.url, live.bob.token) as client:
        yield client


def page_png(title: str) -> bytes:
    """A one-page PNG of its own at 60 DPI: the server answers a repeated file with the earlier job."""
    return samples.encode(samples.text_page(title=title, dpi=60).image, "PNG")


@functools.cache
def page_pdf(title: str = "A Short Note on Bridges") -> bytes:
    """A one-page scanned PDF (an image page, no text layer) at 100 DPI; the same bytes on every call (a PDF
    written again differs: its creation date)."""
    return samples.encode(samples.text_page(title=title, dpi=100).image, "PDF", dpi=100)
