"""``file_url`` submissions: the web request only checks the URL and queues; the worker downloads.

The remote site is a local HTTP server; the worker is the real task (``tasks.process_job``) with the
real engine, as in test_tasks.py; webhooks go to a real receiver.
"""

from __future__ import annotations

import hashlib
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django_q.models import OrmQ

from jobs import tasks
from jobs.models import Document, Job, PageResult, StorageUsage
from jobs.webhooks import tasks as webhook_tasks
from jobs.webhooks.services import DELIVER_TASK
from tests.jobs.helpers import Site, small_png, three_page_pdf
from tests.jobs.webhook_receiver import Receiver

pytestmark = [pytest.mark.django_db, pytest.mark.models]

JOBS = "/api/v1/jobs"


@pytest.fixture
def site():
    made = Site()
    yield made
    made.close()


@pytest.fixture
def receiver():
    made = Receiver()
    yield made
    made.close()


def run_worker(job_id: str, capture) -> dict:
    """The task the cluster runs for the job, its on-commit announcements (events, webhooks) included."""
    with capture(execute=True):
        tasks.process_job(job_id)
    return Job.objects.select_related("document").get(pk=job_id)


def stored_documents(media_root) -> list:
    return sorted(p for p in (media_root / "documents").rglob("*") if p.is_file())


def test_a_submit_answers_before_any_download_and_the_worker_fetches_and_reads_the_file(
        api_client, site, media_root, django_capture_on_commit_callbacks):
    pdf = three_page_pdf()
    site.routes["/docs/report.pdf"] = (200, pdf, 3)  # a slow server: the answer must not wait for it

    started = time.monotonic()
    response = api_client.post(JOBS, {"file_url": f"{site.url}/docs/report.pdf", "pages": "2-3"}, format="json")

    assert response.status_code == 202, response.json()
    assert time.monotonic() - started < 2 and site.hits == []
    body = response.json()
    assert body["status"] == "queued" and body["reused"] is False and body["document"]["name"] == "report.pdf"
    assert OrmQ.objects.count() == 1

    job = run_worker(body["id"], django_capture_on_commit_callbacks)

    assert site.hits == ["/docs/report.pdf"]
    assert job.status == Job.Status.SUCCEEDED, job.error_detail
    assert list(job.pages.values_list("page_number", "status")) == [(2, "succeeded"), (3, "succeeded")]
    seen = api_client.get(f"{JOBS}/{job.pk}").json()
    assert seen["page_numbers"] == [2, 3] and seen["progress"]["pages_total"] == 2
    assert seen["document"] == {"name": "report.pdf", "media_type": "application/pdf", "size_bytes": len(pdf),
                                "page_count": 3, "sha256": hashlib.sha256(pdf).hexdigest()}
    assert job.document.file.open("rb").read() == pdf
    assert StorageUsage.objects.get(user=job.owner).stored_bytes == len(pdf) + page_images_bytes(job.owner)
    assert not any((media_root / ".uploading").iterdir())  # the download was moved into storage


def test_a_url_that_cannot_be_fetched_fails_the_job_with_a_coarse_error_and_its_webhook(
        api_client, site, receiver, django_capture_on_commit_callbacks):
    response = api_client.post(JOBS, {"file_url": f"{site.url}/missing.pdf", "webhook_url": receiver.url},
                               format="json")
    assert response.status_code == 202, response.json()

    job = run_worker(response.json()["id"], django_capture_on_commit_callbacks)
    for entry in OrmQ.objects.all():
        if entry.task["func"] == DELIVER_TASK:
            webhook_tasks.deliver_webhook(*entry.task["args"])

    error = api_client.get(f"{JOBS}/{job.pk}").json()["error"]
    assert job.status == Job.Status.FAILED and error["code"] == "url_fetch_failed"
    assert "404" in error["detail"] and "127.0.0.1" not in error["detail"]
    (hook,) = receiver.received
    assert hook.headers["X-OCR-Event"] == "job.failed" and hook.json()["job"]["error"] == error


@pytest.mark.parametrize("body, options, code", [
    pytest.param(b"just some text\n", {}, "unsupported_file_type", id="not-a-document"),
    pytest.param(b"\0" * 200_000, {}, "file_too_large", id="over-the-upload-limit"),
    pytest.param(three_page_pdf(), {"pages": "2-9"}, "page_out_of_range", id="pages-it-does-not-have"),
])
def test_a_fetched_file_is_checked_as_an_upload_and_nothing_of_a_refused_one_is_kept(
        api_client, site, settings, media_root, django_capture_on_commit_callbacks, body, options, code):
    settings.OCR_MAX_UPLOAD_BYTES = 100_000  # more than the text and the PDF, less than the zeros
    site.routes["/file"] = (200, body, 0)
    response = api_client.post(JOBS, {"file_url": f"{site.url}/file", **options}, format="json")
    assert response.status_code == 202, response.json()

    job = run_worker(response.json()["id"], django_capture_on_commit_callbacks)

    assert (job.status, job.error_code) == (Job.Status.FAILED, code)
    assert stored_documents(media_root) == [] and not any((media_root / ".uploading").iterdir())
    assert not StorageUsage.objects.filter(stored_bytes__gt=0).exists()


def test_the_same_content_as_an_earlier_upload_is_stored_once(api_client, site, media_root,
                                                              django_capture_on_commit_callbacks):
    png = small_png()
    uploaded = api_client.post(JOBS, {"file": SimpleUploadedFile("scan.png", png)}, format="multipart").json()
    site.routes["/scan.png"] = (200, png, 0)
    fetched = api_client.post(JOBS, {"file_url": f"{site.url}/scan.png"}, format="json").json()

    job = run_worker(fetched["id"], django_capture_on_commit_callbacks)

    assert job.status == Job.Status.SUCCEEDED, job.error_detail
    assert str(job.document_id) == str(Job.objects.get(pk=uploaded["id"]).document_id)
    assert Document.objects.count() == 1 and len(stored_documents(media_root)) == 1
    assert StorageUsage.objects.get(user=job.owner).stored_bytes == len(png) + page_images_bytes(job.owner)


def page_images_bytes(user) -> int:
    """What the user's page images and thumbnails take, which the storage quota counts beside documents."""
    return sum(PageResult.objects.filter(job__owner=user).values_list("stored_bytes", flat=True))
