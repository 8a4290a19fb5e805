"""Webhooks against real PostgreSQL, the real ORM broker and a real HTTP receiver on 127.0.0.1.

Attempts are driven by calling the task the cluster would run, with the
arguments of the queue entry or django-q2 schedule that would trigger it.
tests/e2e/test_webhooks_e2e.py lets a real qcluster do the same.
"""

from __future__ import annotations

import ast
import time
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from django_q.models import OrmQ, Schedule

from jobs.options import JobOptions
from jobs import services
from jobs.models import Document, Job, UserSettings, WebhookDelivery
from jobs.webhooks import tasks, webhook_schedule_for_job
from jobs.webhooks.services import DELIVER_TASK, webhook_sweep
from tests.jobs.factories import JobFactory, PageResultFactory
from tests.jobs.helpers import silent_dns, small_png
from tests.jobs.webhook_receiver import HANG, Receiver

pytestmark = pytest.mark.django_db


@pytest.fixture
def receiver():
    made = []

    def make(*script, hang_seconds=1.5):
        made.append(Receiver(script, hang_seconds=hang_seconds))
        return made[-1]

    yield make
    for r in made:
        r.close()


@pytest.fixture(autouse=True)
def webhook_settings(settings):
    settings.OCR_PUBLIC_URL = "https://ocr.example.org"
    settings.OCR_WEBHOOK_TIMEOUT_SECONDS = 0.5
    settings.OCR_WEBHOOK_BACKOFF_SECONDS = 10
    settings.OCR_WEBHOOK_MAX_ATTEMPTS = 6
    return settings


def finished_job(user, url, status=Job.Status.SUCCEEDED, **fields) -> Job:
    return JobFactory(owner=user, webhook_url=url, status=status, pages_done=1,
                      **{"finished_at": timezone.now(), **fields})


def secret_of(user) -> str:
    return UserSettings.objects.get(user=user).webhook_secret


def queued_deliveries() -> list[tuple]:
    """Arguments of the deliver_webhook tasks waiting in the ORM broker."""
    return [tuple(entry.task["args"]) for entry in OrmQ.objects.all() if entry.task["func"] == DELIVER_TASK]


def run_queued() -> None:
    for args in queued_deliveries():
        tasks.deliver_webhook(*args)


def run_schedule() -> Schedule:
    """What the cluster's scheduler does once the retry is due: run the task with the schedule's args."""
    (schedule,) = Schedule.objects.filter(func=DELIVER_TASK)
    tasks.deliver_webhook(*ast.literal_eval(schedule.args))
    schedule.delete()  # django-q2 deletes a fired ONCE schedule with repeats=-1
    return schedule


def attempts(job) -> list[tuple]:
    return list(job.webhook_deliveries.order_by("attempt").values_list("attempt", "status", "response_status"))


def test_success_delivers_once_with_a_valid_signature(user, receiver):
    hook = receiver()
    job = finished_job(user, hook.url)

    delivery = webhook_schedule_for_job(job=job, event="job.succeeded")
    assert delivery.status == "pending" and queued_deliveries() == [(delivery.pk,)]
    assert hook.received == []  # nothing is sent by the caller, only queued
    run_queued()
    run_queued()  # at-least-once: the same task again

    (request,) = hook.received
    assert request.path == "/hooks/ocr"
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["X-OCR-Event"] == "job.succeeded"
    assert request.headers["X-OCR-Delivery"] == str(delivery.delivery_id)
    assert request.signed_with(secret_of(user))  # the owner's secret, created on first use
    assert not request.signed_with("some-other-secret")
    body = request.json()
    assert body == {
        "event": "job.succeeded",
        "delivery_id": str(delivery.delivery_id),
        "timestamp": job.finished_at.isoformat(),
        "job": {
            "id": str(job.id), "status": "succeeded", "pipeline": "ocr", "lang": "en",
            "document": job.document.original_name, "pages_total": 1, "pages_done": 1, "error": None,
            "created_at": job.created_at.isoformat(), "finished_at": job.finished_at.isoformat(),
            "links": {"self": f"https://ocr.example.org/api/v1/jobs/{job.id}",
                      "result": f"https://ocr.example.org/api/v1/jobs/{job.id}/result"},
        },
    }
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempt, delivery.response_status) == ("delivered", 1, 200)
    assert delivery.attempted_at <= delivery.delivered_at and delivery.next_attempt_at is None
    assert not Schedule.objects.filter(func=DELIVER_TASK).exists()


def test_failed_job_sends_its_error(user, receiver):
    hook = receiver()
    job = finished_job(user, hook.url, status=Job.Status.FAILED, error_code="pages_failed",
                       error_detail="1 of 1 pages failed (1)")
    UserSettings.objects.create(user=user, webhook_secret="known-secret")

    webhook_schedule_for_job(job=job, event="job.failed")
    run_queued()

    (request,) = hook.received
    assert request.signed_with("known-secret")
    assert request.headers["X-OCR-Event"] == "job.failed"
    assert request.json()["job"]["status"] == "failed"
    assert request.json()["job"]["error"] == {"code": "pages_failed", "detail": "1 of 1 pages failed (1)"}


