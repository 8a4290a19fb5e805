"""The webhook signing secret: made anew and shown once, on the settings page and over the API."""

from __future__ import annotations

import pytest

from jobs.models import UserSettings


@pytest.mark.django_db
def test_api_makes_a_new_secret_and_signs_with_it(api_client, user, other_user):
    others = UserSettings.objects.get_or_create(user=other_user)[0].webhook_secret
    first = api_client.post("/api/v1/webhook-secret")
    second = api_client.post("/api/v1/webhook-secret")
    assert first.status_code == second.status_code == 201
    assert first.json()["webhook_secret"] != second.json()["webhook_secret"]
    assert UserSettings.objects.get(user=user).webhook_secret == second.json()["webhook_secret"]
    assert UserSettings.objects.get(user=other_user).webhook_secret == others  # nobody else's


def test_api_secret_needs_authentication(client):
    assert client.post("/api/v1/webhook-secret").status_code == 401


@pytest.mark.django_db
def test_settings_page_shows_a_new_secret_once(client, user):
    client.force_login(user)
    assert 'id="webhook-secret"' not in client.get("/settings/").content.decode()
    response = client.post("/settings/webhook-secret/", follow=True)
    secret = UserSettings.objects.get(user=user).webhook_secret
    assert secret in response.content.decode()
    assert secret not in client.get("/settings/").content.decode()  # shown once
