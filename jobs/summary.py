"""The small job (and batch) summary that every job (batch) event carries: WebSocket events and webhook
payloads alike.

The API's ``JobSerializer`` is the full representation; this is the part of it
an event needs, in one shape, so a client that handles one handles the other.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from jobs.errors import error_dict
from jobs.models import Batch, Job
from jobs.selectors.batches import batch_progress


def job_summary(job: Job) -> dict[str, Any]:
    return {
        "id": str(job.id),
        "status": job.status,
        "pipeline": job.pipeline,
        "lang": job.lang,
        "document": job.document.original_name if job.document_id else None,
        "pages_total": job.pages_total,
        "pages_done": job.pages_done,
        "error": error_dict(job.error_code, job.error_detail),
        "created_at": _iso(job.created_at),
        "finished_at": _iso(job.finished_at),
    }


def batch_summary(batch: Batch) -> dict[str, Any]:
    progress = batch_progress(batch)
    return {
        "id": str(batch.id),
        "name": batch.name,
        "status": progress.status,
        "progress": {"jobs_done": progress.jobs_done, "jobs_total": progress.jobs_total},
        "errors": batch.errors,
        "created_at": _iso(batch.created_at),
        "finished_at": _iso(batch.finished_at),
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
