"""One PDF, two worker processes of a real qcluster: both read its pages, the job ends once."""

from __future__ import annotations

import os

import pytest

from jobs.models import Job, PageClaim
from tests.e2e.workers import submit, succeeded, wait_for
from tests.ocr_engine import samples

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db(transaction=True)]

PAGES = 8


def test_two_workers_share_the_pages_of_one_job(api_client, qcluster):  # noqa: F811
    qcluster(workers=2, OCR_CPU_THREADS="1")
    job_id = submit(api_client, samples.report_pdf(pages=PAGES, dpi=100).data, "long.pdf", pipeline="ocr")

    body = wait_for(api_client, job_id, succeeded, timeout=300)

    assert body["progress"]["pages_done"] == PAGES
    job = Job.objects.get(pk=job_id)
    assert job.attempts == 1
    pages = list(job.pages.order_by("page_number"))
    assert [p.page_number for p in pages] == list(range(1, PAGES + 1))
    assert all(p.status == "succeeded" and p.line_count > 3 for p in pages)
    assert len({p.worker_id for p in pages}) == 2, [p.worker_id for p in pages]
    assert not PageClaim.objects.filter(job=job).exists()
    result = api_client.get(f"/api/v1/jobs/{job_id}/result").json()["result"]
    assert [page["page_number"] for page in result["pages"]] == list(range(1, PAGES + 1))

    # Two workers of one OCR thread each: on two cores each worker's engine thread has one to itself
    # (jobs.worker); otherwise every thread is left on every core.
    cores = os.sched_getaffinity(0)
    pinned = [pinned_cores(int(worker_id.rsplit(":", 1)[1])) for worker_id in {p.worker_id for p in pages}]
    if len(cores) == 2:
        assert sorted(map(len, pinned)) == [1, 1] and pinned[0] | pinned[1] == cores, pinned
    else:
        assert pinned == [set(), set()]


def pinned_cores(pid: int) -> set[int]:
    """The cores that the threads of process ``pid`` kept off some cores may run on (their union)."""
    pinned = set()
    for thread_id in os.listdir(f"/proc/{pid}/task"):
        allowed = os.sched_getaffinity(int(thread_id))
        if allowed != os.sched_getaffinity(0):
            pinned |= allowed
    return pinned
