"""The read side of the fields stage: ``GET /api/v1/jobs/{id}/fields``, the result's and the webhook's
``fields`` block, and the fields of batch exports. One shape everywhere (docs/extraction.md)::

    {"document_type": {"name", "source", "confidence"} | null,
     "status": "pending" | "succeeded" | "failed" | "skipped",
     "error": {"code", "detail"} | null,
     "fields": {"<name>": {"value", "confidence", "grounded", "reason", "evidence": [{"page", "line_id",
                "polygon"}]}, "<array>": [{"<name>": {...}}, ...]}}

Reviewers' corrections (``FieldCorrection``) are applied over the stored fields as they are read; a
corrected field also carries ``"corrected": {"by", "at"}``.
"""

from __future__ import annotations

import copy
from typing import Any

from jobs.errors import error_dict
from jobs.models import DocumentType, FieldCorrection, Job, JobFields


def job_fields(job: Job) -> dict[str, Any]:
    stage = JobFields.objects.filter(job=job).select_related("document_type").first()
    if stage is None:
        return {"document_type": None, "status": _status_without_stage(job), "error": None, "fields": {}}
    corrections = job.field_corrections.select_related("corrected_by")
    kind = stage.document_type
    return {
        "document_type": None if kind is None else {
            "name": kind.name, "source": stage.type_source, "confidence": stage.type_confidence},
        "status": stage.status,
        "error": error_dict(stage.error_code, stage.error_detail),
        "fields": fields_with_corrections(stage.fields, corrections),
    }


def job_fields_block(job: Job) -> dict[str, Any] | None:
    """The result's ``fields`` (schema 1.2): the job's fields where a fields stage applies to it, else None."""
    return job_fields(job) if JobFields.objects.filter(job=job).exists() else None


def _status_without_stage(job: Job) -> str:
    """A job with no stage yet: ``pending`` while its OCR runs and its owner has types to classify into."""
    if job.is_final or not DocumentType.objects.filter(owner_id=job.owner_id).exists():
        return JobFields.Status.SKIPPED
    return JobFields.Status.PENDING


def field_at(fields: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The field a name addresses: ``total``, or ``line_items.0.amount`` inside an array; None if none."""
    head, _, rest = name.partition(".")
    found: Any = fields.get(head)
    if rest:
        number, _, column = rest.partition(".")
        if not isinstance(found, list) or not number.isdigit() or int(number) >= len(found) or not column:
            return None
        found = found[int(number)].get(column)
    return found if isinstance(found, dict) else None


def fields_with_corrections(stored: dict[str, Any], corrections) -> dict[str, Any]:
    """The stored fields with each correction applied: its value and evidence, confirmed by a person."""
    fields = copy.deepcopy(stored)
    for correction in corrections:
        field = field_at(fields, correction.name)
        if field is None:
            continue  # a field of an earlier type or extraction
        field.update(corrected_field(correction, field))
    return fields


def corrected_field(correction: FieldCorrection, field: dict[str, Any]) -> dict[str, Any]:
    # A reviewer read the value on the page: it stands (confidence 1, grounded) on the lines they cite,
    # or on the extracted value's lines when they cited none.
    return {
        "value": correction.value, "confidence": 1.0, "grounded": True, "reason": None,
        "evidence": correction.evidence or field.get("evidence", []),
        "corrected": {"by": correction.corrected_by.get_username() if correction.corrected_by else None,
                      "at": correction.corrected_at.isoformat()},
    }
