"""Admin: the job list filters and searches; actions go through the services; API tokens are never shown."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse
from rest_framework.authtoken.models import Token

from jobs import services
from jobs.models import Job
from tests.jobs.helpers import page_record, small_png

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_superuser("root", password="pw"))
    return client


def test_job_list_search_and_result_preview(admin_client, user):
    job, _ = services.job_create(owner=user, file=small_png(), filename="invoice-42.png")
    services.job_claim(job_id=job.pk, worker_id="w")
    services.job_record_page(job_id=job.pk, worker_id="w", record=page_record(1))
    services.job_finish(job_id=job.pk, worker_id="w")
    changelist = reverse("admin:jobs_job_changelist")

    assert "invoice-42.png" in admin_client.get(changelist, {"q": "invoice"}).content.decode()
    assert "invoice-42.png" in admin_client.get(changelist, {"q": job.document.sha256}).content.decode()
    assert "invoice-42.png" not in admin_client.get(changelist, {"q": "nothing-like-it"}).content.decode()
    assert "invoice-42.png" in admin_client.get(changelist, {"status__exact": "succeeded"}).content.decode()
    detail = admin_client.get(reverse("admin:jobs_job_change", args=[job.pk])).content.decode()
    assert "Hello world" in detail and "Second line" in detail


def test_cancel_action_calls_the_service(admin_client, user):
    queued, _ = services.job_create(owner=user, file=small_png(), filename="a.png")
    response = admin_client.post(reverse("admin:jobs_job_changelist"),
                                 {"action": "cancel_jobs", "_selected_action": [str(queued.pk)]}, follow=True)
    assert response.status_code == 200
    assert Job.objects.get(pk=queued.pk).status == Job.Status.CANCELED
    admin_client.post(reverse("admin:jobs_job_changelist"),
                      {"action": "cancel_jobs", "_selected_action": [str(queued.pk)]}, follow=True)
    assert Job.objects.get(pk=queued.pk).status == Job.Status.CANCELED  # refused again, with a warning


def test_staff_who_may_view_tokens_never_see_a_key(client, user, other_user, django_user_model):
    key = Token.objects.create(user=user).key
    staff = django_user_model.objects.create_user("operator", password="pw", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(codename="view_apitoken"))
    client.force_login(staff)
    changelist = reverse("admin:jobs_apitoken_changelist")
    change = reverse("admin:jobs_apitoken_change", args=[user.pk])  # by the user's id, never the key
    pages = {
        "index": client.get(reverse("admin:index")),
        "list": client.get(changelist),
        "search": client.get(changelist, {"q": "alice"}),
        "view": client.get(change),
        "history": client.get(reverse("admin:jobs_apitoken_history", args=[user.pk])),
    }
    for name, page in pages.items():
        assert page.status_code == 200, name
        assert key not in page.content.decode(), name
    assert key[:8] in pages["search"].content.decode() and key[:8] in pages["view"].content.decode()
    # No guessing it from the list: lookups on the key from the URL, and popups, whose rows carry the key.
    assert client.get(changelist, {"key__startswith": key[:2]}).status_code == 400
    assert client.get(changelist, {"pk__startswith": key[:2]}).status_code == 400
    assert client.get(changelist, {"_popup": "1"}).status_code == 403
    assert client.get("/admin/authtoken/tokenproxy/").status_code == 404  # DRF's own token admin is gone
    # A user's deletion page lists what goes with it: the token by its prefix.
    staff.user_permissions.add(Permission.objects.get(codename="delete_user"))
    deletion = client.get(reverse("admin:auth_user_delete", args=[user.pk]))
    assert deletion.status_code == 200 and key[:8] in deletion.content.decode()
    assert key not in deletion.content.decode()


def test_a_token_made_in_the_admin_is_not_shown_either(admin_client, other_user):
    response = admin_client.post(reverse("admin:jobs_apitoken_add"), {"user": other_user.pk}, follow=True)
    key = Token.objects.get(user=other_user).key
    assert response.status_code == 200 and key[:8] in response.content.decode()  # "The API token “3f9a…” was added"
    assert key not in response.content.decode()
