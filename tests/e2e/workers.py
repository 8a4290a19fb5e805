"""Shared end-to-end helpers: a real ``manage.py qcluster`` against the test database, API polling."""

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

REPO = Path(__file__).resolve().parents[2]
LEASE_SECONDS = 10


def database_url() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def qcluster(transactional_db, settings, tmp_path):
    """start(workers=1, **environment) launches a real qcluster (its own process group) on the test database."""
    settings.OCR_LEASE_SECONDS = LEASE_SECONDS
    started: list[tuple[subprocess.Popen, Path]] = []

    def start(workers: int = 1, **environment: str) -> subprocess.Popen:
        log = tmp_path / f"qcluster-{len(started)}.log"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "ocrsite.settings.test",
            "DATABASE_URL": database_url(),
            "MEDIA_ROOT": str(settings.MEDIA_ROOT),
            "OCR_MODELS_DIR": str(django_settings.OCR_MODELS_DIR),
            "OCR_LEASE_SECONDS": str(LEASE_SECONDS),
            "Q_WORKERS": str(workers),
            **environment,
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


