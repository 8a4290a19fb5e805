"""Stored files in a real S3 server (SeaweedFS, tests/s3_server.py): ``STORAGE_URL=s3://bucket/prefix``."""

from __future__ import annotations

import io
import time
import zipfile
from datetime import timedelta

import pikepdf
import pypdf
import pytest
import requests
from PIL import Image
from django.core.exceptions import ImproperlyConfigured
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from jobs import tasks
from jobs.models import Job, StorageUsage
from jobs.reread import reread_box
from jobs.services.storage import orphan_files_sweep
from ocrsite.object_store import FILE_SYSTEM, default_storage_settings
from tests.jobs.helpers import corrected_job, page_record, three_page_pdf
from tests.jobs.test_api import JOBS, run_pages, upload
from tests.jobs.test_export_pdfa import BORN_DIGITAL
from tests.jobs.test_export_worker import build_queued
from tests.ocr_engine import samples
from tests.s3_server import stored_keys


def test_storage_url_picks_the_default_storage():
    assert default_storage_settings("", endpoint_url=None, region=None, url_seconds=60) == FILE_SYSTEM
    s3 = default_storage_settings("s3://ocr-files/site/a/", endpoint_url="http://minio:9000", region="eu-1",
                                  url_seconds=60)
    assert s3["BACKEND"] == "storages.backends.s3.S3Storage"
    assert {k: s3["OPTIONS"][k] for k in ("bucket_name", "location", "endpoint_url", "region_name",
                                          "querystring_expire", "file_overwrite")} == {
        "bucket_name": "ocr-files", "location": "site/a", "endpoint_url": "http://minio:9000",
        "region_name": "eu-1", "querystring_expire": 60, "file_overwrite": False}
    for wrong in ("ocr-files", "s3://", "https://s3.example.com/ocr-files", "s3://b/p?x=1"):
        with pytest.raises(ImproperlyConfigured, match="STORAGE_URL"):
            default_storage_settings(wrong, endpoint_url=None, region=None, url_seconds=60)


def local_files(media_root) -> list[str]:
    return [str(path.relative_to(media_root)) for path in media_root.rglob("*") if path.is_file()]


@pytest.mark.models
@pytest.mark.django_db
def test_a_worker_reads_the_original_from_the_store_and_stores_each_page_there(
        api_client, other_api_client, object_store, media_root, django_capture_on_commit_callbacks):
    pdf = samples.report_pdf(pages=2, dpi=60).data
    job = Job.objects.get(pk=upload(api_client, pdf, name="report.pdf", pipeline="ocr").json()["id"])
    assert stored_keys(object_store, "documents/") == [job.document.file.name]

    with django_capture_on_commit_callbacks(execute=True):
        tasks.process_job(str(job.pk))

    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED, job.error_detail
    pages = list(job.pages.order_by("page_number"))
    assert [p.line_count > 3 for p in pages] == [True, True]
    assert stored_keys(object_store, f"pages/{job.pk}/") == sorted(
        name for p in pages for name in (p.image.name, p.thumbnail.name))  # each page once, image and thumbnail
    image = api_client.get(f"{JOBS}/{job.pk}/pages/2/image")
    assert image.status_code == 200 and b"".join(image.streaming_content)[:2] == b"\xff\xd8"
    assert other_api_client.get(f"{JOBS}/{job.pk}/pages/2/image").status_code == 404
    assert local_files(media_root) == []  # nothing of the job on this machine's disk

    # A redrawn box is read on the page image, which the worker reads from the store.
    line = pages[1].normalized["lines"][0]
    assert reread_box(pages[1].pk, line["polygon"])["text"] == line["text"]


@pytest.mark.django_db
def test_a_download_is_streamed_or_a_presigned_link_that_expires(
        api_client, other_api_client, object_store, settings):
    settings.OCR_EXPORT_INLINE_MAX_PAGES = 2  # three pages: a worker builds the export, into the store
    settings.OCR_EXPORT_WAIT_SECONDS = 0.3
    job = Job.objects.get(pk=upload(api_client, three_page_pdf(), name="report.pdf").json()["id"])
    run_pages(job, [page_record(1), page_record(2, texts=("Page two",)), page_record(3)])
    url = f"{JOBS}/{job.pk}/export.pdf"
    assert api_client.get(url).status_code == 202
    build_queued()
    [export] = stored_keys(object_store, "exports/")

    streamed = api_client.get(url)
    assert streamed.status_code == 200 and 'filename="report.pdf"' in streamed["Content-Disposition"]
    content = b"".join(streamed.streaming_content)
    assert int(streamed["Content-Length"]) == len(content)
    assert "Page two" in pypdf.PdfReader(io.BytesIO(content)).pages[1].extract_text()
    assert other_api_client.get(url).status_code == 404

    settings.OCR_DOWNLOAD_REDIRECT = True
    settings.OCR_DOWNLOAD_URL_SECONDS = 2
    assert other_api_client.get(url).status_code == 404  # the owner check comes first, as when streamed
    redirect = api_client.get(url)
    assert redirect.status_code == 302 and redirect["Location"].startswith(object_store.endpoint)
    made = time.monotonic()
    fetched = requests.get(redirect["Location"], timeout=10)
    assert fetched.status_code == 200 and fetched.content == content
    assert 'filename="report.pdf"' in fetched.headers["Content-Disposition"]
    assert requests.get(redirect["Location"].replace(export.rsplit("/", 1)[1], "other.pdf"),
                        timeout=10).status_code == 403  # the signature covers the key: no other file
    deadline = made + 15
    while (status := requests.get(redirect["Location"], timeout=10).status_code) == 200:
        assert time.monotonic() < deadline, "the link did not expire"
        time.sleep(0.2)
    assert status == 403 and time.monotonic() - made >= 1


