"""End to end: the API, a real `manage.py qcluster` process, the real engine and models, PostgreSQL.

The worker is a separate process on the test database (DATABASE_URL built from
the test connection) and the test's MEDIA_ROOT, exactly as in production.
"""

from __future__ import annotations

import io
import os
import signal
import time

import pypdf
import pytest

from jobs import services
from jobs.models import Job, PageResult
from tests.e2e.workers import LEASE_SECONDS, assert_lines_belong_to_regions, submit, succeeded, wait_for
from tests.ocr_engine import samples

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db(transaction=True)]

def test_png_and_three_page_pdf_through_a_real_worker(api_client, qcluster, settings):
    qcluster()
    png_id = submit(api_client, samples.encode(samples.text_page(dpi=100).image, "PNG"), "note.png",
                    pipeline="ocr")
    pdf_id = submit(api_client, samples.report_pdf(pages=3, dpi=100).data, "report.pdf", pipeline="ocr")

    for job_id in (png_id, pdf_id):
        job = wait_for(api_client, job_id, succeeded)
        assert job["progress"]["pages_done"] == job["progress"]["pages_total"]
        assert job["timings"]["ocr"] > 0 and job["started_at"] and job["finished_at"]

    png = api_client.get(f"/api/v1/jobs/{png_id}/result").json()
    assert png["inline"] is True and "stone bridges" in png["result"]["text"].lower()
    assert_lines_belong_to_regions(png["result"])

    pdf = api_client.get(f"/api/v1/jobs/{pdf_id}/result").json()["result"]
    texts = [page["text"].lower() for page in pdf["pages"]]
    assert [p["page_number"] for p in pdf["pages"]] == [1, 2, 3]
    assert "quarterly report" in texts[0] and "apples" in texts[1] and "bridges" in texts[2]
    assert_lines_belong_to_regions(pdf)
    exported = api_client.get(f"/api/v1/jobs/{pdf_id}/export.txt").content.decode()
    assert "orchard" in exported.lower()

    # Over the inline limit, the searchable PDF is built by the worker and streamed from storage.
    settings.OCR_EXPORT_INLINE_MAX_PAGES, settings.OCR_EXPORT_WAIT_SECONDS = 2, 60
    response = api_client.get(f"/api/v1/jobs/{pdf_id}/export.pdf")
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    pdf_text = pypdf.PdfReader(io.BytesIO(b"".join(response.streaming_content))).pages[1].extract_text()
    assert "apples" in pdf_text.lower()


def test_killed_worker_is_replaced_and_finished_pages_are_kept(api_client, qcluster):
    first = qcluster()
    job_id = submit(api_client, samples.report_pdf(pages=5, dpi=100).data, "long.pdf", pipeline="ocr")
    wait_for(api_client, job_id, lambda job: job["progress"]["pages_done"] >= 1)

    os.killpg(first.pid, signal.SIGKILL)  # the whole worker: guard, pusher and worker processes
    first.wait(timeout=30)
    kept = {p.page_number: (p.created_at, p.updated_at) for p in PageResult.objects.filter(job_id=job_id)}
    job = Job.objects.get(pk=job_id)
    assert job.status == Job.Status.RUNNING and 1 <= len(kept) < 5

    # Once the dead worker's lease has expired, the minute-by-minute recovery
    # (jobs.tasks.requeue_stale, run here directly instead of waiting for the
    # schedule) queues the job again and a new worker resumes it.
    time.sleep(max(0.0, LEASE_SECONDS - (time.time() - job.heartbeat_at.timestamp())) + 1)
    assert services.job_requeue_stale() == 1
    qcluster()
    done = wait_for(api_client, job_id, succeeded)

    assert done["progress"] == {"pages_done": 5, "pages_total": 5, "percent": 100.0}
    assert done["attempts"] == 2
    after = {p.page_number: (p.created_at, p.updated_at) for p in PageResult.objects.filter(job_id=job_id)}
    assert sorted(after) == [1, 2, 3, 4, 5]
    assert {n: after[n] for n in kept} == kept  # finished pages were not redone
