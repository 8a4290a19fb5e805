"""Retention: expired jobs go (files included) through the hourly django-q2 schedule and ``ocr_purge``;
OCR_RETENTION_KEEP_RESULTS keeps the result and exports; every job shows its ``expires_at``."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.core.files.storage import default_storage
from django.core.management import call_command
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.module_loading import import_string
from django_q.models import Schedule

from jobs import services
from jobs.models import AuditEntry, ExportFile, Job, StorageUsage, UserSettings
from jobs.services.exports import export_name
from tests.jobs.factories import png_bytes
from tests.jobs.helpers import page_record

pytestmark = pytest.mark.django_db

JOBS = "/api/v1/jobs"


def finished_job(owner, *, days_ago: float, color: str = "white") -> Job:
    """A one-page job stored as a submission and a worker store it (upload, page image, thumbnail), finished
    ``days_ago``. ``color`` makes another file: the same one would be deduplicated into the same job."""
    job, _ = services.job_create(owner=owner, file=png_bytes(color=color), filename=f"{color}.png")
    services.job_claim(job_id=job.pk, worker_id="w")
    services.job_record_page(job_id=job.pk, worker_id="w", record=page_record(1))
    services.job_finish(job_id=job.pk, worker_id="w")
    Job.objects.filter(pk=job.pk).update(finished_at=timezone.now() - timedelta(days=days_ago))
    return Job.objects.get(pk=job.pk)


def stored_names(job: Job) -> list[str]:
    page = job.pages.get()
    return [job.document.file.name, page.image.name, page.thumbnail.name]


def stored_bytes(user) -> int:
    return StorageUsage.objects.get(user=user).stored_bytes


def run_schedule() -> int:
    """The retention schedule's task, as a django-q2 cluster resolves and runs it."""
    schedule = Schedule.objects.get(name="jobs.retention_purge")
    assert schedule.schedule_type == Schedule.HOURLY and schedule.repeats == -1
    return import_string(schedule.func)()


def test_the_schedule_deletes_expired_jobs_with_their_files_and_keeps_the_others(
        api_client, user, settings, django_capture_on_commit_callbacks):
    settings.OCR_RETENTION_DAYS = 30
    old, fresh = finished_job(user, days_ago=31, color="red"), finished_job(user, days_ago=29, color="blue")
    old_files, fresh_files = stored_names(old), stored_names(fresh)
    fresh_bytes = fresh.document.size_bytes + fresh.pages.get().stored_bytes

    with django_capture_on_commit_callbacks(execute=True):
        assert run_schedule() == 1

    assert api_client.get(f"{JOBS}/{old.pk}").status_code == 404
    assert not any(default_storage.exists(name) for name in old_files)
    assert api_client.get(f"{JOBS}/{fresh.pk}").status_code == 200
    assert all(default_storage.exists(name) for name in fresh_files)
    assert stored_bytes(user) == fresh_bytes  # the deleted job's bytes went back to the quota
    entry = AuditEntry.objects.get(job=old.pk)
    assert (entry.action, entry.actor, entry.address) == ("deleted", "retention", None)


def test_a_users_own_retention_overrides_the_sites(user, other_user, settings,
                                                   django_capture_on_commit_callbacks):
    settings.OCR_RETENTION_DAYS = 0  # the site keeps jobs
    UserSettings.objects.create(user=user, retention_days=5)
    UserSettings.objects.create(user=other_user, retention_days=0)
    mine, theirs = finished_job(user, days_ago=6), finished_job(other_user, days_ago=600)

    with django_capture_on_commit_callbacks(execute=True):
        run_schedule()
    assert not Job.objects.filter(pk=mine.pk).exists() and Job.objects.filter(pk=theirs.pk).exists()

    settings.OCR_RETENTION_DAYS = 1  # the other user's 0 still keeps theirs
    run_schedule()
    assert Job.objects.filter(pk=theirs.pk).exists()


