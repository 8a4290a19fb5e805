"""End to end: a drawn invoice read by a real OCR cluster, then its fields by a real ``llm`` cluster
(``Q_CLUSTER_NAME=llm manage.py qcluster``) with the rules backend (no LLM configured)."""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

import pytest

from jobs.models import DocumentType
from tests.e2e.workers import submit, succeeded, wait_for

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from fields_draw import invoice  # noqa: E402
from fields_schemas import SCHEMAS  # noqa: E402

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db(transaction=True)]


def wait_for_fields(api_client, job_id: str, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fields = api_client.get(f"/api/v1/jobs/{job_id}/fields").json()
        if fields["status"] != "pending":
            return fields
        time.sleep(0.2)
    raise AssertionError(f"the fields of job {job_id} stayed pending: {fields}")


def test_an_invoice_is_read_by_the_ocr_cluster_then_its_fields_by_the_llm_cluster(api_client, user, qcluster):
    DocumentType.objects.create(owner=user, name="invoice", match="invoice rechnung facture factura",
                                fields_schema=SCHEMAS["invoice"])
    page = invoice(1)  # German, label beside its value
    image = io.BytesIO()
    page.image.save(image, "PNG")
    job_id = submit(api_client, image.getvalue(), "rechnung.png", lang=page.lang, document_type="invoice")
    before = api_client.get(f"/api/v1/jobs/{job_id}/fields").json()
    assert (before["status"], before["document_type"]["source"]) == ("pending", "user")

    qcluster()  # the OCR cluster (cpu) alone: the job succeeds, its fields wait for their own cluster
    wait_for(api_client, job_id, succeeded)
    assert api_client.get(f"/api/v1/jobs/{job_id}/fields").json()["status"] == "pending"
    qcluster(Q_CLUSTER_NAME="llm", OCR_LLM_URL="")

    answer = wait_for_fields(api_client, job_id)
    assert (answer["status"], answer["error"]) == ("succeeded", None)
    assert answer["document_type"] == {"name": "invoice", "source": "user", "confidence": 1.0}
    lines = {line["id"]: line["text"] for p in api_client.get(f"/api/v1/jobs/{job_id}/result").json()[
        "result"]["pages"] for line in p["lines"]}
    for name, truth in page.fields.items():
        field = answer["fields"][name]
        expected = float(truth["value"]) if isinstance(field["value"], float) else truth["value"]
        assert (field["value"], field["grounded"], field["reason"]) == (expected, True, None), name
        assert field["evidence"] and all(e["line_id"] in lines for e in field["evidence"]), name
    result = api_client.get(f"/api/v1/jobs/{job_id}/result").json()["result"]
    assert result["fields"] == answer
