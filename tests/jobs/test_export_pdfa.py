"""GET export.pdf?pdfa=2b: the searchable PDF as PDF/A-2b, in the request or built by a worker."""

from __future__ import annotations

import io
from pathlib import Path

import pikepdf
import pypdf
import pytest
from django_q.models import OrmQ

from jobs.models import Job
from tests.jobs.helpers import page_record, three_page_pdf
from tests.jobs.test_api import JOBS, run_pages, upload
from tests.jobs.test_export_worker import build_queued, long_job  # noqa: F401 (a fixture)
from tests.ocr_engine.pdfa_checks import assert_pdfa_2b

pytestmark = pytest.mark.django_db

BORN_DIGITAL = Path(__file__).parents[1] / "ocr_engine" / "data" / "born_digital" / "bash-groff-ghostscript.pdf"


def test_the_pdfa_export_of_a_short_job_is_made_in_the_request(api_client, settings):
    settings.OCR_EXPORT_INLINE_MAX_PAGES = 20
    job = Job.objects.get(pk=upload(api_client, three_page_pdf(), name="report.pdf").json()["id"])
    run_pages(job, [page_record(1), page_record(2, texts=("Page two",)), page_record(3)])
    response = api_client.get(f"{JOBS}/{job.pk}/export.pdf?pdfa=2b")
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert 'filename="report.pdf"' in response["Content-Disposition"]
    assert_pdfa_2b(response.content)
    assert "Page two" in pypdf.PdfReader(io.BytesIO(response.content)).pages[1].extract_text()
    assert build_queued() == []

    for url in ("export.pdf?pdfa=1a", "export.pdf?pdfa=", "export.txt?pdfa=2b"):
        refused = api_client.get(f"{JOBS}/{job.pk}/{url}")
        assert refused.status_code == 400 and refused.json()["code"] == "unsupported_option", url


def test_a_born_digital_page_is_the_uploaded_page_itself(api_client, settings):
    settings.OCR_EXPORT_INLINE_MAX_PAGES = 20
    job = Job.objects.get(pk=upload(api_client, BORN_DIGITAL.read_bytes(), name="bash.pdf").json()["id"])
    record = page_record(1)
    record.page.text_source = "pdf"  # as the engine marks a page read from the PDF's text layer
    run_pages(job, [record])
    response = api_client.get(f"{JOBS}/{job.pk}/export.pdf?pdfa=2b")
    assert response.status_code == 200
    assert_pdfa_2b(response.content)
    (page,) = pypdf.PdfReader(io.BytesIO(response.content)).pages
    assert page.extract_text() == pypdf.PdfReader(BORN_DIGITAL).pages[0].extract_text()
    with pikepdf.open(io.BytesIO(response.content)) as pdf:
        assert not pdf.pages[0].get_images()  # the vector page, not a picture of it


def test_the_pdfa_export_of_a_long_job_is_built_by_a_worker(api_client, long_job):  # noqa: F811
    url = f"{JOBS}/{long_job.pk}/export.pdf?pdfa=2b"
    assert api_client.get(url).status_code == 202
    ((job_id, fmt, name, pdfa),) = build_queued()
    assert (job_id, fmt, pdfa) == (str(long_job.pk), "pdf", "2b") and name.endswith(".pdf-pdfa2b")
    served = api_client.get(url)
    assert served.status_code == 200 and served["Content-Type"] == "application/pdf"
    assert 'filename="report.pdf"' in served["Content-Disposition"]
    content = b"".join(served.streaming_content)
    assert_pdfa_2b(content)
    assert len(pypdf.PdfReader(io.BytesIO(content)).pages) == 3

    # The plain PDF is another file: asking for it queues its own build.
    assert api_client.get(f"{JOBS}/{long_job.pk}/export.pdf").status_code == 202
    assert [args[3] for args in build_queued()] == [None]
    OrmQ.objects.all().delete()


def test_the_openapi_schema_documents_the_pdfa_parameter(api_client):
    schema = api_client.get("/api/v1/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    (path,) = [p for p in schema["paths"] if p.startswith("/api/v1/jobs/{id}/export")]
    (parameter,) = [p for p in schema["paths"][path]["get"]["parameters"] if p["name"] == "pdfa"]
    assert parameter["in"] == "query" and parameter["schema"]["enum"] == ["2b"]
    assert "400" in schema["paths"][path]["get"]["responses"]