def test_receiver_that_fails_twice_gets_the_third_attempt(user, receiver, api_client, other_api_client):
    hook = receiver(500, HANG)  # then 200
    job = finished_job(user, hook.url)
    delivery = webhook_schedule_for_job(job=job, event="job.succeeded")

    run_queued()
    first = WebhookDelivery.objects.get(pk=delivery.pk)
    assert (first.status, first.response_status, first.error) == ("failed", 500, "HTTP 500")
    retry = Schedule.objects.get(func=DELIVER_TASK)
    assert retry.schedule_type == Schedule.ONCE and retry.repeats == -1
    assert retry.next_run == first.next_attempt_at  # the backoff base: 10 s after the failure
    assert timedelta(seconds=9) < first.next_attempt_at - first.attempted_at < timedelta(seconds=11)

    run_schedule()  # the receiver hangs past the 0.5 s time-out
    second = WebhookDelivery.objects.get(delivery_id=delivery.delivery_id, attempt=2)
    assert (second.status, second.response_status) == ("failed", None)
    assert second.error == "No response within 0.5 s."
    assert timedelta(seconds=19) < second.next_attempt_at - second.attempted_at < timedelta(seconds=21)

    run_schedule()
    assert attempts(job) == [(1, "failed", 500), (2, "failed", None), (3, "delivered", 200)]
    assert not Schedule.objects.filter(func=DELIVER_TASK).exists()
    assert len(hook.received) == 3
    assert {r.headers["X-OCR-Delivery"] for r in hook.received} == {str(delivery.delivery_id)}
    assert all(r.signed_with(secret_of(user)) for r in hook.received)

    log = api_client.get(f"/api/v1/jobs/{job.id}/webhooks")
    assert log.status_code == 200
    rows = log.json()["results"]
    assert [(r["attempt"], r["status"], r["response_status"]) for r in rows] == attempts(job)
    assert rows[1]["error"] == "No response within 0.5 s." and rows[2]["delivered_at"]
    assert rows[0]["payload"]["delivery_id"] == str(delivery.delivery_id)
    assert other_api_client.get(f"/api/v1/jobs/{job.id}/webhooks").json()["code"] == "not_found"


def test_an_attempt_at_a_name_that_does_not_resolve_ends_at_its_timeout(user, monkeypatch):
    """The look-up is part of the attempt: a silent resolver costs the 0.5 s time-out, not the resolver's own."""
    job = finished_job(user, "http://hooks.example.com/ocr")
    delivery = webhook_schedule_for_job(job=job, event="job.succeeded")
    with silent_dns(monkeypatch):
        started = time.monotonic()
        run_queued()
        took = time.monotonic() - started
    first = WebhookDelivery.objects.get(pk=delivery.pk)
    assert (first.status, first.error) == ("failed", "No response within 0.5 s.") and took < 1.5
    assert timedelta(seconds=9) < first.next_attempt_at - first.attempted_at < timedelta(seconds=11)


def test_gives_up_after_max_attempts(user, receiver, settings):
    settings.OCR_WEBHOOK_MAX_ATTEMPTS = 2
    hook = receiver(503, 503, 503)
    job = finished_job(user, hook.url)
    webhook_schedule_for_job(job=job, event="job.succeeded")

    run_queued()
    run_schedule()

    assert attempts(job) == [(1, "failed", 503), (2, "failed", 503)]
    last = job.webhook_deliveries.get(attempt=2)
    assert last.next_attempt_at is None  # gave up: no retry scheduled
    assert not Schedule.objects.filter(func=DELIVER_TASK).exists() and len(hook.received) == 2


def test_private_url_is_refused_at_delivery(user, receiver, settings):
    settings.OCR_ALLOW_PRIVATE_URLS = False
    hook = receiver()
    job = finished_job(user, hook.url)  # e.g. a public host whose DNS now points at 127.0.0.1
    webhook_schedule_for_job(job=job, event="job.succeeded")

    run_queued()

    (attempt,) = job.webhook_deliveries.all()
    assert attempt.status == "failed" and attempt.error.startswith("url_not_allowed:")
    assert attempt.next_attempt_at is None and not Schedule.objects.filter(func=DELIVER_TASK).exists()
    assert hook.received == []


def test_private_webhook_url_is_refused_at_submission(api_client, settings):
    settings.OCR_ALLOW_PRIVATE_URLS = False
    response = api_client.post(
        "/api/v1/jobs",
        {"file": SimpleUploadedFile("note.png", small_png()), "webhook_url": "http://127.0.0.1:9/hook"},
        format="multipart",
    )
    assert response.status_code == 400 and response.json()["code"] == "url_not_allowed"
    assert not Job.objects.exists() and not Document.objects.exists()


