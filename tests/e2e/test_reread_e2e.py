"""End to end: a redrawn box is read by a real qcluster worker with the job's recognition model."""

from __future__ import annotations

import time

import pytest

from tests.e2e.workers import submit, succeeded, wait_for
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
