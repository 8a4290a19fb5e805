"""Other users' jobs follow Django's model permissions: view_job to see them, change_job to act on them."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from jobs.models import Job
from tests.conftest import token_client
from tests.jobs.helpers import small_png

pytestmark = pytest.mark.django_db


def grant(user, *codenames):
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames, content_type__app_label="jobs"))
    return type(user).objects.get(pk=user.pk)  # a fresh object: permissions are cached per instance


@pytest.fixture
def job_id(api_client):
    upload = SimpleUploadedFile("page.png", small_png(), content_type="image/png")
    return api_client.post("/api/v1/jobs", {"file": upload}, format="multipart").json()["id"]


def test_staff_without_permissions_sees_nothing_of_others(job_id, django_user_model):
    staff = django_user_model.objects.create_user("ops", password="pw", is_staff=True)
    assert token_client(staff).get(f"/api/v1/jobs/{job_id}").status_code == 404


def test_view_permission_reads_but_cannot_act(job_id, django_user_model):
    viewer = grant(django_user_model.objects.create_user("viewer", password="pw", is_staff=True), "view_job")
    client = token_client(viewer)
    assert client.get(f"/api/v1/jobs/{job_id}").status_code == 200
    assert client.post(f"/api/v1/jobs/{job_id}/cancel").status_code == 404
    assert client.delete(f"/api/v1/jobs/{job_id}").status_code == 404
    assert Job.objects.get(pk=job_id).status == "queued"


def test_change_permission_acts(job_id, django_user_model):
    operator = grant(django_user_model.objects.create_user("operator", password="pw", is_staff=True),
                     "view_job", "change_job")
    response = token_client(operator).post(f"/api/v1/jobs/{job_id}/cancel")
    assert response.status_code == 200 and response.json()["status"] == "canceled"


def test_admin_actions_need_change_permission(job_id, client, django_user_model):
    viewer = grant(django_user_model.objects.create_user("viewer", password="pw", is_staff=True), "view_job")
    client.force_login(viewer)
    page = client.get("/admin/jobs/job/")
    assert page.status_code == 200 and "cancel_jobs" not in page.content.decode()
    client.post("/admin/jobs/job/", {"action": "cancel_jobs", "_selected_action": [job_id]})
    assert Job.objects.get(pk=job_id).status == "queued"

    operator = grant(viewer, "change_job")
    client.force_login(operator)
    assert "cancel_jobs" in client.get("/admin/jobs/job/").content.decode()
    client.post("/admin/jobs/job/", {"action": "cancel_jobs", "_selected_action": [job_id]})
    assert Job.objects.get(pk=job_id).status == "canceled"


def test_a_token_acts_as_its_user_until_the_user_is_deactivated_or_the_token_replaced(job_id, user, other_user):
    client = token_client(user)
    own = client.get(f"/api/v1/jobs/{job_id}")
    assert own.status_code == 200 and own.json()["id"] == job_id
    assert token_client(other_user).get(f"/api/v1/jobs/{job_id}").status_code == 404  # another user's token

    user.is_active = False
    user.save()
    refused = client.get(f"/api/v1/jobs/{job_id}")
    assert refused.status_code == 401 and refused.json()["detail"] == "User inactive or deleted."

    user.is_active = True
    user.save()
    user.auth_token.delete()  # regenerated in the settings page
    refused = client.get(f"/api/v1/jobs/{job_id}")
    assert refused.status_code == 401 and refused.json()["detail"] == "Invalid token."


def test_owners_read_their_jobs_without_their_permissions_being_read(job_id, api_client, django_user_model):
    # A status read is the API's most frequent call (polls, long-polls): the owner's needs no
    # permission statements, only the token's and the job's.
    with CaptureQueriesContext(connection) as queries:
        assert api_client.get(f"/api/v1/jobs/{job_id}").status_code == 200
    assert not [query for query in queries if "auth_permission" in query["sql"]]

    viewer = grant(django_user_model.objects.create_user("viewer", password="pw"), "view_job")
    with CaptureQueriesContext(connection) as queries:
        assert token_client(viewer).get(f"/api/v1/jobs/{job_id}").status_code == 200
    assert [query for query in queries if "auth_permission" in query["sql"]]  # another's job: asked
