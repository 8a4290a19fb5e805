"""The fields stage after OCR: classify a succeeded job, read its fields, store them (docs/extraction.md).

When an OCR job succeeds (``jobs.services.processing``) and the stage applies to it (the job named a
document type at submit, or its owner has at least one), ``job_fields_queue`` marks its ``JobFields``
pending and queues ``jobs.tasks.extract_fields`` on the ``llm`` cluster: OCR workers never wait on
a model, and each stage's queue scales on its own. The task (``job_fields_extract``):

1. claims the stage: a conditional update of a pending stage nobody holds (or whose holder is past
   the task time-out, so a killed worker's redelivered task takes it over);
2. classifies the job if it has no type (``jobs.services.classification.job_classify``); no type:
   ``skipped``;
3. picks the backend: the type's, or for ``auto`` the LLM when one is configured (``OCR_LLM_URL``),
   else ``rules``;
4. extracts from the job's result (reviewers' line corrections included) and verifies every value
   (``ocr_engine.fields``), and stores the answer: ``succeeded``, or ``failed`` with the backend's
   code after its own retries (``jobs.llm``). The OCR result is only read, never touched.

Safe to run twice: a run stores its answer only while its claim (``started_at``) is still the
stage's; a stage re-queued meanwhile (the type changed) belongs to the newer run. The job's
``job.succeeded`` webhook waits for the stage, so that it carries the fields
(``jobs.webhooks.payloads``).
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from jobs.models import DocumentType, Job, JobFields
from jobs.queue import enqueue_fields
from jobs.selectors.results import job_document_result
from ocr_engine.errors import OcrError
from ocr_engine.fields import Extraction, extract_fields

logger = logging.getLogger(__name__)

# Claims of one stage before it fails with worker_lost: a document that kills its worker every time
# (memory) must not take every worker of the cluster down in turn.
FIELDS_MAX_ATTEMPTS = 3


def fields_stage_applies(job: Job) -> bool:
    """Whether the job's fields are read after OCR: it named a type, or its owner has one to classify into."""
    return JobFields.objects.filter(job=job).exists() or DocumentType.objects.filter(owner_id=job.owner_id).exists()


def job_fields_queue(*, job: Job) -> bool:
    """Mark the job's fields stage pending and queue its task (committed with the caller's transaction).

    Returns False, queueing nothing, when the stage does not apply to the job.
    """
    if not fields_stage_applies(job):
        return False
    now = timezone.now()
    JobFields.objects.update_or_create(job=job, defaults={
        "status": JobFields.Status.PENDING, "error_code": "", "error_detail": "", "queued_at": now,
        "started_at": None, "finished_at": None})
    enqueue_fields(job.pk)
    return True


def job_fields_extract(*, job_id) -> JobFields | None:
    """The task's work (see the module's docstring); None when there was nothing for this run to do."""
    claimed_at = _claim(job_id)
    if claimed_at is None:
        return None
    stage = JobFields.objects.select_related("document_type", "job", "job__document").get(pk=job_id)
    try:
        if stage.document_type is None:
            _classify(stage)  # may ask the LLM, and fail as the extraction does
        if stage.document_type is None:
            return _finish(stage, claimed_at, status=JobFields.Status.SKIPPED)
        extraction = _extract(stage.job, stage.document_type)
    except OcrError as exc:
        logger.warning("Fields of job %s failed: [%s] %s", job_id, exc.code, exc.message)
        return _finish(stage, claimed_at, status=JobFields.Status.FAILED, error_code=exc.code,
                       error_detail=exc.message,
                       backend=_backend_for(stage.document_type) if stage.document_type else "")
    return _finish(stage, claimed_at, status=JobFields.Status.SUCCEEDED, backend=extraction.backend,
                   fields=extraction.as_dict())


