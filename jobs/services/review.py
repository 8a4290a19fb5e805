"""Review: reviewers correct line texts and mark jobs reviewed.

A correction is stored next to the engine's reading (``LineCorrection``); the
stored ``PageResult.normalized`` is never rewritten, so the original stays
available and ``jobs.selectors.results.page_with_corrections`` applies corrections for
the API, the UI and every export.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from jobs.errors import JobStateError, LineNotFound
from jobs.models import AuditEntry, Job, LineCorrection, PageResult
from jobs.progress import publish
from jobs.services.audit import Actor, audit_record
from jobs.services.search import page_index

# The kind of a ``LineCorrection`` in edit answers and "corrected" events (PageEdit.Kind names the others).
LINE_TEXT = "line_text"


def line_correct(*, page: PageResult, line_id: str, text: str, user,
                 address: str | None = None) -> LineCorrection | None:
    """Set the reviewed text of one line; returns the correction, or None when ``text`` is the engine's again.

    Raises LineNotFound for a line id that is not on the page, JobStateError for a page without a result.
    """
    if page.status != PageResult.Status.SUCCEEDED or not page.normalized:
        raise JobStateError(f"Page {page.page_number} has no result to correct.")
    original = next((line["text"] for line in page.normalized["lines"] if line["id"] == line_id), None)
    if original is None:
        raise LineNotFound(f"Page {page.page_number} has no line {line_id!r}.")
    # Other open views of the job re-fetch the page (jobs.progress "corrected").
    transaction.on_commit(lambda: publish(page.job, "corrected", page_number=page.page_number,
                                          correction_id=None, kind=LINE_TEXT, undone=False))
    with transaction.atomic():
        audit_record(action=AuditEntry.Action.CORRECTED, job=page.job, by=Actor.of_user(user, address),
                     detail=LINE_TEXT)
        correction = None
        if text == original:  # back to what the engine read: nothing to keep
            LineCorrection.objects.filter(page=page, line_id=line_id).delete()
        else:
            correction, _ = LineCorrection.objects.update_or_create(
                page=page, line_id=line_id,
                defaults={"text": text, "original_text": original, "corrected_by": user},
            )
        page_index(page)
    return correction


def job_mark_reviewed(*, job: Job, user, address: str | None = None) -> Job:
    """Record that ``user`` reviewed a finished job (again: the latest review wins)."""
    with transaction.atomic():
        updated = Job.objects.filter(pk=job.pk, status__in=Job.FINAL_STATUSES).update(
            reviewed_at=timezone.now(), reviewed_by=user
        )
        job.refresh_from_db()
        if not updated:
            raise JobStateError(f"Only finished jobs can be marked reviewed; this job is {job.status}.")
        audit_record(action=AuditEntry.Action.REVIEWED, job=job, by=Actor.of_user(user, address))
    return job
