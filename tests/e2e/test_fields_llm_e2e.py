"""End to end: the fields stage on a real ``llm`` qcluster asking a real llama.cpp server (SmolLM2-135M),
which is stopped mid-batch. Mechanics, not the tiny model's wisdom: its answer comes back in the result
schema's shape with every value verified; once the server is down the other stages fail with
``llm_unavailable`` after their retries, and every OCR result stays as it was."""

from __future__ import annotations

import time

import pytest

from jobs.models import JobFields, PageResult
from ocr_engine.validation import validate_result
from tests.jobs.fields_jobs import invoice_job, invoice_type
from tests.llm_server import MODEL_ALIAS, LlamaServer

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
LLM_TIMEOUT_SECONDS = 180


def stage_of(job, timeout: float = 300) -> JobFields:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stage = JobFields.objects.get(job=job)
        if stage.status != JobFields.Status.PENDING:
            return stage
        time.sleep(0.2)
    raise AssertionError(f"the fields of job {job.pk} stayed pending")


def test_the_llm_backend_on_its_cluster_then_the_server_stopped_mid_batch(api_client, user, qcluster):
    server = LlamaServer()
    server.start()
    try:
        document_type = invoice_type(user, backend="llm")
        first = invoice_job(user, document_type=document_type)
        # One thread of llama.cpp (its default on 2 cores) may write its whole max_tokens for this page:
        # on a loaded CI machine that took past the default 60 s, and this test is about the mechanics.
        qcluster(Q_CLUSTER_NAME="llm", OCR_LLM_URL=server.url, OCR_LLM_MODEL=MODEL_ALIAS,
                 OCR_LLM_RESPONSE_FORMAT="json_object", OCR_LLM_ATTEMPTS="2", OCR_LLM_BACKOFF_SECONDS="0.2",
                 OCR_LLM_TIMEOUT_SECONDS=str(LLM_TIMEOUT_SECONDS))

        answered = stage_of(first, timeout=2 * LLM_TIMEOUT_SECONDS + 60)
        assert (answered.status, answered.backend, answered.error_code) == ("succeeded", "llm", "")
        result = api_client.get(f"/api/v1/jobs/{first.pk}/result").json()["result"]
        validate_result(result)  # the fields block in the published schema's shape
        for name, field in result["fields"]["fields"].items():
            for value in ([c for row in field for c in row.values()] if isinstance(field, list) else [field]):
                # Grounded only with its cited lines; anything else says why.
                assert (value["grounded"] and value["evidence"] and value["reason"] is None) or (
                    not value["grounded"] and value["reason"] and value["confidence"] == 0), (name, value)

        server.stop()  # the outage, mid-batch
        rest = [invoice_job(user, document_type=document_type) for _ in range(2)]
        pages_before = {job.pk: PageResult.objects.get(job=job).normalized for job in rest}

        for job in rest:
            failed = stage_of(job)
            assert (failed.status, failed.error_code, failed.attempts) == ("failed", "llm_unavailable", 1)
            job.refresh_from_db()
            assert job.status == "succeeded" and PageResult.objects.get(job=job).normalized == pages_before[job.pk]
            body = api_client.get(f"/api/v1/jobs/{job.pk}/fields").json()
            assert body["status"] == "failed" and body["error"]["code"] == "llm_unavailable"
    finally:
        server.close()
