"""A job's or a batch's fields as files: ``fields.json`` and ``fields.csv`` (docs/extraction.md).

``fields.json`` of a job is exactly ``GET /api/v1/jobs/{id}/fields``; of a batch, ``{"jobs": [{"id",
"filename", ...that answer}]}``. ``fields.csv`` has one row per value, an array's cells named by their
path (``line_items.0.amount``) as a correction names them, and the batch's adds each row's job and file.
Read with reviewers' corrections applied, never built by a worker: a few rows per job.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from jobs.models import FieldCorrection, Job, JobFields
from jobs.selectors.fields import job_fields

FIELDS_FORMATS = {
    "fields.json": "application/json",
    "fields.csv": "text/csv; charset=utf-8",
}
COLUMNS = ["document_type", "status", "field", "value", "confidence", "grounded", "reason", "pages", "line_ids"]


def job_fields_file(job: Job, fmt: str) -> bytes:
    answer = job_fields(job)
    if fmt == "fields.json":
        return _json(answer)
    return _csv(COLUMNS, ([*row] for row in _rows(answer)))


def jobs_fields_file(jobs, fmt: str) -> bytes:
    """One file for many jobs (a batch's): each job's answer, or its rows, with its id and file name."""
    answers = [(job, job_fields(job)) for job in jobs]
    if fmt == "fields.json":
        return _json({"jobs": [{"id": str(job.pk), "filename": job.document.original_name, **answer}
                               for job, answer in answers]})
    return _csv(["job_id", "filename", *COLUMNS], ([str(job.pk), job.document.original_name, *row]
                                                   for job, answer in answers for row in _rows(answer)))


def fields_file_name(job: Job, fmt: str) -> str:
    """The uploaded file's stem with the format, as every export of the job is named."""
    return f"{job.document.original_name.rsplit('.', 1)[0] or 'document'}.{fmt}"


def fields_version(jobs) -> str:
    """What the jobs' fields files are made of: each stage's answer time and each correction's."""
    stages = JobFields.objects.filter(job__in=jobs).order_by("pk").values_list("pk", "finished_at", "queued_at")
    corrections = FieldCorrection.objects.filter(job__in=jobs).order_by("pk").values_list("pk", "corrected_at")
    return repr((list(stages), list(corrections)))


def _rows(answer: dict[str, Any]):
    kind = (answer["document_type"] or {}).get("name", "")
    for name, field in _flat(answer["fields"]):
        evidence = field.get("evidence") or []
        value = field["value"]
        yield [kind, answer["status"], name, "" if value is None else value, field["confidence"],
               field["grounded"], field["reason"] or "",
               " ".join(sorted({str(e["page"]) for e in evidence})), " ".join(e["line_id"] for e in evidence)]
    if not answer["fields"]:  # a skipped, pending or failed stage still has its row
        yield [kind, answer["status"], "", "", "", "", (answer["error"] or {}).get("code", ""), "", ""]


def _flat(fields: dict[str, Any]):
    for name, field in fields.items():
        if isinstance(field, list):
            for number, item in enumerate(field):
                for column, cell in item.items():
                    yield f"{name}.{number}.{column}", cell
        else:
            yield name, field


def _json(data) -> bytes:
    return json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8")


def _csv(header: list[str], rows) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    for row in rows:
        # A spreadsheet runs a cell that starts with = + - @ as a formula: a printed value must stay text.
        writer.writerow([f"'{cell}" if isinstance(cell, str) and cell[:1] in ("=", "+", "-", "@") else cell
                         for cell in row])
    return out.getvalue().encode("utf-8")
