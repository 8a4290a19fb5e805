"""Shared fixtures: media in a temp folder, users, API clients with DRF tokens."""

from __future__ import annotations

import pytest

from tests.llm_server import llm_server, llm_settings  # noqa: F401 - fixtures: a real llama.cpp server
from tests.s3_server import object_store, s3_server  # noqa: F401 - fixtures: a real S3 server (SeaweedFS)


def pytest_collection_modifyitems(config, items):
    from django.db import connection

    if connection.vendor != "postgresql":
        skip = pytest.mark.skip(reason="a check of the PostgreSQL deployment")
        for item in items:
            if "postgresql" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    """Every test writes uploads and page images under its own tmp_path, never into var/."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "media" / ".uploading")
    (tmp_path / "media" / ".uploading").mkdir(parents=True)  # as the settings make it beside the real media
    return tmp_path / "media"


@pytest.fixture(autouse=True)
def fresh_channel_layer(settings):
    """A channel layer of its own for every test.

    channels-redis binds what a receive leaves behind (its per-channel locks) to the event loop
    it ran in, and each ``async_to_sync`` call of a test runs a loop of its own: a layer shared by
    the whole run failed a later test's receive with "is bound to a different event loop".
    Channels builds its layers anew whenever ``CHANNEL_LAYERS`` changes (``setting_changed``).
    """
    settings.CHANNEL_LAYERS = {**settings.CHANNEL_LAYERS}


@pytest.fixture
def user(db, django_user_model):
    return django_user_model.objects.create_user(username="alice", password="pw-alice")


@pytest.fixture
def other_user(db, django_user_model):
    return django_user_model.objects.create_user(username="bob", password="pw-bob")


@pytest.fixture
def staff_user(db, django_user_model):
    """An operator: staff who may look at every job (``jobs.view_job``), not change them."""
    from django.contrib.auth.models import Permission

    staff = django_user_model.objects.create_user(username="staff", password="pw-staff", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_job", content_type__app_label="jobs"))
    return staff


def token_client(user):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


@pytest.fixture
def api_client(user):
    """An API client authenticated as ``user`` with a DRF token (Authorization: Token <key>)."""
    return token_client(user)


@pytest.fixture
def other_api_client(other_user):
    return token_client(other_user)
