"""The small job summary that every job event carries: WebSocket events and webhook payloads alike.

The API's ``JobSerializer`` is the full representation; this is the part of it
an event needs, in one shape, so a client that handles one handles the other.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from jobs.errors import error_dict
from jobs.models import Job


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


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None
