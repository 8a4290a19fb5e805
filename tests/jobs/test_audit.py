"""The audit log: each deletion, cancel, retry, review action and export leaves an entry, whoever did it
(a user over the API or in the browser, an admin), shown to the job's owner under GET /api/v1/audit
and read-only in the admin; entries outlive their jobs."""

from __future__ import annotations

import pytest
from django.urls import reverse

from jobs import services
from jobs.models import AuditEntry, Job
from tests.conftest import token_client
from tests.jobs.factories import png_bytes
from tests.jobs.helpers import failed_record, page_record

pytestmark = pytest.mark.django_db

JOBS = "/api/v1/jobs"
ADDRESS = "203.0.113.7"  # the client's address, as the web server puts it in REMOTE_ADDR


def new_job(owner, *, color="white", page=page_record) -> Job:
    job, _ = services.job_create(owner=owner, file=png_bytes(color=color), filename=f"{color}.png")
    services.job_claim(job_id=job.pk, worker_id="w")
    services.job_record_page(job_id=job.pk, worker_id="w", record=page(1))
    return services.job_finish(job_id=job.pk, worker_id="w")


def queued_job(owner, color="green") -> Job:
    return services.job_create(owner=owner, file=png_bytes(color=color), filename=f"{color}.png")[0]


def audit(client) -> list[dict]:
    response = client.get("/api/v1/audit")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"count", "next", "previous", "results"} and body["count"] == len(body["results"])
    return [{k: row[k] for k in ("action", "job", "actor", "address")} for row in body["results"]]


def entry(action, job, actor="user:alice", address=ADDRESS) -> dict:
    return {"action": action, "job": str(job.pk), "actor": actor, "address": address}


def test_api_actions_are_logged_for_the_owner_only(api_client, other_api_client, user):
    deleted, canceled, failed, done = (new_job(user, color="red"), queued_job(user),
                                       new_job(user, color="blue", page=failed_record), new_job(user))
    line = f"{JOBS}/{done.pk}/pages/1/lines/p1-l2"
    calls = [
        api_client.delete(f"{JOBS}/{deleted.pk}", REMOTE_ADDR=ADDRESS),
        api_client.post(f"{JOBS}/{canceled.pk}/cancel", REMOTE_ADDR=ADDRESS),
        api_client.post(f"{JOBS}/{failed.pk}/retry", REMOTE_ADDR=ADDRESS),
        api_client.patch(line, {"text": "Second line, reviewed"}, format="json", REMOTE_ADDR=ADDRESS),
        api_client.post(f"{JOBS}/{done.pk}/reviewed", REMOTE_ADDR=ADDRESS),
        api_client.get(f"{JOBS}/{done.pk}/export.txt", REMOTE_ADDR=ADDRESS),
        api_client.get(f"{JOBS}/{done.pk}/result.json", REMOTE_ADDR=ADDRESS),
    ]
    assert [c.status_code for c in calls] == [204, 200, 202, 200, 200, 200, 200]

    assert audit(api_client) == [  # newest first
        entry("exported", done), entry("exported", done), entry("reviewed", done), entry("corrected", done),
        entry("retried", failed), entry("canceled", canceled), entry("deleted", deleted),
    ]
    assert set(AuditEntry.objects.filter(action="exported").values_list("detail", flat=True)) == {"txt", "json"}
    assert audit(other_api_client) == []
    # Refused actions change nothing, so they log nothing.
    assert api_client.post(f"{JOBS}/{canceled.pk}/cancel").status_code == 409
    assert api_client.get(f"{JOBS}/{done.pk}/export.nope").status_code == 400
    assert other_api_client.delete(f"{JOBS}/{done.pk}").status_code == 404
    assert AuditEntry.objects.count() == 7


def test_edits_and_undo_are_logged(api_client, user):
    job = new_job(user)
    split = api_client.post(f"{JOBS}/{job.pk}/pages/1/lines/p1-l1/split", {"at": 50}, format="json",
                            REMOTE_ADDR=ADDRESS)
    assert split.status_code == 200
    undo = api_client.post(f"{JOBS}/{job.pk}/corrections/{split.json()['correction']['id']}/undo",
                           REMOTE_ADDR=ADDRESS)
    assert undo.status_code == 200
    assert audit(api_client) == [entry("corrected", job), entry("corrected", job)]
    assert list(AuditEntry.objects.values_list("detail", flat=True)) == ["undo line_split", "line_split"]


def test_a_deletion_in_the_browser_is_logged_and_outlives_the_job(client, user):
    job = new_job(user)
    client.force_login(user)  # the browser's session, as the job page's scripts call the API
    assert client.delete(f"{JOBS}/{job.pk}", REMOTE_ADDR=ADDRESS).status_code == 204
    assert not Job.objects.filter(pk=job.pk).exists()
    assert audit(client) == [entry("deleted", job)]


def test_admin_actions_are_logged_as_the_admin_and_the_log_is_read_only(client, user, django_user_model):
    admin = django_user_model.objects.create_superuser("root", password="pw")
    client.force_login(admin)
    queued, failed, deleted = queued_job(user), new_job(user, color="blue", page=failed_record), new_job(user)
    changelist = reverse("admin:jobs_job_changelist")
    for action, job in (("cancel_jobs", queued), ("retry_jobs", failed)):
        client.post(changelist, {"action": action, "_selected_action": [str(job.pk)]}, REMOTE_ADDR=ADDRESS)
    client.post(reverse("admin:jobs_job_delete", args=[deleted.pk]), {"post": "yes"}, REMOTE_ADDR=ADDRESS)
    assert not Job.objects.filter(pk=deleted.pk).exists()

    assert audit(token_client(user)) == [entry("deleted", deleted, "admin:root"),
                                         entry("retried", failed, "admin:root"),
                                         entry("canceled", queued, "admin:root")]
    log = client.get(reverse("admin:jobs_auditentry_changelist")).content.decode()
    assert str(deleted.pk) in log and "admin:root" in log
    some = AuditEntry.objects.first()
    assert client.get(reverse("admin:jobs_auditentry_delete", args=[some.pk])).status_code == 403
    assert client.post(reverse("admin:jobs_auditentry_change", args=[some.pk]),
                       {"actor": "someone else"}).status_code == 403
    assert AuditEntry.objects.get(pk=some.pk).actor == "admin:root"
