"""Builders for tests of the fields stage: an OCR job that succeeds with a hand-made invoice page."""

from __future__ import annotations

from PIL import Image

from jobs import services
from jobs.models import DocumentType, JobFields
from jobs.page_images import encode_page
from tests.jobs.factories import JobFactory
from tests.ocr_engine.fields.hand_invoice import SCHEMA, invoice
from ocr_engine.schema import to_dict
from tests.ocr_engine.hand_results import ENGINE, box, region


def invoice_type(owner, name: str = "invoice", **changes) -> DocumentType:
    return DocumentType.objects.create(owner=owner, name=name, **{"match": "invoice", "fields_schema": SCHEMA,
                                                                  **changes})


def name_type(job, document_type: DocumentType) -> JobFields:
    """What submitting with ``document_type=<id or name>`` leaves on a job."""
    return JobFields.objects.create(job=job, document_type=document_type, type_source=JobFields.Source.USER,
                                    type_confidence=1.0)


def invoice_job(owner, *, document_type: DocumentType | None = None, **job_fields):
    """A job whose one page (tests.ocr_engine.fields.hand_invoice) a worker reads and finishes, committed."""
    # The page's dates are written 05.03.2024; the engine is the one the hand-made result names.
    job = JobFactory(owner=owner, **{"lang": "de", "engine": to_dict(ENGINE), **job_fields})
    if document_type is not None:
        name_type(job, document_type)
    return finish_with_invoice(job)


def finish_with_invoice(job):
    """A worker claims ``job``, reads the hand-made invoice as its page 1, and finishes it."""
    from jobs.services.pages import PageRecord

    services.job_claim(job_id=job.pk, worker_id="w")
    jpeg, thumbnail = encode_page(Image.new("RGB", (1200, 800), "white"), thumbnail_size=16)
    page = invoice().pages[0]
    page.regions = [region(1, 1, "text", "text", 1, box(0, 0, 1200, 800))]  # its lines' region (p1-r1)
    services.job_record_page(job_id=job.pk, worker_id="w", record=PageRecord(
        page_number=1, page=page, raw={}, timings={"ocr": 0.5}, image_jpeg=jpeg, thumbnail=thumbnail))
    return services.job_finish(job_id=job.pk, worker_id="w")