@pytest.mark.django_db
def test_pdfa_of_a_born_digital_original_is_built_from_the_stored_original(api_client, object_store, settings):
    settings.OCR_EXPORT_INLINE_MAX_PAGES = 20
    job = Job.objects.get(pk=upload(api_client, BORN_DIGITAL.read_bytes(), name="bash.pdf").json()["id"])
    record = page_record(1)
    record.page.text_source = "pdf"
    run_pages(job, [record])
    response = api_client.get(f"{JOBS}/{job.pk}/export.pdf?pdfa=2b")
    assert response.status_code == 200
    (page,) = pypdf.PdfReader(io.BytesIO(response.content)).pages
    assert page.extract_text() == pypdf.PdfReader(BORN_DIGITAL).pages[0].extract_text()
    with pikepdf.open(io.BytesIO(response.content)) as pdf:
        assert not pdf.pages[0].get_images()


@pytest.mark.django_db
def test_sweep_quota_and_delete_work_against_the_store(api_client, user, object_store,
                                                       django_capture_on_commit_callbacks):
    job = Job.objects.get(pk=upload(api_client, three_page_pdf(), name="a.pdf").json()["id"])
    records = [page_record(n) for n in (1, 2)]
    run_pages(job, records)
    kept = stored_keys(object_store, "")
    assert StorageUsage.objects.get(user=user).stored_bytes == len(three_page_pdf()) + sum(
        len(r.image_jpeg) + len(r.thumbnail) for r in records)
    orphan = default_storage.save(f"pages/{job.pk}/p0009.jpg", ContentFile(b"left by a killed worker"))

    assert orphan_files_sweep(grace=timedelta(hours=1)) == []  # too young: it may be a page being stored
    assert orphan_files_sweep(grace=timedelta(0)) == [orphan]
    assert stored_keys(object_store, "") == kept

    with django_capture_on_commit_callbacks(execute=True):
        assert api_client.delete(f"{JOBS}/{job.pk}").status_code == 204
    assert stored_keys(object_store, "") == []
    assert StorageUsage.objects.get(user=user).stored_bytes == 0


@pytest.mark.django_db
def test_an_upload_while_the_store_is_down_is_a_clear_503(api_client, object_store):
    object_store.stop()
    try:
        refused = upload(api_client, three_page_pdf(), name="a.pdf")
    finally:
        object_store.start()
    assert refused.status_code == 503 and refused.json()["code"] == "storage_unavailable"
    assert not Job.objects.exists()
    assert upload(api_client, three_page_pdf(), name="a.pdf").status_code == 202


@pytest.mark.models
@pytest.mark.django_db
def test_a_store_down_past_the_workers_retries_fails_the_job_with_a_code_and_it_can_be_retried(
        api_client, object_store, settings, django_capture_on_commit_callbacks):
    settings.OCR_STORE_RETRY_SECONDS = 1
    job_id = upload(api_client, samples.report_pdf(pages=1, dpi=60).data, name="r.pdf", pipeline="ocr").json()["id"]
    object_store.stop()
    try:
        with django_capture_on_commit_callbacks(execute=True):
            tasks.process_job(job_id)
    finally:
        object_store.start()
    failed = api_client.get(f"{JOBS}/{job_id}").json()
    assert failed["status"] == "failed" and failed["error"]["code"] == "storage_unavailable", failed

    assert api_client.post(f"{JOBS}/{job_id}/retry").status_code == 202
    with django_capture_on_commit_callbacks(execute=True):
        tasks.process_job(job_id)
    assert api_client.get(f"{JOBS}/{job_id}").json()["status"] == "succeeded"


@pytest.mark.django_db
def test_dedup_and_the_training_set_work_from_the_store(api_client, user, object_store):
    pdf = three_page_pdf()
    first = upload(api_client, pdf, name="a.pdf").json()["id"]
    assert upload(api_client, pdf, name="b.pdf").json()["id"] == first  # the same content: the same job
    assert len(stored_keys(object_store, "documents/")) == 1

    corrected_job(user, pages=2)  # page images in the store; a reviewer retyped a line of each
    archive = zipfile.ZipFile(io.BytesIO(api_client.get("/api/v1/training-set").getvalue()))
    labels = [row.split("\t") for row in archive.read("rec_gt.txt").decode().splitlines()]
    assert [text for _, text in labels] == ["Hello, page 1", "Hello, page 2"]
    with Image.open(io.BytesIO(archive.read(labels[0][0]))) as crop:
        assert crop.width > 10 and crop.height > 3


@pytest.mark.django_db
def test_readyz_checks_the_store_and_is_503_while_it_is_down(client, object_store):
    assert client.get("/readyz").json()["checks"]["store"] == "object store"
    object_store.stop()
    try:
        response = client.get("/readyz")
    finally:
        object_store.start()
    assert response.status_code == 503
    assert response.json()["failed"] == {"store": "the file store did not answer (STORAGE_URL)"}
    assert client.get("/readyz").status_code == 200


@pytest.mark.django_db
def test_on_the_file_system_a_missing_original_is_not_waited_for_as_a_store_outage(
        api_client, media_root, settings, django_capture_on_commit_callbacks):
    settings.OCR_STORE_RETRY_SECONDS = 60
    job = Job.objects.get(pk=upload(api_client, three_page_pdf(), name="a.pdf").json()["id"])
    (media_root / job.document.file.name).unlink()
    started = time.monotonic()
    with django_capture_on_commit_callbacks(execute=True):
        try:
            tasks.process_job(str(job.pk))
        except OSError:
            pass  # what the task does with it is the worker's; what matters is that it did not wait
    assert time.monotonic() - started < 30
    job.refresh_from_db()
    assert job.error_code != "storage_unavailable"
