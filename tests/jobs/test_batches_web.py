"""Batches in the browser: the upload form takes a ZIP, the dashboard groups a batch's jobs under one
heading and one progress bar, and the user's socket (ws/jobs/) carries the batch's progress."""

from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator
from django.core.files.uploadedfile import SimpleUploadedFile

from jobs.models import Batch
from jobs.services.batches import batch_create
from tests.jobs.helpers import TESTER
from tests.jobs.test_batches import make_zip, png, run_job
from tests.jobs.test_consumers import TIMEOUT, application, run, session_headers  # noqa: F401


@pytest.mark.django_db
def test_upload_form_makes_a_batch_of_a_zip_and_the_dashboard_groups_it(client, user):
    client.force_login(user)
    archive = make_zip([("a.png", png(1)), ("b.png", png(2)), ("../c.png", png(3))])

    answer = client.post("/upload/", {"files": [SimpleUploadedFile("scans.zip", archive)], "pipeline": "ocr",
                                      "lang": "en"})

    assert answer.status_code == 302 and answer["Location"] == "/"
    batch = Batch.objects.get()
    assert batch.jobs.count() == 2 and batch.errors[0]["code"] == "archive_path_unsafe"
    run_job(batch.jobs.order_by("batch_members__id").first())
    dashboard = client.get("/").content.decode()
    assert "Batch scans.zip: 2 job(s) queued; 1 file(s) refused, listed with it." in dashboard
    section = dashboard.split('id="batches"', 1)[1].split("</section>", 1)[0]
    assert "<h3" in section and "scans.zip" in section
    assert section.count('role="progressbar"') == 1 and 'aria-label="Jobs done"' in section
    assert 'aria-valuenow="1"' in section and ">1 / 2<" in section
    assert section.count("<li data-job-id=") == 2 and "a.png" in section and "b.png" in section
    assert "archive_path_unsafe" in section and "../c.png" in section


@pytest.mark.django_db(transaction=True)
def test_the_users_socket_carries_the_batch_progress(application, user):  # noqa: F811
    headers = session_headers(user)
    batch = batch_create(owner=user, files=[SimpleUploadedFile("two.zip", make_zip([("a.png", png(1)),
                                                                                     ("b.png", png(2))]))],
                         by=TESTER)
    first, second = batch.jobs.order_by("batch_members__id")

    async def scenario():
        from channels.db import database_sync_to_async

        ws = WebsocketCommunicator(application, "/ws/jobs/", headers=headers)
        assert (await ws.connect())[0]
        for _ in range(2):  # the state of each active job
            await ws.receive_json_from(TIMEOUT)
        await database_sync_to_async(run_job)(first)
        messages = [await ws.receive_json_from(TIMEOUT) for _ in range(4)]
        await database_sync_to_async(run_job)(second)
        messages += [await ws.receive_json_from(TIMEOUT) for _ in range(4)]
        await ws.disconnect()
        return [m for m in messages if m["event"] == "batch"]

    events = run(scenario)
    assert [(e["status"], e["batch"]["progress"]) for e in events] == [
        ("running", {"jobs_done": 1, "jobs_total": 2}), ("succeeded", {"jobs_done": 2, "jobs_total": 2})]
    assert all(e["batch"]["id"] == str(batch.pk) for e in events)
