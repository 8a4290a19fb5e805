"""End to end: the API, a real `manage.py qcluster` process, the real engine and models, PostgreSQL.

The worker is a separate process on the test database (DATABASE_URL built from
the test connection) and the test's MEDIA_ROOT, exactly as in production.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from jobs import services
from jobs.models import Job, PageResult
from tests.ocr_engine import samples

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db(transaction=True)]

REPO = Path(__file__).resolve().parents[2]
LEASE_SECONDS = 10


def database_url() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def qcluster(transactional_db, settings, tmp_path):
    """start() launches a real qcluster (its own process group) on the test database."""
    settings.OCR_LEASE_SECONDS = LEASE_SECONDS
    started: list[tuple[subprocess.Popen, Path]] = []

    def start() -> subprocess.Popen:
        log = tmp_path / f"qcluster-{len(started)}.log"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "ocrsite.settings.test",
            "DATABASE_URL": database_url(),
            "MEDIA_ROOT": str(settings.MEDIA_ROOT),
            "OCR_MODELS_DIR": str(django_settings.OCR_MODELS_DIR),
            "OCR_LEASE_SECONDS": str(LEASE_SECONDS),
            "Q_WORKERS": "1",
            "Q_POLL": "0.2",
        }
        with log.open("wb") as out:
            process = subprocess.Popen([sys.executable, "manage.py", "qcluster"], cwd=REPO, env=env,
                                       stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        started.append((process, log))
        return process

    yield start
    for process, log in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
        print(f"--- {log.name} ---\n" + log.read_text(errors="replace")[-3000:])


def submit(api_client, data: bytes, name: str, **options) -> str:
    response = api_client.post("/api/v1/jobs", {"file": SimpleUploadedFile(name, data), **options},
                               format="multipart")
    assert response.status_code == 202, response.json()
    return response.json()["id"]


def wait_for(api_client, job_id: str, until, timeout: float = 240) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = api_client.get(f"/api/v1/jobs/{job_id}").json()
        if until(job):
            return job
        assert job["status"] not in ("failed", "canceled"), job
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for job {job_id}: {job}")


def succeeded(job: dict) -> bool:
    return job["status"] == "succeeded"


def assert_lines_belong_to_regions(result: dict) -> None:
    for page in result["pages"]:
        region_ids = {region["id"] for region in page["regions"]}
        assert page["lines"], f"page {page['page_number']} has no lines"
        assert all(line["region_id"] in region_ids for line in page["lines"]), page["page_number"]


def test_png_and_three_page_pdf_through_a_real_worker(api_client, qcluster):
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
