"""Template views with Django's test client: log-in, dashboard, upload (the no-JavaScript path), job page, settings."""

from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token

from jobs import services
from jobs.models import Document, Job, LineCorrection, PageResult
from tests.jobs.factories import JobFactory, PageResultFactory
from tests.jobs.helpers import page_record, small_png, three_page_pdf

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser(client, user):
    client.force_login(user)
    return client


def finished_job(owner, texts=("Hello world", "Second line"), confidence=0.9) -> Job:
    job = JobFactory(owner=owner)
    services.job_claim(job_id=job.pk, worker_id="w")
    services.job_record_page(job_id=job.pk, worker_id="w", record=page_record(1, texts=texts, confidence=confidence))
    return services.job_finish(job_id=job.pk, worker_id="w")


# --- log-in ---------------------------------------------------------------

@pytest.mark.parametrize("path", ["/", "/upload/", "/settings/", "/jobs/00000000-0000-0000-0000-000000000000/"])
def test_pages_need_a_login(client, path):
    response = client.get(path)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")


def test_login_and_logout(client, user):
    page = client.get("/accounts/login/")
    assert page.status_code == 200 and b'name="username"' in page.content

    wrong = client.post("/accounts/login/", {"username": "alice", "password": "nope"})
    assert wrong.status_code == 200 and b"enter a correct username and password" in wrong.content.lower()

    ok = client.post("/accounts/login/", {"username": "alice", "password": "pw-alice"})
    assert ok.status_code == 302 and ok["Location"] == "/"
    assert client.get("/").status_code == 200

    out = client.post("/accounts/logout/")
    assert out.status_code == 302 and out["Location"] == "/accounts/login/"
    assert client.get("/").status_code == 302


# --- dashboard ------------------------------------------------------------

def test_dashboard_lists_own_jobs_with_progress(browser, user, other_user):
    mine = JobFactory(owner=user, status=Job.Status.RUNNING, pages_done=1, pages_total=4,
                      document__original_name="mine.pdf")
    JobFactory(owner=other_user, document__original_name="theirs.pdf")

    html = browser.get("/").content.decode()

    assert "mine.pdf" in html and "theirs.pdf" not in html
    row = re.search(rf'<tr data-job-id="{mine.pk}">.*?</tr>', html, re.S).group(0)
    assert "status-running" in row and "1 / 4" in row and 'aria-valuenow="1"' in row and "width: 25%" in row
    assert 'data-ws="/ws/jobs/"' in html


def test_dashboard_lists_pages_worst_first(browser, user, other_user):
    good = finished_job(user, confidence=0.97)
    bad = finished_job(user, texts=("Blurry", "text"), confidence=0.41)
    finished_job(other_user, confidence=0.1)

    html = browser.get("/?view=pages").content.decode()

    links = re.findall(r'href="/jobs/([0-9a-f-]+)/\?page=1"', html)
    assert links == [str(bad.pk), str(good.pk)]
    assert "41%" in html and "97%" in html


# --- upload (the plain form; static/js/upload.js posts to the API instead) -----

def upload(client, *files, **options):
    data = {"pipeline": "ocr", "lang": "en", "pages": "", **options,
            "files": [SimpleUploadedFile(name, content) for name, content in files]}
    return client.post("/upload/", data)


def test_upload_form_shows_options(browser):
    html = browser.get("/upload/").content.decode()
    assert 'type="file"' in html and "multiple" in html
    assert '<option value="structure" selected>' in html and '<option value="en" selected>' in html
    assert 'name="pages"' in html


def test_upload_one_file_opens_its_job(browser, user):
    response = upload(browser, ("scan.png", small_png()))

    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert (job.owner, job.pipeline, job.document.original_name) == (user, "ocr", "scan.png")


def test_upload_several_files_queues_one_job_each(browser):
    response = upload(browser, ("a.png", small_png()), ("b.pdf", three_page_pdf()))

    assert response.status_code == 302 and response["Location"] == "/"
    assert sorted(Job.objects.values_list("document__original_name", "pages_total")) == [("a.png", 1), ("b.pdf", 3)]
    assert "2 jobs queued." in browser.get("/").content.decode()


def test_upload_bad_page_range_is_shown_next_to_the_field(browser):
    response = upload(browser, ("b.pdf", three_page_pdf()), pages="3-1")

    assert response.status_code == 400
    errors = re.search(r'data-error-for="pages">(.*?)</div>', response.content.decode(), re.S).group(1)
    assert "3-1" in errors
    assert not Job.objects.exists() and not Document.objects.exists()


