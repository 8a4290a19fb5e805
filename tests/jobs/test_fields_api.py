"""GET /api/v1/jobs/{id}/fields and PATCH /api/v1/jobs/{id}/fields/{name} (docs/extraction.md)."""

from __future__ import annotations

import pytest

from jobs.models import AuditEntry, FieldCorrection
from jobs.services.extraction import job_fields_extract
from tests.jobs.factories import JobFactory
from tests.jobs.fields_jobs import invoice_job, invoice_type

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_llm(settings):
    settings.OCR_LLM_URL = ""


@pytest.fixture
def read_job(user):
    job = invoice_job(user, document_type=invoice_type(user))
    job_fields_extract(job_id=job.pk)
    return job


def test_fields_answer_the_documented_shape(api_client, read_job):
    response = api_client.get(f"/api/v1/jobs/{read_job.pk}/fields")
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"document_type", "status", "error", "fields"}
    assert body["document_type"] == {"name": "invoice", "source": "user", "confidence": 1.0}
    assert (body["status"], body["error"]) == ("succeeded", None)
    number = body["fields"]["invoice_number"]
    assert set(number) == {"value", "confidence", "grounded", "reason", "evidence"}
    assert number["evidence"][0]["page"] == 1 and number["evidence"][0]["line_id"] == "p1-l1"
    assert len(number["evidence"][0]["polygon"]) == 4
    assert set(body["fields"]["line_items"][1]["amount"]) == {"value", "confidence", "grounded", "reason", "evidence"}


def test_another_users_job_fields_are_not_found(other_api_client, read_job):
    assert other_api_client.get(f"/api/v1/jobs/{read_job.pk}/fields").json()["code"] == "not_found"
    assert other_api_client.patch(f"/api/v1/jobs/{read_job.pk}/fields/customer", {"value": "x"},
                                  format="json").status_code == 404


def test_a_job_without_types_is_skipped_and_one_with_types_is_pending_while_it_runs(api_client, user):
    job = invoice_job(user)
    assert api_client.get(f"/api/v1/jobs/{job.pk}/fields").json() == {
        "document_type": None, "status": "skipped", "error": None, "fields": {}}
    invoice_type(user)
    queued = JobFactory(owner=user)
    assert api_client.get(f"/api/v1/jobs/{queued.pk}/fields").json()["status"] == "pending"


def test_a_reviewer_corrects_a_value_and_its_lines(api_client, user, read_job):
    response = api_client.patch(f"/api/v1/jobs/{read_job.pk}/fields/customer",
                                {"value": "Acme Industries GmbH", "evidence": [{"page": 1, "line_id": "p1-l5"}]},
                                format="json")
    assert response.status_code == 200, response.json()
    customer = response.json()["fields"]["customer"]
    assert (customer["value"], customer["confidence"], customer["grounded"]) == ("Acme Industries GmbH", 1.0, True)
    assert [e["line_id"] for e in customer["evidence"]] == ["p1-l5"]
    assert customer["corrected"]["by"] == "alice"
    stored = FieldCorrection.objects.get(job=read_job, name="customer")
    assert stored.original["value"] == "Acme Industries" and stored.corrected_by == user
    assert AuditEntry.objects.filter(job=read_job.pk, action="corrected", detail="field customer").exists()
    # A later read applies it again; the extraction itself is kept as it was read.
    assert api_client.get(f"/api/v1/jobs/{read_job.pk}/fields").json()["fields"]["customer"]["value"] == (
        "Acme Industries GmbH")


def test_an_array_cell_is_corrected_by_its_path_and_values_take_their_kind(api_client, read_job):
    response = api_client.patch(f"/api/v1/jobs/{read_job.pk}/fields/line_items.1.amount", {"value": "250,50"},
                                format="json")
    assert response.status_code == 200, response.json()
    cell = response.json()["fields"]["line_items"][1]["amount"]
    assert cell["value"] == 250.5 and [e["line_id"] for e in cell["evidence"]] == ["p1-l14"]
    date = api_client.patch(f"/api/v1/jobs/{read_job.pk}/fields/invoice_date", {"value": "2024-03-06"},
                            format="json")
    assert date.json()["fields"]["invoice_date"]["value"] == "2024-03-06"


def test_a_correction_pointing_only_at_other_lines_keeps_the_value(api_client, read_job):
    body = api_client.patch(f"/api/v1/jobs/{read_job.pk}/fields/invoice_number",
                            {"evidence": [{"line_id": "p1-l2"}]}, format="json").json()
    assert body["fields"]["invoice_number"]["value"] == "INV-2024-001"
    assert [e["line_id"] for e in body["fields"]["invoice_number"]["evidence"]] == ["p1-l2"]


@pytest.mark.parametrize(("name", "body", "status", "code"), [
    ("invoice_date", {"value": "not a date"}, 400, "invalid_field_value"),
    ("subtotal", {"value": "twelve"}, 400, "invalid_field_value"),
    ("nothing_such", {"value": "x"}, 404, "field_not_found"),
    ("line_items.9.amount", {"value": 1}, 404, "field_not_found"),
    ("customer", {"evidence": [{"line_id": "p9-l1"}]}, 404, "line_not_found"),
    ("customer", {}, 400, "invalid_request"),
])
def test_bad_corrections_are_refused_with_their_code_and_store_nothing(api_client, read_job, name, body, status,
                                                                       code):
    response = api_client.patch(f"/api/v1/jobs/{read_job.pk}/fields/{name}", body, format="json")
    assert (response.status_code, response.json()["code"]) == (status, code)
    assert not FieldCorrection.objects.exists()


def test_fields_not_read_yet_cannot_be_corrected(api_client, user):
    job = invoice_job(user, document_type=invoice_type(user))  # pending: the stage has not run
    response = api_client.patch(f"/api/v1/jobs/{job.pk}/fields/customer", {"value": "x"}, format="json")
    assert (response.status_code, response.json()["code"]) == (409, "invalid_state")


def test_the_result_carries_the_fields_block_valid_under_the_published_schema(api_client, read_job):
    from ocr_engine.validation import validate_result

    api_client.patch(f"/api/v1/jobs/{read_job.pk}/fields/customer", {"value": "Acme AG"}, format="json")
    result = api_client.get(f"/api/v1/jobs/{read_job.pk}/result").json()["result"]
    assert result["schema_version"] == "1.2"
    assert result["fields"] == api_client.get(f"/api/v1/jobs/{read_job.pk}/fields").json()
    assert result["fields"]["fields"]["customer"]["corrected"]["by"] == "alice"
    validate_result(result)


def test_a_job_without_a_fields_stage_has_null_fields_in_its_result(api_client, user):
    job = invoice_job(user)
    assert api_client.get(f"/api/v1/jobs/{job.pk}/result").json()["result"]["fields"] is None
