"""The fields stage after OCR (jobs.services.extraction): queued on the llm cluster when an OCR job
succeeds, rules extraction without an LLM, skipped without types, safe to run twice, a failure kept
apart from the OCR result, and the job.succeeded webhook waiting for the stage."""

from __future__ import annotations

import pytest

from jobs import tasks
from jobs.models import JobFields, PageResult, WebhookDelivery
from jobs.queue import FIELDS_CLUSTER, waiting_task_ids
from jobs.services.extraction import job_fields_extract, job_fields_queue
from tests.jobs.fields_jobs import invoice_job, invoice_type

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def no_llm(settings):
    settings.OCR_LLM_URL = ""  # the embedded default: every type is read by rules


def test_a_succeeded_job_that_named_its_type_is_queued_on_the_llm_cluster_and_read_by_rules(user):
    job = invoice_job(user, document_type=invoice_type(user))
    stage = JobFields.objects.get(job=job)
    assert stage.status == "pending" and stage.queued_at is not None
    assert len(waiting_task_ids(FIELDS_CLUSTER)) == 1
    assert not waiting_task_ids("cpu")  # OCR workers never see the stage's task

    tasks.extract_fields(str(job.pk))

    stage.refresh_from_db()
    assert (stage.status, stage.backend, stage.type_source, stage.attempts) == ("succeeded", "rules", "user", 1)
    fields = stage.fields
    assert fields["invoice_number"]["value"] == "INV-2024-001"
    assert [e["line_id"] for e in fields["invoice_number"]["evidence"]] == ["p1-l1"]
    assert fields["invoice_date"]["value"] == "2024-03-05" and fields["invoice_date"]["grounded"] is True
    assert fields["subtotal"] == {**fields["subtotal"], "value": 260.0, "grounded": True, "reason": None}
    assert [row["amount"]["value"] for row in fields["line_items"]] == [10.0, 250.0]
    assert fields["iban"]["value"] == "DE89370400440532013000"


def test_a_job_whose_owner_has_no_types_skips_the_stage_and_sends_its_webhook_at_once(user):
    job = invoice_job(user, webhook_url="https://hooks.example.com/ocr")
    assert not JobFields.objects.filter(job=job).exists()
    assert not waiting_task_ids(FIELDS_CLUSTER)
    assert WebhookDelivery.objects.filter(job=job, event="job.succeeded").count() == 1
    assert "fields" not in WebhookDelivery.objects.get(job=job).payload["job"]


def test_the_job_succeeded_webhook_waits_for_the_stage_and_carries_its_fields(user):
    job = invoice_job(user, document_type=invoice_type(user), webhook_url="https://hooks.example.com/ocr")
    assert not WebhookDelivery.objects.filter(job=job).exists()

    job_fields_extract(job_id=job.pk)

    payload = WebhookDelivery.objects.get(job=job, event="job.succeeded").payload
    assert payload["job"]["fields"]["status"] == "succeeded"
    assert payload["job"]["fields"]["fields"]["invoice_number"]["value"] == "INV-2024-001"


def test_the_task_run_twice_reads_once(user):
    job = invoice_job(user, document_type=invoice_type(user))
    assert job_fields_extract(job_id=job.pk) is not None
    first = JobFields.objects.get(job=job)

    assert job_fields_extract(job_id=job.pk) is None  # delivered again: nothing left to do

    again = JobFields.objects.get(job=job)
    assert (again.attempts, again.finished_at, again.fields) == (1, first.finished_at, first.fields)


def test_a_run_overtaken_by_a_new_queueing_stores_nothing(user):
    document_type = invoice_type(user)
    job = invoice_job(user, document_type=document_type)
    from jobs.services import extraction

    claimed_at = extraction._claim(job.pk)
    stage = JobFields.objects.select_related("document_type", "job").get(job=job)
    job_fields_queue(job=job)  # a reviewer changed the type meanwhile: a newer run owns the stage

    assert extraction._finish(stage, claimed_at, status="succeeded", backend="rules", fields={"x": {}}) is None
    assert JobFields.objects.get(job=job).status == "pending"
    assert job_fields_extract(job_id=job.pk).status == "succeeded"  # the newer run answers


def test_a_backend_failure_fails_the_stage_with_its_code_and_leaves_the_ocr_result(user):
    broken = invoice_type(user, fields_schema={"type": "object", "properties": {"total": {"type": "array"}}})
    job = invoice_job(user, document_type=broken)
    page_before = PageResult.objects.get(job=job).normalized

    stage = job_fields_extract(job_id=job.pk)

    assert (stage.status, stage.error_code) == ("failed", "invalid_fields_schema")
    job.refresh_from_db()
    assert job.status == "succeeded"
    assert PageResult.objects.get(job=job).normalized == page_before


