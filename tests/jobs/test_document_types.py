"""Document types over the API (per user), the document_type job option, and a reviewer's PUT of a job's type."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from jobs.models import DocumentClassifier, DocumentType, Job, JobFields
from tests.jobs.helpers import small_png
from tests.jobs.test_classification import finished_job

SCHEMA = {"type": "object", "properties": {
    "number": {"type": "string", "x-labels": ["Invoice No."]},
    "total": {"type": "number", "format": "money", "x-labels": ["Total"]}}}
INVOICE = {"name": "invoice", "match": "invoice rechnung facture", "matching_algorithm": "any",
           "fields_schema": SCHEMA}


@pytest.fixture
def invoice(api_client):
    response = api_client.post("/api/v1/document-types", INVOICE, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def test_a_type_is_created_read_changed_and_deleted(api_client, invoice):
    assert {k: invoice[k] for k in INVOICE} == INVOICE and invoice["backend"] == "auto"
    url = f"/api/v1/document-types/{invoice['id']}"
    assert api_client.get("/api/v1/document-types").json() == [invoice]
    changed = api_client.patch(url, {"match": "invoice", "backend": "rules"}, format="json")
    assert changed.status_code == 200
    assert (changed.json()["match"], changed.json()["backend"], changed.json()["fields_schema"]) == (
        "invoice", "rules", SCHEMA)
    assert api_client.get(url).json()["match"] == "invoice"
    assert api_client.delete(url).status_code == 204
    assert api_client.get(url).status_code == 404


def test_types_belong_to_their_user(api_client, other_api_client, invoice):
    url = f"/api/v1/document-types/{invoice['id']}"
    assert other_api_client.get("/api/v1/document-types").json() == []
    for response in (other_api_client.get(url), other_api_client.patch(url, {"match": "x"}, format="json"),
                     other_api_client.delete(url)):
        assert response.status_code == 404 and response.json()["code"] == "not_found"
    assert other_api_client.post("/api/v1/document-types", INVOICE, format="json").status_code == 201  # own name
    assert DocumentType.objects.get(pk=invoice["id"]).match == INVOICE["match"]


@pytest.mark.parametrize(("body", "code"), [
    ({**INVOICE, "fields_schema": {"type": "object", "properties": {"x": {"type": "blob"}}}}, "invalid_fields_schema"),
    ({**INVOICE, "fields_schema": ["not", "an object"]}, "invalid_fields_schema"),
    ({**INVOICE, "match": "(unclosed", "matching_algorithm": "regex"}, "invalid_match"),
    ({**INVOICE, "match": "", "matching_algorithm": "all"}, "invalid_match"),
    ({**INVOICE, "matching_algorithm": "sometimes"}, "invalid_request"),
    ({**INVOICE, "backend": "oracle"}, "invalid_request"),
    ({**INVOICE, "name": "  "}, "invalid_request"),
])
def test_a_type_that_could_not_work_is_refused(api_client, body, code):
    response = api_client.post("/api/v1/document-types", body, format="json")
    assert (response.status_code, response.json()["code"]) == (400, code)
    assert not DocumentType.objects.exists()


def test_a_patch_is_checked_whole_and_names_are_unique_per_user(api_client, invoice):
    url = f"/api/v1/document-types/{invoice['id']}"
    refused = api_client.patch(url, {"matching_algorithm": "regex", "match": "[a-"}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (400, "invalid_match")
    assert DocumentType.objects.get().matching_algorithm == "any"
    again = api_client.post("/api/v1/document-types", INVOICE, format="json")
    assert (again.status_code, again.json()["code"]) == (400, "document_type_exists")


def test_an_auto_type_needs_no_words_and_a_routing_type_no_fields(api_client):
    response = api_client.post("/api/v1/document-types", {"name": "letter", "matching_algorithm": "auto"},
                               format="json")
    assert response.status_code == 201 and response.json()["fields_schema"] == {}


@pytest.mark.parametrize("by", ["name", "id"])
def test_a_job_names_its_type_at_submit(api_client, invoice, by):
    upload = SimpleUploadedFile("page.png", small_png(), content_type="image/png")
    response = api_client.post("/api/v1/jobs", {"file": upload, "document_type": str(invoice[by])},
                               format="multipart")
    assert response.status_code == 202, response.json()
    assert response.json()["document_type"] == "invoice"
    stage = JobFields.objects.get(job_id=response.json()["id"])
    assert (stage.document_type_id, stage.type_source, stage.type_confidence) == (invoice["id"], "user", 1.0)


def test_the_same_file_named_another_type_is_another_job(api_client, invoice):
    receipt = api_client.post("/api/v1/document-types", {**INVOICE, "name": "receipt"}, format="json").json()

    def submit(**options):
        upload = SimpleUploadedFile("page.png", small_png(), content_type="image/png")
        return api_client.post("/api/v1/jobs", {"file": upload, **options}, format="multipart").json()

    as_invoice, again, as_receipt, unnamed = (submit(document_type="invoice"), submit(document_type="invoice"),
                                              submit(document_type=receipt["name"]), submit())
    assert again["id"] == as_invoice["id"] and again["reused"]
    assert len({as_invoice["id"], as_receipt["id"], unnamed["id"]}) == 3
    assert (as_receipt["document_type"], unnamed["document_type"]) == ("receipt", "")


def test_a_job_naming_a_type_its_owner_lacks_is_refused(api_client, other_api_client, invoice):
    for client, ref in ((api_client, "receipt"), (api_client, "999999"), (other_api_client, "invoice")):
        upload = SimpleUploadedFile("page.png", small_png(), content_type="image/png")
        response = client.post("/api/v1/jobs", {"file": upload, "document_type": ref}, format="multipart")
        assert response.status_code == 400
        assert (response.json()["code"], response.json()["field"]) == ("unknown_document_type", "document_type")
    url_job = api_client.post("/api/v1/jobs", {"file_url": "https://example.org/a.pdf", "document_type": "receipt"},
                              format="json")
    assert (url_job.status_code, url_job.json()["code"]) == (400, "unknown_document_type")
    batch = api_client.post("/api/v1/batches", {"file": SimpleUploadedFile("page.png", small_png()),
                                                "document_type": "receipt"}, format="multipart")
    assert (batch.status_code, batch.json()["code"]) == (400, "unknown_document_type")
    assert not Job.objects.exists()


def test_the_upload_form_offers_the_users_types(client, user, invoice):
    client.force_login(user)
    page = client.get("/upload/").content.decode()
    assert "Classify automatically" in page and '<option value="invoice">invoice</option>' in page


def test_a_reviewer_sets_a_jobs_type(api_client, user, invoice):
    job = finished_job(user, "Dear Sir", "Kind regards")
    response = api_client.put(f"/api/v1/jobs/{job.pk}/document-type", {"document_type": "invoice"}, format="json")
    assert response.status_code == 200, response.json()
    assert response.json() == {"document_type": {"id": invoice["id"], "name": "invoice", "source": "user",
                                                  "confidence": 1.0}, "status": "pending"}
    stage = JobFields.objects.get(job=job)
    assert (stage.document_type_id, stage.type_source, stage.status) == (invoice["id"], "user", "pending")
    classifier = DocumentClassifier.objects.get(owner=user)
    assert classifier.changed_at is not None and classifier.trained_at is None  # the schedule retrains it
    assert api_client.get(f"/api/v1/jobs/{job.pk}").json()["document_type"] == "invoice"


def test_a_reviewer_sets_only_a_type_of_the_jobs_owner(api_client, other_api_client, user, invoice):
    job = finished_job(user, "Invoice 12")
    url = f"/api/v1/jobs/{job.pk}/document-type"
    assert other_api_client.put(url, {"document_type": "invoice"}, format="json").status_code == 404
    refused = api_client.put(url, {"document_type": "receipt"}, format="json")
    assert (refused.status_code, refused.json()["code"]) == (400, "unknown_document_type")
    missing = api_client.put(url, {}, format="json")
    assert (missing.status_code, missing.json()["code"]) == (400, "invalid_request")


def test_the_admin_lists_types_read_only(admin_client, invoice):
    listing = admin_client.get("/admin/jobs/documenttype/")
    assert listing.status_code == 200 and "invoice" in listing.content.decode()
    assert admin_client.get("/admin/jobs/documenttype/add/").status_code == 403
