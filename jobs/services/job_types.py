"""A job's document type as a person gives it: named at submit (the ``document_type`` option) or set by a
reviewer (``PUT /api/v1/jobs/{id}/document-type``). Either is ``source: user`` with confidence 1, and is
training data of the owner's learned classifier (``jobs.services.classifier``).
"""

from __future__ import annotations

from django.db import transaction

from jobs.models import DocumentType, Job, JobFields
from jobs.options import JobOptions
from jobs.services.classifier import classifier_mark_stale
from jobs.services.document_types import document_type_resolve
from jobs.services.extraction import job_fields_queue


def document_type_named(*, owner, options: JobOptions) -> DocumentType | None:
    """The owner's type the options name (raises ``unknown_document_type``), or None: classify the job."""
    return document_type_resolve(owner=owner, ref=options.document_type) if options.document_type else None


def job_type_name(*, job: Job, document_type: DocumentType | None) -> None:
    """At submit, in the job's transaction: the job's type as its owner named it."""
    if document_type is None:
        return
    JobFields.objects.create(job=job, document_type=document_type, type_source=JobFields.Source.USER,
                             type_confidence=1.0)
    classifier_mark_stale(owner_id=job.owner_id)


def job_type_set(*, job: Job, ref: str) -> JobFields:
    """A reviewer gives the job its type (the id or name of one of the job owner's types): a
    succeeded job's fields are read again for it, and the owner's classifier learns from it."""
    document_type = document_type_resolve(owner=job.owner, ref=ref)
    with transaction.atomic():
        stage, _ = JobFields.objects.update_or_create(job=job, defaults={
            "document_type": document_type, "type_source": JobFields.Source.USER, "type_confidence": 1.0})
        if job.status == Job.Status.SUCCEEDED:
            job_fields_queue(job=job)
        classifier_mark_stale(owner_id=job.owner_id)
    stage.refresh_from_db()
    return stage
