"""No shared disk: the web and two worker clusters, each with a private folder of its own, sharing only
PostgreSQL, Redis and an S3 store (SeaweedFS, ``STORAGE_URL``). Small PDFs keep it quick: 8 pages for
the shared job and the killed cluster, 6 for the store's outage."""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

import pytest
import requests
from rest_framework.authtoken.models import Token

from jobs.models import Job
from tests.e2e.conftest import processes_in_group, server_env, web_server
from tests.ocr_engine import samples
from tests.s3_server import stored_keys

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db(transaction=True)]


class Site:
    """The web server of the test's database and store, with a folder of its own; API calls as a user."""

    def __init__(self, base: str, user):
        self.base = base
        self.auth = {"Authorization": f"Token {Token.objects.get_or_create(user=user)[0].key}"}

    def submit(self, data: bytes, name: str) -> str:
        answer = requests.post(f"{self.base}/api/v1/jobs", headers=self.auth, files={"file": (name, data)},
                               data={"pipeline": "ocr"}, timeout=60)
        assert answer.status_code == 202, answer.text
        return answer.json()["id"]

    def job(self, job_id: str) -> dict:
        return requests.get(f"{self.base}/api/v1/jobs/{job_id}", headers=self.auth, timeout=30).json()

    def until(self, job_id: str, what, within: float) -> dict:
        deadline = time.monotonic() + within
        while not what(job := self.job(job_id)):
            assert job["status"] not in ("failed", "canceled"), job
            assert time.monotonic() < deadline, job
            time.sleep(0.2)
        return job

    def get(self, path: str, **kwargs) -> requests.Response:
        return requests.get(f"{self.base}{path}", headers=self.auth, timeout=30, **kwargs)


# As long as the issue's outage: within the workers' retry (OCR_STORE_RETRY_SECONDS, 60 s by default).
OUTAGE_SECONDS = 30

def private(tmp_path: Path, role: str, store) -> dict[str, str]:
    """A process's own folders (nothing of them shared: media and temporary files) and the store's settings."""
    folder = tmp_path / role
    (folder / "tmp").mkdir(parents=True)
    return {"MEDIA_ROOT": str(folder / "media"), "TMPDIR": str(folder / "tmp"), **store.environment}


def files_in(tmp_path: Path, role: str) -> list[Path]:
    return [p for p in (tmp_path / role / "media").rglob("*") if p.is_file()]


@pytest.fixture
def site(settings, tmp_path, object_store, user):
    with web_server({**server_env(settings), **private(tmp_path, "web", object_store)}, tmp_path / "web.log") as base:
        yield Site(base, user)


def cluster_pid(worker_id: str) -> int:
    return int(worker_id.rsplit(":", 1)[1])


def test_two_clusters_share_a_job_and_one_finishes_it_when_the_other_is_killed(
        site, qcluster, object_store, tmp_path, other_user):  # noqa: F811
    # Three helper tasks, committed at once: a cluster's pusher holds at most two (its queue of
    # Q_QUEUE_LIMIT, and the one it waits to put there), so the other cluster gets one.
    clusters = {role: qcluster(workers=1, OCR_CPU_THREADS="1", OCR_JOB_HELPERS="3", OCR_SHARE_MIN_PAGES="2",
                               Q_QUEUE_LIMIT="1", **private(tmp_path, role, object_store))
                for role in ("cluster-a", "cluster-b")}
    pages = 8
    job_id = site.submit(samples.report_pdf(pages=pages, dpi=60).data, "shared.pdf")
    job = Job.objects.get(pk=job_id)
    deadline = time.monotonic() + 180
    while len({p.worker_id for p in job.pages.all()}) < 2:  # both clusters have stored a page
        assert time.monotonic() < deadline and Job.objects.get(pk=job_id).status not in ("failed", "canceled")
        time.sleep(0.2)
    holder = Job.objects.get(pk=job_id).worker_id
    (killed,) = [role for role, process in clusters.items() if cluster_pid(holder) in processes_in_group(process.pid)]
    done_before = {p.page_number: p.worker_id for p in job.pages.all()}
    assert len(done_before) < pages  # mid-job
    os.killpg(clusters[killed].pid, signal.SIGKILL)  # the cluster holding the job's lease, mid-job

    finished = site.until(job_id, lambda body: body["status"] == "succeeded", within=150)
    assert finished["progress"]["pages_done"] == pages
    stored = list(job.pages.order_by("page_number"))
    assert [p.page_number for p in stored] == list(range(1, pages + 1))  # every page once
    assert {p.page_number: p.worker_id for p in stored if p.page_number in done_before} == done_before
    assert set(stored_keys(object_store, f"pages/{job_id}/")) >= {
        name for p in stored for name in (p.image.name, p.thumbnail.name)}
    assert "bridges" in site.get(f"/api/v1/jobs/{job_id}/export.txt").text.lower()  # page 3's text

    image = site.get(f"/api/v1/jobs/{job_id}/pages/{pages}/image")
    assert image.status_code == 200 and image.content[:2] == b"\xff\xd8"
    other = Site(site.base, other_user)
    assert other.get(f"/api/v1/jobs/{job_id}/pages/{pages}/image").status_code == 404
    assert other.get(f"/api/v1/jobs/{job_id}/export.txt").status_code == 404
    for role in ("web", "cluster-a", "cluster-b"):
        assert files_in(tmp_path, role) == [], role  # nothing went through a folder of theirs


def test_the_store_down_mid_job_the_job_waits_and_succeeds_with_every_page_once(
        site, qcluster, object_store, tmp_path):  # noqa: F811
    # A lease longer than the outage: the worker waiting for the store keeps the job.
    process = qcluster(workers=1, OCR_CPU_THREADS="1", OCR_LEASE_SECONDS="120",
                       **private(tmp_path, "cluster", object_store))
    pages = 6
    job_id = site.submit(samples.report_pdf(pages=pages, dpi=60).data, "outage.pdf")
    site.until(job_id, lambda body: body["progress"]["pages_done"] >= 1, within=180)
    log = tmp_path / "qcluster-0.log"
    object_store.stop()
    try:
        deadline = time.monotonic() + 60
        while "The file store failed" not in log.read_text(errors="replace"):  # a page waits for the store
            assert time.monotonic() < deadline and process.poll() is None
            time.sleep(0.2)
        time.sleep(OUTAGE_SECONDS)  # the outage itself
    finally:
        object_store.start()

    finished = site.until(job_id, lambda body: body["status"] == "succeeded", within=120)
    assert finished["progress"]["pages_done"] == pages
    stored = list(Job.objects.get(pk=job_id).pages.order_by("page_number"))
    assert [p.page_number for p in stored] == list(range(1, pages + 1))
    assert stored_keys(object_store, f"pages/{job_id}/") == sorted(
        name for p in stored for name in (p.image.name, p.thumbnail.name))
    assert re.search(r"The file store failed in \w+, retrying", log.read_text(errors="replace"))
