"""Admin: the job list filters and searches; actions go through the services."""

from __future__ import annotations

import pytest
from django.urls import reverse

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
