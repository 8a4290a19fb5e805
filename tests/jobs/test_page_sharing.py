"""Several workers on one job: pages are claimed one at a time, only the lease holder finishes the job."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from django_q.models import OrmQ

from jobs.options import JobOptions
from jobs import services
from jobs.models import Job, PageClaim, PageResult
from jobs.queue import HELP_JOB
from jobs.services.pages import page_claim_next
from tests.jobs.helpers import TESTER, page_record, three_page_pdf
from tests.jobs.test_tasks import Listener
from tests.ocr_engine import samples

pytestmark = pytest.mark.django_db


def create(user, data: bytes, **options) -> Job:
    job, _ = services.job_create(owner=user, file=data, filename="doc.pdf",
                                 options=JobOptions(**{"pipeline": "ocr", **options}))
    return job


def expire_claims(job: Job, settings) -> None:
    PageClaim.objects.filter(job=job).update(
        claimed_at=timezone.now() - timedelta(seconds=settings.OCR_LEASE_SECONDS + 1))


def test_each_page_is_claimed_by_one_worker_and_a_dead_workers_claim_is_taken_over(user, settings):
    job = create(user, three_page_pdf())
    services.job_claim(job_id=job.pk, worker_id="holder")

    assert page_claim_next(job_id=job.pk, worker_id="helper") == 1
    assert page_claim_next(job_id=job.pk, worker_id="holder") == 2
    assert page_claim_next(job_id=job.pk, worker_id="other") == 3
    assert page_claim_next(job_id=job.pk, worker_id="late") is None  # every page is held

    expire_claims(job, settings)  # the helper was killed -9 on page 1
    assert page_claim_next(job_id=job.pk, worker_id="late") == 1
    # The dead helper's page is not its to store any more; the new claimant's is.
    assert services.job_record_page(job_id=job.pk, worker_id="helper", record=page_record(1)) is False
    assert services.job_record_page(job_id=job.pk, worker_id="late", record=page_record(1)) is True
    assert PageResult.objects.get(job=job).worker_id == "late"
    assert not PageClaim.objects.filter(job=job, page_number=1).exists()


def test_a_canceled_job_gives_its_helpers_no_page_and_takes_none_of_their_results(user):
    job = create(user, three_page_pdf())
    services.job_claim(job_id=job.pk, worker_id="holder")
    assert page_claim_next(job_id=job.pk, worker_id="helper") == 1

    services.job_cancel(job=job, by=TESTER)
    assert page_claim_next(job_id=job.pk, worker_id="helper") is None
    assert services.job_record_page(job_id=job.pk, worker_id="helper", record=page_record(1)) is False
    assert not job.pages.exists()


def test_a_helper_never_renews_the_lease_nor_finishes_the_job(user, settings):
    job = create(user, three_page_pdf())
    claimed = services.job_claim(job_id=job.pk, worker_id="holder")
    for number in (1, 2, 3):
        assert page_claim_next(job_id=job.pk, worker_id="helper") == number
        assert services.job_record_page(job_id=job.pk, worker_id="helper", record=page_record(number))

    job.refresh_from_db()
    assert job.status == Job.Status.RUNNING and job.pages_done == 3
    assert job.heartbeat_at == claimed.heartbeat_at and job.worker_id == "holder"
    assert services.job_finish(job_id=job.pk, worker_id="helper") is None
    assert services.job_finish(job_id=job.pk, worker_id="holder").status == Job.Status.SUCCEEDED


@pytest.mark.models
def test_holder_and_helper_share_a_real_job_and_it_succeeds_once(user, settings,
                                                                  django_capture_on_commit_callbacks):
    settings.OCR_JOB_HELPERS = 1
    settings.OCR_SHARE_MIN_PAGES = 2
    job = create(user, samples.report_pdf(pages=4, dpi=50).data)
    listener = Listener(job.pk)
    OrmQ.objects.all().delete()

    # Slice 1 of the lease holder reads page 1 and hands over (budget 0); it queued one helper.
    services.job_run(job_id=job.pk, worker_id="holder", budget_seconds=0)
    assert sorted(entry.func() for entry in OrmQ.objects.all()) == sorted([HELP_JOB, "jobs.tasks.process_job"])
    # The helper reads page 2 (budget 0: one page), without touching the lease.
    services.job_help(job_id=job.pk, worker_id="helper", budget_seconds=0)
    job.refresh_from_db()
    assert job.status == Job.Status.RUNNING and job.heartbeat_at is None and job.pages_done == 2
    # The continuation reads the rest and finishes the job.
    with django_capture_on_commit_callbacks(execute=True):
        services.job_run(job_id=job.pk, worker_id="holder-2", budget_seconds=600)
        services.job_help(job_id=job.pk, worker_id="helper", budget_seconds=600)  # too late: nothing left

    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED and job.attempts == 1 and job.pages_done == 4
    pages = list(job.pages.order_by("page_number"))
    assert [(p.page_number, p.worker_id) for p in pages] == [
        (1, "holder"), (2, "helper"), (3, "holder-2"), (4, "holder-2")]
    assert all(p.status == "succeeded" and p.line_count > 3 for p in pages)
    assert not PageClaim.objects.filter(job=job).exists()
    events = [e["event"] for e in listener.events()]
    assert events.count("succeeded") == 1 and events.count("page_done") == 4 and events[-1] == "succeeded"


@pytest.mark.models
def test_the_holder_waits_for_a_live_helper_page_and_redoes_it_once_the_claim_expires(user, settings):
    job = create(user, three_page_pdf())
    services.job_claim(job_id=job.pk, worker_id="first")
    services.job_release(job_id=job.pk, worker_id="first")
    assert page_claim_next(job_id=job.pk, worker_id="helper") == 1  # then the helper dies mid-page

    services.job_run(job_id=job.pk, worker_id="holder", budget_seconds=8)
    job.refresh_from_db()
    assert job.status == Job.Status.RUNNING and job.heartbeat_at is None  # handed over, page 1 still held
    assert sorted(job.pages.values_list("page_number", flat=True)) == [2, 3]

    expire_claims(job, settings)
    services.job_run(job_id=job.pk, worker_id="holder", budget_seconds=600)
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED and job.pages_done == 3
    assert job.pages.get(page_number=1).worker_id == "holder"
