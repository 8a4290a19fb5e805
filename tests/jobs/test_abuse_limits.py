"""Rate limits, quotas and login lockout: 429 with a code, before any work is done or stored."""

from __future__ import annotations

import importlib
import multiprocessing
import time
from datetime import timedelta

import pytest
from django.apps import apps
from django.core.files.uploadedfile import SimpleUploadedFile

from jobs.api import budgets
from jobs.models import Document, ExportFile, Job, PageResult, StorageUsage, UserSettings
from jobs.services import job_create
from jobs.services.storage import orphan_files_sweep
from tests.jobs.helpers import page_record, small_png, three_page_pdf
from tests.jobs.test_api import run_pages
from tests.jobs.test_export_worker import build_queued

pytestmark = pytest.mark.django_db


def upload(name="page.png", data=None, content_type="image/png"):
    return SimpleUploadedFile(name, data or small_png(), content_type=content_type)


@pytest.fixture(autouse=True)
def fresh_rate_counters():
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


@pytest.fixture(params=["cache", "file"])
def budgets_store(request, settings, tmp_path):
    """Budgets in the cache (Redis here, as with PostgreSQL) and in the embedded default's SQLite file; either
    starts empty (on SQLite user ids repeat across tests, and an earlier test's budget would be this one's)."""
    from django.core.cache import cache

    cache.clear()
    if request.param == "file":
        settings.API_RATE_BUDGETS_FILE = str(tmp_path / "rate-budgets.sqlite3")
    return request.param


