"""A long job's exports are built by a worker, never in the web process (issue 13).

The worker's part is played by calling the task with the arguments of its queue
entry in the real ORM broker, as tests/jobs/test_webhooks.py does for deliveries.
"""

from __future__ import annotations

import io
import json
import zipfile

import pypdf
import pytest
from django.core.files.base import ContentFile
from django_q.models import OrmQ

from jobs import tasks
from jobs.models import Job, LineCorrection, PageResult
from jobs.services.exports import BUILD_TASK
from tests.jobs.helpers import page_record, three_page_pdf
from tests.jobs.test_api import JOBS, run_pages, upload

pytestmark = pytest.mark.django_db


@pytest.fixture
def long_job(api_client, settings) -> Job:
    settings.OCR_EXPORT_INLINE_MAX_PAGES = 2  # three pages count as long here
    settings.OCR_EXPORT_WAIT_SECONDS = 0.3  # no worker runs in this test: the wait ends
    job = Job.objects.get(pk=upload(api_client, three_page_pdf(), name="report.pdf").json()["id"])
    run_pages(job, [page_record(1), page_record(2, texts=("Page two",)), page_record(3)])
    OrmQ.objects.all().delete()
    return job


def build_queued() -> list[tuple]:
    """Run the export builds waiting in the broker, as the cluster would; return their arguments."""
    queued = [tuple(e.task["args"]) for e in OrmQ.objects.all() if e.task["func"] == BUILD_TASK]
    for args in queued:
        tasks.build_export(*args)
    OrmQ.objects.all().delete()
    return queued


def test_the_pdf_of_a_long_job_is_built_by_a_worker_and_then_served(api_client, long_job, media_root):
    url = f"{JOBS}/{long_job.pk}/export.pdf"
    pending = api_client.get(url)
    assert pending.status_code == 202 and pending["Retry-After"] == "5"
    assert pending.json()["code"] == "export_pending"
    assert not list(media_root.glob("exports/*/*.pdf"))

    assert len(build_queued()) == 1
    served = api_client.get(url)
    assert served.status_code == 200 and served["Content-Type"] == "application/pdf"
    assert 'filename="report.pdf"' in served["Content-Disposition"]
    pdf = pypdf.PdfReader(io.BytesIO(b"".join(served.streaming_content)))
    assert len(pdf.pages) == 3 and "Page two" in pdf.pages[1].extract_text()
    assert build_queued() == []  # served from storage: nothing built again

    # A reviewer's correction makes a new version: the next request has it built afresh.
    page = PageResult.objects.get(job=long_job, page_number=2)
    LineCorrection.objects.create(page=page, line_id="p2-l1", text="Page two, corrected", original_text="Page two")
    assert api_client.get(url).status_code == 202
    build_queued()
    pdf = pypdf.PdfReader(io.BytesIO(b"".join(api_client.get(url).streaming_content)))
    assert "Page two, corrected" in pdf.pages[1].extract_text()


def test_asking_again_while_the_export_is_built_queues_no_second_build(api_client, long_job):
    url = f"{JOBS}/{long_job.pk}/export.pdf"
    assert [api_client.get(url).status_code for _ in range(3)] == [202, 202, 202]
    (build,) = [tuple(e.task["args"]) for e in OrmQ.objects.all()]
    OrmQ.objects.all().delete()

    # A build that fails (here: a page image lost from storage) gives its claim up, so that
    # the next request queues a new build instead of waiting for one that will never come.
    page = PageResult.objects.get(job=long_job, page_number=2)
    image = page.image.read()
    page.image.storage.delete(page.image.name)
    with pytest.raises(FileNotFoundError):
        tasks.build_export(*build)
    page.image.storage.save(page.image.name, ContentFile(image))
    assert api_client.get(url).status_code == 202
    assert len(build_queued()) == 1
    assert api_client.get(url).status_code == 200


def test_short_jobs_are_still_exported_in_the_request(api_client, settings):
    settings.OCR_EXPORT_INLINE_MAX_PAGES = 20
    job = Job.objects.get(pk=upload(api_client, three_page_pdf(), name="short.pdf").json()["id"])
    run_pages(job, [page_record(1), page_record(2), page_record(3)])
    OrmQ.objects.all().delete()
    response = api_client.get(f"{JOBS}/{job.pk}/export.pdf")
    assert response.status_code == 200 and response.content.startswith(b"%PDF")
    assert build_queued() == []


def test_deleting_the_job_removes_its_built_exports(api_client, long_job, media_root,
                                                     django_capture_on_commit_callbacks):
    api_client.get(f"{JOBS}/{long_job.pk}/export.pdf")
    build_queued()
    assert list((media_root / "exports").rglob("*.pdf"))
    with django_capture_on_commit_callbacks(execute=True):
        assert api_client.delete(f"{JOBS}/{long_job.pk}").status_code == 204
    assert not (media_root / "exports" / str(long_job.pk)).exists()


@pytest.mark.parametrize(("fmt", "media_type", "filename"), [
    ("txt", "text/plain", "report.txt"),
    ("md", "text/markdown", "report.md"),
    ("hocr", "text/html", "report.hocr"),
    ("alto", "application/xml", "report.xml"),
    ("page", "application/zip", "report.page.zip"),
])
def test_every_export_of_a_long_job_is_built_by_a_worker(api_client, long_job, fmt, media_type, filename):
    url = f"{JOBS}/{long_job.pk}/export.{fmt}"
    assert api_client.get(url).status_code == 202

    assert [args[1] for args in build_queued()] == [fmt]
    served = api_client.get(url)
    assert served.status_code == 200 and served["Content-Type"].startswith(media_type)
    assert f'filename="{filename}"' in served["Content-Disposition"]
    content = b"".join(served.streaming_content)
    if fmt == "page":
        assert len(zipfile.ZipFile(io.BytesIO(content)).namelist()) == 3
    else:
        assert b"Page two" in content and content.count(b"Hello world") == 2


def test_the_json_download_of_a_long_job_is_built_by_a_worker(api_client, long_job):
    url = f"{JOBS}/{long_job.pk}/result.json"
    assert api_client.get(url).status_code == 202
    build_queued()
    served = api_client.get(url)
    assert served.status_code == 200 and served["Content-Type"] == "application/json"
    assert f'filename="{long_job.pk}.json"' in served["Content-Disposition"]
    result = json.loads(b"".join(served.streaming_content))
    assert [page["page_number"] for page in result["pages"]] == [1, 2, 3]
