"""A job's and a batch's fields as files: fields.json and fields.csv (jobs.services.fields_exports)."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from jobs.models import Job
from jobs.services.batches import batch_create
from jobs.services.extraction import job_fields_extract
from tests.jobs.factories import png_bytes
from tests.jobs.fields_jobs import finish_with_invoice, invoice_job, invoice_type, name_type
from tests.jobs.helpers import TESTER

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_llm(settings):
    settings.OCR_LLM_URL = ""


def rows(content: bytes) -> list[dict]:
    return list(csv.DictReader(io.StringIO(content.decode())))


def test_a_jobs_fields_download_as_json_and_csv_with_array_cells_by_path(api_client, user):
    job = invoice_job(user, document_type=invoice_type(user))
    job_fields_extract(job_id=job.pk)
    api_client.patch(f"/api/v1/jobs/{job.pk}/fields/customer", {"value": "=HYPERLINK(1)"}, format="json")

    as_json = api_client.get(f"/api/v1/jobs/{job.pk}/fields.json")
    assert as_json.status_code == 200 and 'filename="page.fields.json"' in as_json["Content-Disposition"]
    assert json.loads(as_json.content) == api_client.get(f"/api/v1/jobs/{job.pk}/fields").json()

    as_csv = api_client.get(f"/api/v1/jobs/{job.pk}/fields.csv")
    assert as_csv["Content-Type"].startswith("text/csv")
    by_field = {row["field"]: row for row in rows(as_csv.content)}
    assert by_field["invoice_number"]["value"] == "INV-2024-001" and by_field["invoice_number"]["line_ids"] == "p1-l1"
    assert by_field["line_items.1.amount"]["value"] == "250.0" and by_field["line_items.1.amount"]["grounded"] == "True"
    assert by_field["customer"]["value"] == "'=HYPERLINK(1)"  # a spreadsheet shows it, never runs it
    assert api_client.get(f"/api/v1/jobs/{job.pk}/fields.xml").status_code == 404


def test_a_batch_zip_holds_each_jobs_fields_and_one_file_of_the_whole_batch(api_client, user):
    document_type = invoice_type(user)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("a.png", png_bytes(color="white"))
        z.writestr("b.png", png_bytes(color="gray"))
    batch = batch_create(owner=user, files=[SimpleUploadedFile("scans.zip", archive.getvalue())], by=TESTER)
    for job in batch.jobs.all():
        Job.objects.filter(pk=job.pk).update(lang="de")
        name_type(job, document_type)
        finish_with_invoice(job)
        job_fields_extract(job_id=job.pk)

    answer = api_client.get(f"/api/v1/batches/{batch.pk}/export.zip?format=fields.csv,fields.json")

    assert answer.status_code == 200, answer.content
    content = b"".join(answer.streaming_content) if answer.streaming else answer.content
    with zipfile.ZipFile(io.BytesIO(content)) as z:
        assert sorted(z.namelist()) == ["a.fields.csv", "a.fields.json", "b.fields.csv", "b.fields.json",
                                        "batch.fields.csv", "batch.fields.json"]
        whole = rows(z.read("batch.fields.csv"))
        assert {row["filename"] for row in whole} == {"a.png", "b.png"}
        assert len(whole) == 2 * len(rows(z.read("a.fields.csv")))
        jobs = json.loads(z.read("batch.fields.json"))["jobs"]
        assert sorted(j["filename"] for j in jobs) == ["a.png", "b.png"]
        assert all(j["status"] == "succeeded" for j in jobs)
