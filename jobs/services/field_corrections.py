"""A reviewer's correction of one extracted field: ``PATCH /api/v1/jobs/{id}/fields/{name}``.

A correction gives a value, the lines it stands on, or both; the latest per field wins and is kept
(who, when, the field as extracted) as training data, like line corrections. It is applied over the
stored fields when they are read (``jobs.selectors.fields``), so a re-extraction never loses it.
``name`` addresses a top-level field (``total``) or a cell of an array (``line_items.0.amount``).
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from jobs.errors import FieldNotFound, InvalidFieldValue, JobStateError, LineNotFound
from jobs.models import AuditEntry, FieldCorrection, Job, JobFields
from jobs.selectors.fields import field_at
from jobs.selectors.results import job_document_result
from jobs.services.audit import Actor, audit_record
from ocr_engine.fields import parse_schema
from ocr_engine.fields.kinds import typed
from ocr_engine.fields.verify import LineBook

FIELD_CORRECTION = "field"  # the audit entry's detail
UNCHANGED = object()  # a PATCH that leaves the value as it is (only evidence given)


def job_field_correct(*, job: Job, name: str, user, value: Any = UNCHANGED, line_ids: list[str] | None = None,
                      address: str | None = None) -> FieldCorrection:
    """Store a reviewer's value and/or cited lines for field ``name`` of a job whose fields were read.

    Raises JobStateError while the stage has not succeeded, FieldNotFound for a name that addresses no
    field, InvalidFieldValue for a value not of the field's kind, LineNotFound for a line not in the result.
    """
    stage = JobFields.objects.filter(job=job).select_related("document_type").first()
    if stage is None or stage.status != JobFields.Status.SUCCEEDED or stage.document_type is None:
        raise JobStateError("This job's fields have not been read; only read fields can be corrected.")
    field = field_at(stage.fields, name)
    if field is None:
        raise FieldNotFound(f"The job's fields have no {name!r} (an array's cells are named like line_items.0.amount).")
    current = job.field_corrections.filter(name=name).first()
    if value is UNCHANGED:
        value = current.value if current else field["value"]
    else:
        value = _typed(stage.document_type.fields_schema, name, value)
    evidence = _evidence(job, line_ids) if line_ids is not None else (current.evidence if current else [])
    with transaction.atomic():
        correction, _ = FieldCorrection.objects.update_or_create(
            job=job, name=name, defaults={"value": value, "evidence": evidence, "original": field,
                                          "corrected_by": user})
        audit_record(action=AuditEntry.Action.CORRECTED, job=job, by=Actor.of_user(user, address),
                     detail=f"{FIELD_CORRECTION} {name}"[:255])
    return correction


def _typed(schema: dict, name: str, value: Any) -> Any:
    """``value`` as its field's kind would hold it (a date as YYYY-MM-DD, an amount as a number)."""
    head, _, rest = name.partition(".")
    specs = {spec.name: spec for spec in parse_schema(schema)}
    spec = specs.get(head)
    if spec is not None and rest:
        spec = next((c for c in spec.columns if c.name == rest.partition(".")[2]), None)
    if spec is None:  # the type's schema changed since the extraction
        raise FieldNotFound(f"The document type's schema has no field {name!r} any more.")
    if value is None:
        return None  # "the document has no such value"
    found = typed(spec, value)
    if found is None:
        raise InvalidFieldValue(f"{value!r} is not a {spec.kind} (the kind of {name}).")
    return found


def _evidence(job: Job, line_ids: list[str]) -> list[dict[str, Any]]:
    book = LineBook(job_document_result(job))
    unknown = [line_id for line_id in line_ids if line_id not in book.lines]
    if unknown:
        raise LineNotFound(f"The job's result has no line {', '.join(map(repr, unknown))}.")
    return [{"page": e.page, "line_id": e.line_id, "polygon": e.polygon} for e in book.evidence(line_ids)]