def test_keep_results_removes_exactly_the_original_and_page_images(
        api_client, user, settings, django_capture_on_commit_callbacks):
    settings.OCR_RETENTION_DAYS, settings.OCR_RETENTION_KEEP_RESULTS = 30, True
    job = finished_job(user, days_ago=31)
    name = export_name(job, "txt")
    import_string("jobs.tasks.build_export")(str(job.pk), "txt", name)  # a worker built the txt export
    export_bytes = ExportFile.objects.get(name=name).size_bytes
    original, image, thumbnail = stored_names(job)

    with django_capture_on_commit_callbacks(execute=True):
        assert run_schedule() == 1

    assert not any(default_storage.exists(n) for n in (original, image, thumbnail))
    assert default_storage.exists(name) and ExportFile.objects.filter(name=name).exists()
    assert stored_bytes(user) == export_bytes  # the original's and page images' bytes were given back
    body = api_client.get(f"{JOBS}/{job.pk}").json()
    assert body["status"] == "succeeded" and body["expires_at"] is None
    result = api_client.get(f"{JOBS}/{job.pk}/result").json()
    assert "Hello world" in result["result"]["text"]
    assert "Hello world" in api_client.get(f"{JOBS}/{job.pk}/export.txt").content.decode()
    assert api_client.get(f"{JOBS}/{job.pk}/pages/1/image").status_code == 404
    assert api_client.post(f"{JOBS}/{job.pk}/retry").status_code == 409
    assert AuditEntry.objects.get(job=job.pk, action="purged").actor == "retention"

    assert run_schedule() == 0  # purged once: nothing is left to expire


def test_expires_at_in_the_api(api_client, user, settings):
    settings.OCR_RETENTION_DAYS = 30
    job = finished_job(user, days_ago=1)
    active, _ = services.job_create(owner=user, file=png_bytes(color="green"), filename="green.png")

    def expires_at(job_id):
        return api_client.get(f"{JOBS}/{job_id}").json()["expires_at"]

    assert parse_datetime(expires_at(job.pk)) == job.finished_at + timedelta(days=30)
    assert expires_at(active.pk) is None  # still queued: not finished, so not expiring
    listed = {row["id"]: row["expires_at"] for row in api_client.get(JOBS).json()["results"]}
    assert parse_datetime(listed[str(job.pk)]) == job.finished_at + timedelta(days=30)

    UserSettings.objects.create(user=user, retention_days=0)
    assert expires_at(job.pk) is None
    UserSettings.objects.filter(user=user).update(retention_days=2)
    assert parse_datetime(expires_at(job.pk)) == job.finished_at + timedelta(days=2)
    UserSettings.objects.filter(user=user).update(retention_days=None)
    settings.OCR_RETENTION_DAYS = 0
    assert expires_at(job.pk) is None


def test_the_dashboard_and_the_job_page_show_when_a_job_expires(client, user, settings):
    settings.OCR_RETENTION_DAYS = 30
    job = finished_job(user, days_ago=1)
    shown = timezone.localtime(job.finished_at + timedelta(days=30)).strftime("%Y-%m-%d %H:%M")
    client.force_login(user)
    dashboard = client.get("/").content.decode()
    assert "Expires" in dashboard and shown in dashboard
    assert shown in client.get(f"/jobs/{job.pk}/").content.decode()

    settings.OCR_RETENTION_DAYS = 0
    assert shown not in client.get("/").content.decode()
    assert 'id="expires-at"' not in client.get(f"/jobs/{job.pk}/").content.decode()


def test_ocr_purge_dry_run_reports_and_deletes_nothing_then_deletes(user, settings,
                                                                    django_capture_on_commit_callbacks):
    settings.OCR_RETENTION_DAYS = 30
    old = finished_job(user, days_ago=40, color="red")
    finished_job(user, days_ago=1, color="blue")
    old_bytes = old.document.size_bytes + old.pages.get().stored_bytes
    before = stored_bytes(user)

    out = io.StringIO()
    call_command("ocr_purge", "--dry-run", stdout=out)
    assert str(old.pk) in out.getvalue()
    assert f"Would remove the 1 expired job(s): {old_bytes} bytes." in out.getvalue()
    assert Job.objects.count() == 2 and all(default_storage.exists(n) for n in stored_names(old))
    assert stored_bytes(user) == before and not AuditEntry.objects.exists()

    out = io.StringIO()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("ocr_purge", stdout=out)
    assert f"Removed the 1 expired job(s): {old_bytes} bytes." in out.getvalue()
    assert not Job.objects.filter(pk=old.pk).exists() and Job.objects.count() == 1
    assert stored_bytes(user) == before - old_bytes