def test_a_failed_ocr_job_gets_no_stage(user):
    from jobs import services
    from tests.jobs.factories import JobFactory

    invoice_type(user)
    job = JobFactory(owner=user)
    services.job_claim(job_id=job.pk, worker_id="w")
    services.job_fail(job_id=job.pk, code="corrupt_file", detail="unreadable", worker_id="w")

    assert not JobFields.objects.filter(job=job).exists()
    assert not waiting_task_ids(FIELDS_CLUSTER)


def test_a_job_that_named_no_type_is_classified_by_its_owners_rules_then_read(user):
    invoice_type(user)  # match "invoice", any word
    invoice_type(user, name="letter", match="dear sincerely")
    job = invoice_job(user)

    stage = job_fields_extract(job_id=job.pk)

    assert (stage.status, stage.document_type.name, stage.type_source) == ("succeeded", "invoice", "rules")
    assert stage.type_confidence == 1.0
    assert stage.fields["invoice_number"]["value"] == "INV-2024-001"


def test_a_job_no_type_fits_is_skipped(user):
    invoice_type(user, name="letter", match="dear sincerely")
    job = invoice_job(user)

    stage = job_fields_extract(job_id=job.pk)

    assert (stage.status, stage.document_type, stage.fields) == ("skipped", None, {})


def test_an_llm_that_is_down_fails_the_stage_after_its_retries_and_never_the_ocr_result(user, settings):
    import socket

    with socket.socket() as closed:  # a port nothing listens on once this block ends
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    settings.OCR_LLM_URL, settings.OCR_LLM_MODEL = f"http://127.0.0.1:{port}/v1", "smollm2"
    settings.OCR_LLM_ATTEMPTS, settings.OCR_LLM_BACKOFF_SECONDS = 2, 0.01
    job = invoice_job(user, document_type=invoice_type(user))  # backend auto: the LLM, as one is configured

    stage = job_fields_extract(job_id=job.pk)

    assert (stage.status, stage.error_code, stage.backend) == ("failed", "llm_unavailable", "llm")
    job.refresh_from_db()
    assert job.status == "succeeded" and PageResult.objects.get(job=job).status == "succeeded"


def test_a_stage_whose_task_or_worker_was_lost_is_queued_again_then_fails_with_worker_lost(user, settings):
    from datetime import timedelta

    from django.utils import timezone

    from jobs.services.extraction import FIELDS_MAX_ATTEMPTS, job_fields_requeue_stale

    document_type = invoice_type(user)
    lost_task, lost_worker, fresh = (invoice_job(user, document_type=document_type) for _ in range(3))
    dead_end = invoice_job(user, document_type=document_type, webhook_url="https://hooks.example.com/ocr")
    long_ago = timezone.now() - timedelta(seconds=settings.Q_RETRY + 60)
    JobFields.objects.filter(job=lost_task).update(queued_at=long_ago)  # its queue entry never came
    JobFields.objects.filter(job=lost_worker).update(queued_at=long_ago, started_at=long_ago, attempts=1)
    JobFields.objects.filter(job=dead_end).update(queued_at=long_ago, started_at=long_ago,
                                                  attempts=FIELDS_MAX_ATTEMPTS)
    waiting = len(waiting_task_ids(FIELDS_CLUSTER))

    assert tasks.requeue_stale() == 2

    assert len(waiting_task_ids(FIELDS_CLUSTER)) == waiting + 2
    failed = JobFields.objects.get(job=dead_end)
    assert (failed.status, failed.error_code) == ("failed", "worker_lost")
    payload = WebhookDelivery.objects.get(job=dead_end, event="job.succeeded").payload  # the wait ends too
    assert payload["job"]["fields"]["error"]["code"] == "worker_lost"
    assert JobFields.objects.get(job=fresh).status == "pending"
    assert job_fields_extract(job_id=lost_worker.pk).status == "succeeded"  # the worker's claim had run out
    assert job_fields_requeue_stale() == 0  # lost_task was queued again just now: not stale again yet


def test_the_admin_reads_a_jobs_fields_again_through_the_service(client, django_user_model, user):
    from django.urls import reverse

    admin = django_user_model.objects.create_superuser("root", "", "pw")
    client.force_login(admin)
    job = invoice_job(user, document_type=invoice_type(user))
    job_fields_extract(job_id=job.pk)
    waiting = len(waiting_task_ids(FIELDS_CLUSTER))
    changelist = reverse("admin:jobs_jobfields_changelist")
    assert client.get(changelist, {"status": "succeeded"}).status_code == 200

    client.post(changelist, {"action": "read_again", "_selected_action": [str(job.pk)]}, follow=True)

    assert JobFields.objects.get(job=job).status == "pending"
    assert len(waiting_task_ids(FIELDS_CLUSTER)) == waiting + 1
    assert client.get(reverse("admin:jobs_fieldcorrection_changelist")).status_code == 200