@pytest.mark.usefixtures("budgets_store")
def test_user_rate_limit_answers_429_with_retry_after(api_client, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "user": "3/min"}
    codes = [api_client.get("/api/v1/jobs").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    response = api_client.get("/api/v1/jobs")
    assert response.json()["code"] == "throttled" and int(response["Retry-After"]) > 0


@pytest.mark.usefixtures("budgets_store")
def test_a_spent_budget_comes_back_one_request_per_interval(api_client, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "user": "2/s"}  # two at once, then one per 0.5 s
    assert [api_client.get("/api/v1/jobs").status_code for _ in range(3)] == [200, 200, 429]
    time.sleep(0.6)
    assert [api_client.get("/api/v1/jobs").status_code for _ in range(2)] == [200, 429]


@pytest.mark.usefixtures("budgets_store")
def test_anonymous_calls_are_limited_per_address(client, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "anon": "2/min"}
    wrong_token = [client.get("/api/v1/jobs", HTTP_AUTHORIZATION="Token wrong").status_code for _ in range(3)]
    assert wrong_token == [401, 401, 429]
    assert client.get("/api/v1/jobs").status_code == 429  # no token at all: the same address, still limited


@pytest.mark.usefixtures("budgets_store")
def test_submissions_have_their_own_limit(api_client, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "submit": "1/min"}
    assert api_client.post("/api/v1/jobs", {"file": upload()}, format="multipart").status_code == 202
    refused = api_client.post("/api/v1/jobs", {"file": upload("other.png", three_page_pdf(), "application/pdf")},
                              format="multipart")
    assert refused.status_code == 429 and refused.json()["code"] == "throttled"
    assert api_client.get("/api/v1/jobs").status_code == 200  # reading goes on
    assert Job.objects.count() == 1


def distinct_pngs(count: int) -> list[tuple[str, bytes]]:
    # Bytes after a PNG's end are ignored by readers and make every file (and its hash) distinct.
    return [(f"page-{n}.png", small_png() + f"#{n}".encode()) for n in range(count)]


def post_upload_form(client, files: list[tuple[str, bytes]]):
    return client.post("/upload/", {"files": [SimpleUploadedFile(name, data, content_type="image/png")
                                              for name, data in files], "pipeline": "ocr", "lang": "en"})


@pytest.mark.usefixtures("budgets_store")
def test_the_upload_form_spends_the_submit_budget_one_job_a_file(client, api_client, user, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "submit": "3/min"}
    client.force_login(user)
    files = distinct_pngs(5)
    assert post_upload_form(client, files[:2]).status_code == 302  # two jobs of three

    refused = post_upload_form(client, files[2:4])  # two more: over the budget, so neither is stored
    assert refused.status_code == 429 and 0 < int(refused["Retry-After"]) <= 60
    page = refused.content.decode()
    assert "more files than this site takes in a short time (3/min)" in page and "Try again in" in page
    assert Job.objects.count() == 2

    # The API spends the same budget: the one job left, then 429.
    last = upload("c.png", files[4][1])
    assert api_client.post("/api/v1/jobs", {"file": last}, format="multipart").status_code == 202
    assert api_client.post("/api/v1/jobs", {"file": upload()}, format="multipart").status_code == 429


def test_the_upload_form_takes_at_most_ocr_upload_max_files(client, user, settings):
    settings.OCR_UPLOAD_MAX_FILES = 2
    client.force_login(user)
    refused = post_upload_form(client, distinct_pngs(3))
    assert refused.status_code == 400
    assert "At most 2 files at once; these are 3." in refused.content.decode()
    assert not Job.objects.exists() and not Document.objects.exists()
    assert "up to 2 at once" in client.get("/upload/").content.decode()


def test_web_processes_spending_one_budget_at_once_never_overspend_it(tmp_path):
    """The embedded default's budgets are checked and spent in one statement: four processes that open
    the file and take from one budget of 50 calls an hour at the same time get exactly 50 between them."""
    path = str(tmp_path / "rate-budgets.sqlite3")
    fork = multiprocessing.get_context("fork")
    start, granted = fork.Barrier(4), fork.Queue()

    def spend() -> None:
        start.wait()
        try:
            granted.put(sum(budgets._file_budgets(path).take("throttle_user_1", 72, 3600) == 0 for _ in range(30)))
        except Exception as error:  # noqa: BLE001 - reported by the parent ("database is locked" at set-up, once)
            granted.put(repr(error))

    processes = [fork.Process(target=spend) for _ in range(4)]
    for process in processes:
        process.start()
    results = [granted.get(timeout=60) for _ in processes]
    for process in processes:
        process.join(10)
    assert all(isinstance(result, int) for result in results), results
    assert sum(results) == 50
    assert 0 < budgets._file_budgets(path).take("throttle_user_1", 72, 3600) <= 72  # spent: one more comes back within 72 s


def test_pages_per_day_quota(api_client, user):
    UserSettings.objects.create(user=user, max_pages_per_day=4)
    assert api_client.post("/api/v1/jobs", {"file": upload("a.pdf", three_page_pdf(), "application/pdf")},
                           format="multipart").status_code == 202
    refused = api_client.post("/api/v1/jobs", {"file": upload("b.pdf", three_page_pdf() + b"\n%x\n",
                                                              "application/pdf")}, format="multipart")
    assert refused.status_code == 429 and refused.json()["code"] == "quota_exceeded"
    assert "4" in refused.json()["detail"]
    assert Job.objects.count() == 1 and Document.objects.count() == 1  # nothing stored for the refused one
    # A one-page upload still fits.
    assert api_client.post("/api/v1/jobs", {"file": upload()}, format="multipart").status_code == 202


def test_storage_quota_and_zero_means_unlimited(api_client, user, settings):
    settings.OCR_QUOTA_PAGES_PER_DAY = 0
    own = UserSettings.objects.create(user=user, max_storage_bytes=len(small_png()) + 10)
    assert api_client.post("/api/v1/jobs", {"file": upload()}, format="multipart").status_code == 202
    refused = api_client.post("/api/v1/jobs", {"file": upload("b.pdf", three_page_pdf(), "application/pdf")},
                              format="multipart")
    assert refused.status_code == 429 and refused.json()["code"] == "quota_exceeded"
    own.max_storage_bytes = 0
    own.save()
    assert api_client.post("/api/v1/jobs", {"file": upload("b.pdf", three_page_pdf(), "application/pdf")},
                           format="multipart").status_code == 202


def test_file_url_jobs_queued_at_once_are_capped_per_user(api_client, other_api_client, user, settings):
    """A file_url job has no pages until a worker has its file: the pages quota cannot hold them back."""
    settings.OCR_MAX_QUEUED_URL_JOBS = 2

    def submit(client, n):
        return client.post("/api/v1/jobs", {"file_url": f"http://127.0.0.1:9/doc-{n}.pdf"}, format="json")

    first, second = submit(api_client, 1), submit(api_client, 2)
    assert (first.status_code, second.status_code) == (202, 202)
    refused = submit(api_client, 3)
    assert refused.status_code == 429 and refused.json()["code"] == "quota_exceeded"
    assert "2" in refused.json()["detail"]
    assert Job.objects.filter(owner=user).count() == 2  # nothing made for the refused one
    assert submit(other_api_client, 1).status_code == 202  # a cap per user
    assert api_client.post("/api/v1/jobs", {"file": upload()}, format="multipart").status_code == 202  # uploads pass
    Job.objects.filter(pk=first.json()["id"]).update(status=Job.Status.FAILED)  # one of them finished
    assert submit(api_client, 4).status_code == 202
    assert submit(api_client, 5).status_code == 429
    UserSettings.objects.create(user=user, max_queued_url_jobs=0)  # the user's own value: no limit
    assert submit(api_client, 6).status_code == 202


def test_a_deleted_jobs_file_no_longer_counts_against_the_storage_quota(api_client, user, settings):
    settings.OCR_QUOTA_PAGES_PER_DAY = 0
    pdf, other_pdf = three_page_pdf(), three_page_pdf() + b"\n%x\n"  # distinct bytes: no deduplication
    UserSettings.objects.create(user=user, max_storage_bytes=len(other_pdf) + 10)
    first = api_client.post("/api/v1/jobs", {"file": upload("a.pdf", pdf, "application/pdf")}, format="multipart")
    assert first.status_code == 202
    refused = api_client.post("/api/v1/jobs", {"file": upload("b.pdf", other_pdf, "application/pdf")},
                              format="multipart")
    assert refused.status_code == 429 and refused.json()["code"] == "quota_exceeded"
    assert str(len(pdf) + len(other_pdf)) in refused.json()["detail"]

    assert api_client.delete(f"/api/v1/jobs/{first.json()['id']}").status_code == 204
    assert api_client.post("/api/v1/jobs", {"file": upload("b.pdf", other_pdf, "application/pdf")},
                           format="multipart").status_code == 202
    assert StorageUsage.objects.get(user=user).stored_bytes == len(other_pdf)


def test_an_upgraded_site_counts_the_files_stored_before_the_running_totals(api_client, user, other_user, settings):
    """Migration 0010 counts each owner's stored bytes once; the storage quota then holds as before."""
    settings.OCR_QUOTA_PAGES_PER_DAY = 0
    for owner, data, name in ((user, small_png(), "a.png"), (user, three_page_pdf(), "b.pdf"),
                              (other_user, three_page_pdf(), "c.pdf")):
        job_create(owner=owner, file=data, filename=name)
    StorageUsage.objects.all().delete()  # a site upgraded from before the totals has none

    importlib.import_module("jobs.migrations.0010_storage_usage").count_stored_bytes(apps, None)

    assert {usage.user_id: usage.stored_bytes for usage in StorageUsage.objects.all()} == {
        user.pk: len(small_png()) + len(three_page_pdf()), other_user.pk: len(three_page_pdf())}
    UserSettings.objects.create(user=user, max_storage_bytes=len(small_png()) + len(three_page_pdf()) + 10)
    refused = api_client.post("/api/v1/jobs", {"file": upload("d.pdf", three_page_pdf() + b"\n%x\n",
                                                              "application/pdf")}, format="multipart")
    assert refused.status_code == 429 and refused.json()["code"] == "quota_exceeded"


def test_page_images_and_built_exports_count_against_the_storage_quota(api_client, user, settings, media_root):
    settings.OCR_QUOTA_PAGES_PER_DAY = 0
    settings.OCR_EXPORT_INLINE_MAX_PAGES = 2  # three pages count as long: a worker builds the export
    settings.OCR_EXPORT_WAIT_SECONDS = 0.3
    pdf = three_page_pdf()
    job = Job.objects.get(pk=api_client.post("/api/v1/jobs", {"file": upload("a.pdf", pdf, "application/pdf")},
                                             format="multipart").json()["id"])
    records = [page_record(n) for n in (1, 2, 3)]
    run_pages(job, records)
    pages = sum(len(r.image_jpeg) + len(r.thumbnail) for r in records)
    assert StorageUsage.objects.get(user=user).stored_bytes == len(pdf) + pages

    assert api_client.get(f"/api/v1/jobs/{job.pk}/export.pdf").status_code == 202
    build_queued()
    [export] = media_root.glob("exports/*/*.pdf")
    stored = len(pdf) + pages + export.stat().st_size
    UserSettings.objects.create(user=user, max_storage_bytes=stored + len(small_png()) - 1)
    refused = api_client.post("/api/v1/jobs", {"file": upload()}, format="multipart")
    assert refused.status_code == 429 and refused.json()["code"] == "quota_exceeded"
    assert f"would make {stored + len(small_png())} stored bytes" in refused.json()["detail"]

    orphan_files_sweep(grace=timedelta(0))  # the export expires: its bytes are free again
    assert not export.exists()
    assert api_client.post("/api/v1/jobs", {"file": upload()}, format="multipart").status_code == 202
    assert StorageUsage.objects.get(user=user).stored_bytes == len(pdf) + pages + len(small_png())

    assert api_client.delete(f"/api/v1/jobs/{job.pk}").status_code == 204  # its document and page images go
    assert StorageUsage.objects.get(user=user).stored_bytes == len(small_png())


def test_a_deleted_jobs_built_exports_no_longer_count(api_client, user, settings):
    settings.OCR_EXPORT_INLINE_MAX_PAGES = 2
    settings.OCR_EXPORT_WAIT_SECONDS = 0.3
    job = Job.objects.get(pk=api_client.post("/api/v1/jobs", {"file": upload("a.pdf", three_page_pdf(),
                                                                             "application/pdf")},
                                             format="multipart").json()["id"])
    run_pages(job, [page_record(n) for n in (1, 2, 3)])
    api_client.get(f"/api/v1/jobs/{job.pk}/export.txt")
    build_queued()
    assert ExportFile.objects.filter(job=job).count() == 1
    assert api_client.delete(f"/api/v1/jobs/{job.pk}").status_code == 204
    assert StorageUsage.objects.get(user=user).stored_bytes == 0 and not ExportFile.objects.exists()


def test_an_upgraded_site_counts_the_page_images_stored_before_them(user):
    """Migration 0014 counts the page images and thumbnails already stored, on their pages and their owners."""
    job = job_create(owner=user, file=three_page_pdf(), filename="a.pdf")[0]
    records = [page_record(n) for n in (1, 2)]
    run_pages(job, records)
    PageResult.objects.update(stored_bytes=0)
    StorageUsage.objects.filter(user=user).update(stored_bytes=len(three_page_pdf()))  # as before the counts

    importlib.import_module("jobs.migrations.0014_stored_page_and_export_bytes").count_page_bytes(apps, None)

    pages = [len(r.image_jpeg) + len(r.thumbnail) for r in records]
    assert list(PageResult.objects.order_by("page_number").values_list("stored_bytes", flat=True)) == pages
    assert StorageUsage.objects.get(user=user).stored_bytes == len(three_page_pdf()) + sum(pages)


def test_login_locks_after_repeated_failures(client, user):
    failures = [client.post("/accounts/login/", {"username": "alice", "password": "wrong"}).status_code
                for _ in range(5)]
    assert failures[:4] == [200] * 4  # the form again, with its error
    locked = client.post("/accounts/login/", {"username": "alice", "password": "pw-alice"})
    assert locked.status_code == 429  # even the right password, until the cool-off ends
    assert "_auth_user_id" not in client.session


def test_a_forwarded_for_header_changes_no_clients_address(client, user, settings):
    """The web server alone puts a forwarded address in REMOTE_ADDR (FORWARDED_ALLOW_IPS): lockout and
    throttles read no header (tests/e2e/test_proxy.py: behind the real nginx)."""
    for n in range(5):
        client.post("/accounts/login/", {"username": "alice", "password": "wrong"},
                    HTTP_X_FORWARDED_FOR=f"198.51.100.{n}")
    locked = client.post("/accounts/login/", {"username": "alice", "password": "pw-alice"},
                         HTTP_X_FORWARDED_FOR="198.51.100.99")
    assert locked.status_code == 429
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "anon": "2/min"}
    codes = [client.get("/api/v1/jobs", HTTP_X_FORWARDED_FOR=f"198.51.100.{n}").status_code for n in range(3)]
    assert codes == [401, 401, 429]