def test_upload_bad_file_is_shown_next_to_it_and_good_files_still_queue(browser, media_root):
    response = upload(browser, ("notes.txt", b"just some text, not a document"), ("ok.png", small_png()))

    assert response.status_code == 400
    html = response.content.decode()
    bad = re.search(r'<li class="file-item is-error">(.*?)</li>', html, re.S).group(1)
    assert "notes.txt" in bad and "unsupported_file_type" in bad
    good = re.search(r'<li class="file-item is-done">(.*?)</li>', html, re.S).group(1)
    job = Job.objects.get()
    assert "ok.png" in good and f"/jobs/{job.pk}/" in good
    assert Document.objects.count() == 1 and len([p for p in media_root.rglob("*") if p.is_file()]) == 1


def test_upload_without_files_is_a_form_error(browser):
    response = browser.post("/upload/", {"pipeline": "ocr", "lang": "en"})
    assert response.status_code == 400
    assert "This field is required." in re.search(r'data-error-for="files">(.*?)</div>',
                                                  response.content.decode(), re.S).group(1)


# --- job page -------------------------------------------------------------

def test_job_page_carries_what_the_script_needs(browser, user):
    job = finished_job(user)

    response = browser.get(f"/jobs/{job.pk}/")

    assert response.status_code == 200
    html = response.content.decode()
    config = json.loads(re.search(r'<script id="job-config" type="application/json">(.*?)</script>', html, re.S)
                        .group(1))
    assert config["job"]["id"] == str(job.pk) and config["job"]["page_numbers"] == [1]
    assert config["pages"] == [{"page_number": 1, "page_status": "succeeded", "line_count": 2, "region_count": 1}]
    assert config["ws"] == f"/ws/jobs/{job.pk}/"
    api = f"http://testserver/api/v1/jobs/{job.pk}"
    assert config["links"]["self"] == api and config["links"]["page"] == api + "/pages/{page_number}"
    for fmt in ("txt", "md", "json", "hocr", "alto", "pdf"):
        assert f'href="/api/v1/jobs/{job.pk}/export.{fmt}"' in html
    assert f'href="/api/v1/jobs/{job.pk}/export.pdf?pdfa=2b"' in html and ">PDF/A-2b</a>" in html


def test_job_page_of_another_user_is_404(browser, other_user):
    job = JobFactory(owner=other_user)
    assert browser.get(f"/jobs/{job.pk}/").status_code == 404
    assert browser.get(f"/api/v1/jobs/{job.pk}/pages/1").status_code == 404


# The review UI reads pages through the API with its session: one page shape.

def test_page_data_has_corrections_and_who_made_them(browser, user):
    job = finished_job(user)
    page = PageResult.objects.get(job=job)
    LineCorrection.objects.create(page=page, line_id="p1-l2", text="Second line, fixed", original_text="Second line",
                                  corrected_by=user)

    data = browser.get(f"/api/v1/jobs/{job.pk}/pages/1?raw=false").json()

    assert data["links"]["image"] == f"http://testserver/api/v1/jobs/{job.pk}/pages/1/image"
    assert data["links"]["line"] == f"http://testserver/api/v1/jobs/{job.pk}/pages/1/lines/{{line_id}}"
    assert "raw" not in data
    lines = data["normalized"]["lines"]
    assert [(ln["text"], ln["original_text"]) for ln in lines] == [("Hello world", None),
                                                                 ("Second line, fixed", "Second line")]
    assert data["normalized"]["text"] == "Hello world\nSecond line, fixed"
    assert data["corrections"]["p1-l2"]["by"] == "alice"


def test_page_data_of_an_unfinished_page_is_404(browser, user):
    job = JobFactory(owner=user)
    response = browser.get(f"/api/v1/jobs/{job.pk}/pages/1")
    assert response.status_code == 404 and response.json()["code"] == "not_found"


def test_failed_page_data_carries_its_error(browser, user):
    job = JobFactory(owner=user)
    PageResultFactory(job=job, status=PageResult.Status.FAILED, error_code="recognition_failed",
                      error_detail="boom")
    data = browser.get(f"/api/v1/jobs/{job.pk}/pages/1").json()
    assert data["normalized"] is None and data["error"] == {"code": "recognition_failed", "detail": "boom"}


# --- settings -------------------------------------------------------------

def test_settings_shows_and_regenerates_the_api_token(browser, user):
    assert "no API token yet" in browser.get("/settings/").content.decode()
    assert not Token.objects.exists()  # looking does not create one

    browser.post("/settings/token/")
    first = Token.objects.get(user=user).key
    assert first in browser.get("/settings/").content.decode()

    response = browser.post("/settings/token/")
    second = Token.objects.get(user=user).key
    assert response.status_code == 302 and second != first
    html = browser.get("/settings/").content.decode()
    assert second in html and first not in html


def test_token_cannot_be_regenerated_with_get(browser):
    assert browser.get("/settings/token/").status_code == 405
