"""The fields stage in /metrics: its queue, its stages by status and backend, its latency."""

from __future__ import annotations

import pytest

from jobs.models import JobFields
from jobs.observability.keda import LLM_QUEUE_DEPTH_SQL
from jobs.services.extraction import job_fields_extract
from tests.jobs.fields_jobs import invoice_job, invoice_type
from tests.jobs.test_observability import scrape, value

pytestmark = pytest.mark.django_db


def test_metrics_show_the_fields_stages_queue_then_its_answer_and_latency(client, user, settings):
    settings.OCR_LLM_URL = ""
    document_type = invoice_type(user)
    first, second = (invoice_job(user, document_type=document_type) for _ in range(2))
    samples = scrape(client)
    assert value(samples, "ocr_fields_queue_depth") == 2
    assert value(samples, "ocr_fields_stages", status="pending", backend="") == 2

    job_fields_extract(job_id=first.pk)

    samples = scrape(client)
    assert value(samples, "ocr_fields_queue_depth") == 1
    assert value(samples, "ocr_fields_stages", status="succeeded", backend="rules") == 1
    assert value(samples, "ocr_fields_seconds_count", backend="rules", status="succeeded") == 1
    assert value(samples, "ocr_fields_seconds_bucket", backend="rules", status="succeeded", le="600.0") == 1
    assert 0 < value(samples, "ocr_fields_seconds_sum", backend="rules", status="succeeded") < 60
    assert JobFields.objects.get(job=second).status == "pending"


def test_the_keda_query_counts_the_pending_fields_stages(user, settings):
    from django.db import connection

    settings.OCR_LLM_URL = ""
    job = invoice_job(user, document_type=invoice_type(user))
    with connection.cursor() as cursor:
        cursor.execute(LLM_QUEUE_DEPTH_SQL)
        assert cursor.fetchone()[0] == 1
    job_fields_extract(job_id=job.pk)
    with connection.cursor() as cursor:
        cursor.execute(LLM_QUEUE_DEPTH_SQL)
        assert cursor.fetchone()[0] == 0