def job_fields_requeue_stale() -> int:
    """Queue again the stages whose task was lost; returns how many. Run with ``job_requeue_stale``.

    A stage still unclaimed ``Q_RETRY`` after its queueing lost its queue entry (a Redis broker
    restarted); one claimed longer ago than ``Q_TIMEOUT`` lost its worker past django-q2's
    redeliveries. A task queued twice is harmless: the second finds the stage claimed or answered.
    After ``FIELDS_MAX_ATTEMPTS`` claims a stage fails with ``worker_lost`` rather than kill more workers.
    """
    now = timezone.now()
    stale = JobFields.objects.filter(status=JobFields.Status.PENDING, job__status=Job.Status.SUCCEEDED).filter(
        Q(started_at__isnull=True, queued_at__lt=now - timedelta(seconds=settings.Q_RETRY))
        | Q(started_at__lt=now - timedelta(seconds=settings.Q_TIMEOUT)))
    requeued = 0
    for stage in stale.select_related("job"):
        if stage.attempts >= FIELDS_MAX_ATTEMPTS:
            with transaction.atomic():
                if JobFields.objects.filter(pk=stage.pk, status=JobFields.Status.PENDING,
                                            started_at=stage.started_at).update(
                        status=JobFields.Status.FAILED, error_code="worker_lost", finished_at=now,
                        error_detail=f"The fields stage's worker was lost {stage.attempts} times."):
                    _announce(stage.job)
            continue
        with transaction.atomic():
            JobFields.objects.filter(pk=stage.pk).update(queued_at=now)
            enqueue_fields(stage.pk)
        requeued += 1
    return requeued


def _claim(job_id):
    """Take the pending stage for this run; its ``started_at`` is the claim, checked again by ``_finish``."""
    now = timezone.now()
    # A holder past the task time-out was killed (django-q2 redelivers after `retry` > `timeout`).
    abandoned = now - timedelta(seconds=settings.Q_TIMEOUT)
    claimed = (JobFields.objects.filter(pk=job_id, status=JobFields.Status.PENDING, job__status=Job.Status.SUCCEEDED)
               .filter(Q(started_at__isnull=True) | Q(started_at__lt=abandoned))
               .update(started_at=now, attempts=F("attempts") + 1))
    return now if claimed else None


def _classify(stage: JobFields) -> None:
    # Imported here: classification loads its learned model lazily, on the llm cluster only.
    from jobs.services.classification import job_classify

    found = job_classify(job=stage.job)
    if found is not None:
        stage.document_type = found.document_type
        stage.type_source, stage.type_confidence = found.source, found.confidence


def _backend_for(document_type: DocumentType) -> str:
    if document_type.backend != DocumentType.Backend.AUTO:
        return document_type.backend
    from jobs.llm import llm_configured

    return DocumentType.Backend.LLM if llm_configured() else DocumentType.Backend.RULES


def _extract(job: Job, document_type: DocumentType) -> Extraction:
    result = job_document_result(job)
    if _backend_for(document_type) == DocumentType.Backend.LLM:
        from jobs.services.llm_extraction import llm_extract

        return llm_extract(result, document_type.fields_schema, lang=job.lang)
    return extract_fields(result, document_type.fields_schema, lang=job.lang)


def _finish(stage: JobFields, claimed_at, *, status: str, backend: str = "", fields: dict | None = None,
            error_code: str = "", error_detail: str = "") -> JobFields | None:
    """Store this run's answer if its claim still holds; then the job's ``job.succeeded`` webhook."""
    values = {"document_type": stage.document_type, "type_source": stage.type_source,
              "type_confidence": stage.type_confidence, "status": status, "backend": backend,
              "fields": fields or {}, "error_code": error_code, "error_detail": error_detail,
              "finished_at": timezone.now()}
    with transaction.atomic():
        if not JobFields.objects.filter(pk=stage.pk, status=JobFields.Status.PENDING,
                                        started_at=claimed_at).update(**values):
            return None  # re-queued meanwhile (a new type): the newer run answers
        _announce(stage.job)
    for name, value in values.items():
        setattr(stage, name, value)
    return stage


def _announce(job: Job) -> None:
    # Deferred import: the webhooks package reads this stage's answer into its payloads. A re-run
    # (a new type) sends nothing more: a job's delivery id is made of its finish (jobs.webhooks).
    from jobs.webhooks import webhook_schedule_for_job

    transaction.on_commit(lambda: webhook_schedule_for_job(job=job, event="job.succeeded"), robust=True)
