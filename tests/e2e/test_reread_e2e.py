"""End to end: a redrawn box is read by a real qcluster worker with the job's recognition model."""

from __future__ import annotations

import time

import pytest

from jobs.reread import REREAD_FAILED
from tests.e2e.workers import submit, succeeded, wait_for
from tests.jobs.test_page_edits import page_url, two_region_job
from tests.ocr_engine import samples

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db(transaction=True)]


def test_a_line_drawn_where_the_engine_read_one_is_read_again_by_the_worker(api_client, qcluster):
    qcluster()
    job_id = submit(api_client, samples.encode(samples.text_page(dpi=100).image, "PNG"), "note.png", pipeline="ocr")
    wait_for(api_client, job_id, succeeded)
    page_url = f"/api/v1/jobs/{job_id}/pages/1"
    engine_line = api_client.get(page_url).json()["normalized"]["lines"][0]
    api_client.delete(f"{page_url}/lines/{engine_line['id']}")  # as if the detector had missed it

    started = time.perf_counter()
    created = api_client.post(f"{page_url}/lines", {"polygon": engine_line["polygon"]}, format="json")
    first_seconds = time.perf_counter() - started
    moved = api_client.patch(f"{page_url}/lines/{created.json()['line']['id']}",
                             {"polygon": engine_line["polygon"]}, format="json")
    warm_seconds = time.perf_counter() - started - first_seconds

    assert created.status_code == 201, created.json()
    line = created.json()["line"]
    assert line["text"] == engine_line["text"] and line["confidence"] > 0.8
    assert moved.status_code == 200 and moved.json()["line"]["text"] == engine_line["text"]
    print(f"re-read: first {first_seconds:.2f} s (reader load), warm {warm_seconds:.2f} s")
    assert warm_seconds < 1.5


def test_a_box_the_worker_fails_to_read_answers_503_with_a_fixed_text(api_client, user, qcluster):
    job = two_region_job(user)
    page = job.pages.get()
    page.image.storage.delete(page.image.name)  # the worker's read fails on a path of the server's
    qcluster()

    answer = api_client.post(page_url(job, "/lines"), {"polygon": [[10, 32], [60, 32], [60, 39], [10, 39]]},
                             format="json")

    assert answer.status_code == 503, answer.json()
    assert answer.json() == {"code": "engine_unavailable", "detail": REREAD_FAILED}