def test_user_default_webhook_url_applies_when_the_job_has_none(user):
    UserSettings.objects.create(user=user, default_webhook_url="https://hooks.example.org/ocr")
    default, _ = services.job_create(owner=user, file=small_png(), filename="a.png")
    own, _ = services.job_create(owner=user, file=small_png(), filename="a.png",
                                 options=JobOptions(lang="fr", webhook_url="https://other.example.org/x"))
    assert default.webhook_url == "https://hooks.example.org/ocr"
    assert own.webhook_url == "https://other.example.org/x"


def test_finishing_twice_sends_one_delivery(user, receiver, django_capture_on_commit_callbacks):
    hook = receiver()
    job = JobFactory(owner=user, webhook_url=hook.url, status=Job.Status.RUNNING, worker_id="w1", pages_done=1)
    PageResultFactory(job=job, page_number=1)  # as job_record_page left it

    with django_capture_on_commit_callbacks(execute=True):
        services.job_finish(job_id=job.pk, worker_id="w1")
        services.job_finish(job_id=job.pk, worker_id="w1")  # the finishing task delivered twice
    job.refresh_from_db()
    again = webhook_schedule_for_job(job=job, event="job.succeeded")  # a duplicate on_commit
    (delivery,) = job.webhook_deliveries.all()
    assert again.pk == delivery.pk and queued_deliveries() == [(delivery.pk,)]

    run_queued()
    tasks.deliver_webhook(delivery.pk)

    assert attempts(job) == [(1, "delivered", 200)]
    (request,) = hook.received
    assert request.json()["job"]["status"] == "succeeded" and request.json()["job"]["pages_done"] == 1


def test_job_fail_schedules_job_failed(user, receiver, django_capture_on_commit_callbacks):
    hook = receiver()
    job = JobFactory(owner=user, webhook_url=hook.url, status=Job.Status.RUNNING, worker_id="w1")

    with django_capture_on_commit_callbacks(execute=True):
        services.job_fail(job_id=job.pk, code="timeout", detail="Too slow.", worker_id="w1")
    run_queued()

    (request,) = hook.received
    assert request.headers["X-OCR-Event"] == "job.failed"
    assert request.json()["job"]["error"] == {"code": "timeout", "detail": "Too slow."}


def test_a_job_that_finishes_again_after_a_retry_gets_a_new_delivery(user, receiver):
    job = finished_job(user, receiver().url, status=Job.Status.FAILED, error_code="pages_failed")
    first = webhook_schedule_for_job(job=job, event="job.failed")
    job.finished_at += timedelta(minutes=5)  # retried, failed again
    second = webhook_schedule_for_job(job=job, event="job.failed")

    assert first.delivery_id != second.delivery_id
    assert sorted(queued_deliveries()) == sorted([(first.pk,), (second.pk,)])


def test_no_url_no_delivery(user):
    job = finished_job(user, "")
    assert webhook_schedule_for_job(job=job, event="job.succeeded") is None
    assert not WebhookDelivery.objects.exists() and queued_deliveries() == []



# --- the sweep: what a crash lost is sent anyway ---------------------------

def test_a_finish_whose_delivery_was_never_scheduled_is_delivered_by_the_sweep(user, receiver):
    hook = receiver()
    lost = finished_job(user, hook.url, finished_at=timezone.now() - timedelta(minutes=20))  # worker died
    finished_job(user, hook.url)  # just finished: its own worker is still scheduling it
    JobFactory(owner=user, webhook_url=hook.url, status=Job.Status.RUNNING)

    assert webhook_sweep() == 1
    assert webhook_sweep() == 0  # the delivery exists now; its task is queued
    run_queued()
    (request,) = hook.received
    assert request.json()["job"]["id"] == str(lost.id) and request.json()["event"] == "job.succeeded"
    assert attempts(lost) == [(1, "delivered", 200)]


def test_an_attempt_whose_queue_entry_was_lost_is_queued_again(user, receiver):
    hook = receiver()
    job = finished_job(user, hook.url, status=Job.Status.FAILED, error_code="pages_failed",
                       finished_at=timezone.now() - timedelta(minutes=30))
    delivery = webhook_schedule_for_job(job=job, event="job.failed")
    OrmQ.objects.all().delete()  # the push after the row's commit never happened (Redis was down)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now() - timedelta(minutes=10))

    assert webhook_sweep() == 1
    run_queued()
    (request,) = hook.received
    assert request.json()["event"] == "job.failed"
    assert attempts(job) == [(1, "delivered", 200)]
    assert webhook_sweep() == 0  # delivered: nothing left to send
    assert Schedule.objects.filter(name="jobs.sweep_webhooks", func="jobs.webhooks.tasks.sweep_webhooks").exists()
