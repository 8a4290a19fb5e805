"""A job whose worker process is gone is handed on at once (``job_requeue_lost``), not after its lease; a job
whose task an ended cluster had taken is queued again (``job_requeue_unstarted``)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from django_q.models import OrmQ

from jobs import services
from jobs.services.pages import page_claim_next
from jobs.models import Job, PageClaim
from jobs.queue import waiting_task_ids
from jobs.services.lifecycle import job_requeue_lost, job_requeue_unstarted
from tests.jobs.helpers import page_record, three_page_pdf
from tests.jobs.test_services import create

pytestmark = pytest.mark.django_db

DEAD = "host-a:101"


def alive(worker_id: str) -> bool:
    return worker_id != DEAD


def test_a_job_whose_holder_is_gone_is_handed_on_and_resumes_where_it_was(user, media_root):
    job, _ = create(user, data=three_page_pdf())
    services.job_claim(job_id=job.pk, worker_id=DEAD)
    assert services.job_record_page(job_id=job.pk, worker_id=DEAD, record=page_record(1))
    PageClaim.objects.create(job=job, page_number=2, worker_id=DEAD, claimed_at=timezone.now())
    queued_before = Job.objects.get(pk=job.pk).queue_task_id

    assert job_requeue_lost(alive=alive) == 1
    assert not PageClaim.objects.filter(worker_id=DEAD).exists()  # page 2 is free at once
    job.refresh_from_db()
    assert job.status == Job.Status.RUNNING and job.queue_task_id != queued_before  # queued again
    # The next worker takes it over at once, counting the lost worker as an attempt, and claims page 2 next.
    taken = services.job_claim(job_id=job.pk, worker_id="host-a:102")
    assert taken is not None and taken.attempts == 2
    assert page_claim_next(job_id=job.pk, worker_id="host-a:102") == 2
    assert job_requeue_lost(alive=alive) == 0  # its new holder is alive


def test_a_live_holder_and_a_released_job_are_left_alone(user):
    held, _ = create(user)
    services.job_claim(job_id=held.pk, worker_id="host-a:7")
    released, _ = create(user, data=three_page_pdf())
    services.job_claim(job_id=released.pk, worker_id=DEAD)
    services.job_release(job_id=released.pk, worker_id=DEAD)

    assert job_requeue_lost(alive=alive) == 0
    assert Job.objects.get(pk=held.pk).worker_id == "host-a:7"


def test_a_job_that_lost_its_worker_too_often_fails(user):
    job, _ = create(user)
    services.job_claim(job_id=job.pk, worker_id=DEAD)
    Job.objects.filter(pk=job.pk).update(attempts=job.max_attempts)

    assert job_requeue_lost(alive=alive) == 0
    job.refresh_from_db()
    assert (job.status, job.error_code) == (Job.Status.FAILED, "worker_lost")


def test_waiting_jobs_whose_task_an_ended_cluster_had_taken_are_queued_again(user):
    taken, _ = create(user)
    OrmQ.objects.filter(payload__isnull=False).update(lock=timezone.now() + timedelta(hours=1))  # in a pusher's hands
    waiting, _ = create(user, data=three_page_pdf())  # its task still waits in the broker
    first_task = taken.queue_task_id

    assert job_requeue_unstarted(cluster="cpu") == 1
    taken.refresh_from_db()
    assert taken.queue_task_id != first_task and taken.queue_task_id in waiting_task_ids("cpu")
    assert Job.objects.get(pk=waiting.pk).queue_task_id == waiting.queue_task_id
