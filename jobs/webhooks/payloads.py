"""The JSON body of a webhook: the event and the job (batch) summary (jobs.summary) with links (docs/webhooks.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any
from uuid import UUID

from django.conf import settings
from django.urls import reverse

from jobs.models import Batch, Job
from jobs.selectors.fields import job_fields_block
from jobs.summary import batch_summary, job_summary


def job_event_payload(job: Job, *, event: str, delivery_id: UUID, timestamp: datetime) -> dict[str, Any]:
    """Built once per delivery and stored with it, so every retry sends the same content.

    A job whose fields are read after OCR carries them (``fields``, as GET /jobs/{id}/fields answers):
    its ``job.succeeded`` is sent when the fields stage ends (jobs.services.extraction).
    """
    block = job_fields_block(job)
    fields = {} if block is None else {"fields": block, "links": {"fields": _api_url("job-fields", job)}}
    return {
        "event": event,
        "job": {
            **job_summary(job),
            "links": {"self": _api_url("job-detail", job), "result": _api_url("job-result", job),
                      **fields.pop("links", {})},
            **fields,
        },
        "delivery_id": str(delivery_id),
        "timestamp": timestamp.isoformat(),
    }


def batch_event_payload(batch: Batch, *, event: str, delivery_id: UUID, timestamp: datetime) -> dict[str, Any]:
    """A batch's: as ``job_event_payload``, with the batch summary and its jobs' ids and states."""
    return {
        "event": event,
        "batch": {
            **batch_summary(batch),
            "jobs": [{"id": str(job_id), "status": status}
                     for job_id, status in batch.jobs.order_by("batch_members__id").values_list("id", "status")],
            "links": {"self": _api_url("batch-detail", batch)},
        },
        "delivery_id": str(delivery_id),
        "timestamp": timestamp.isoformat(),
    }


def _api_url(name: str, row: Job | Batch) -> str:
    # No request here (this runs on a worker): links are built on the public site URL.
    return settings.OCR_PUBLIC_URL + reverse(f"api:{name}", kwargs={"pk": row.pk})
