"""End to end: a real qcluster process sends a job's webhook and performs the retries from its schedules.

No OCR models: the job is finished in the test process through the real
service, exactly as a worker finishes it; everything after that commit is the
cluster's work. Retries wait for django-q2's scheduler (it looks every ~30 s),
so this test takes about a minute of mostly idle time.
"""

from __future__ import annotations

import time

import pytest

from jobs import services
from jobs.models import Job, UserSettings, WebhookDelivery
from tests.jobs.factories import JobFactory, PageResultFactory
from tests.jobs.webhook_receiver import HANG, Receiver

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_cluster_retries_until_the_third_attempt_is_delivered(user, qcluster, monkeypatch):  # noqa: F811
    # Read by the worker process: retries are due at once (the scheduler tick is
    # the only wait), and a hanging receiver counts as a time-out after 1 s.
    monkeypatch.setenv("OCR_WEBHOOK_BACKOFF_SECONDS", "0.01")
    monkeypatch.setenv("OCR_WEBHOOK_TIMEOUT_SECONDS", "1")
    receiver = Receiver([500, HANG], hang_seconds=2)  # then 200
    try:
        secret = UserSettings.objects.create(user=user).webhook_secret
        job = JobFactory(owner=user, webhook_url=receiver.url, status=Job.Status.RUNNING, worker_id="w1",
                         pages_done=1)
        PageResultFactory(job=job, page_number=1)
        qcluster()

        services.job_finish(job_id=job.pk, worker_id="w1")  # commits; on_commit schedules the webhook

        deadline = time.monotonic() + 150
        while time.monotonic() < deadline and not job.webhook_deliveries.filter(status="delivered").exists():
            time.sleep(0.5)
        rows = list(job.webhook_deliveries.order_by("attempt"))
    finally:
        receiver.close()

    assert [(d.attempt, d.status, d.response_status) for d in rows] == [
        (1, "failed", 500), (2, "failed", None), (3, "delivered", 200)
    ], [(d.attempt, d.status, d.error) for d in rows]
    assert rows[1].error == "No response within 1 s."
    assert len(receiver.received) == 3 and all(r.signed_with(secret) for r in receiver.received)
    assert {r.headers["X-OCR-Delivery"] for r in receiver.received} == {str(rows[0].delivery_id)}
    assert receiver.received[-1].json()["job"]["status"] == "succeeded"
    assert WebhookDelivery.objects.count() == 3  # no duplicate attempts from the cluster
