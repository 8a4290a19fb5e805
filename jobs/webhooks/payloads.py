"""The JSON body of a webhook: the event and a small job summary with links (docs/webhooks.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from django.conf import settings
from django.urls import reverse

from jobs.errors import error_dict
from jobs.models import Job


def job_event_payload(job: Job, *, event: str, delivery_id: UUID, timestamp: datetime) -> dict[str, Any]:
    """Built once per delivery and stored with it, so every retry sends the same content."""
    return {
        "event": event,
        "job": {
            "id": str(job.id),
            "status": job.status,
            "pipeline": job.pipeline,
            "lang": job.lang,
            "pages_total": job.pages_total,
            "pages_done": job.pages_done,
            "error": error_dict(job.error_code, job.error_detail),
            "created_at": _iso(job.created_at),
            "finished_at": _iso(job.finished_at),
            "links": {"self": _api_url("job-detail", job), "result": _api_url("job-result", job)},
        },
        "delivery_id": str(delivery_id),
        "timestamp": _iso(timestamp),
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _api_url(name: str, job: Job) -> str:
    # No request here (this runs on a worker): links are built on the public site URL.
    return settings.OCR_PUBLIC_URL + reverse(f"api:{name}", kwargs={"pk": job.pk})
