"""django-q2 tasks: thin entry points that take ids and call one service.

Delivery is at least once: every task here is safe to run twice (see
``jobs.services.processing``).
"""

from __future__ import annotations

import os
import socket

from django.conf import settings

from jobs import worker
from jobs.services import job_help, job_requeue_stale, job_run
from jobs.services.batch_exports import build_batch_export as build_batch_export_service
from jobs.services.classifier import classifiers_train_stale
from jobs.services.exports import build_export as build_export_service
from jobs.services.extraction import job_fields_extract, job_fields_requeue_stale
from jobs.services.retention import retention_purge as retention_purge_service
from jobs.services.storage import orphan_files_sweep


def worker_identity() -> str:
    """host:pid of this worker process, recorded on the job it holds."""
    return f"{socket.gethostname()}:{os.getpid()}"


def process_job(job_id: str) -> None:
    worker.pin_to_own_cores()
    job_run(job_id=job_id, worker_id=worker_identity(), budget_seconds=settings.OCR_TASK_BUDGET_SECONDS,
            stopping=worker.stopping)


def help_job(job_id: str) -> None:
    worker.pin_to_own_cores()
    job_help(job_id=job_id, worker_id=worker_identity(), budget_seconds=settings.OCR_TASK_BUDGET_SECONDS,
             stopping=worker.stopping)


def extract_fields(job_id: str) -> None:
    """The fields stage of a succeeded job, on the ``llm`` cluster (jobs.services.extraction)."""
    job_fields_extract(job_id=job_id)


def requeue_stale() -> int:
    return job_requeue_stale() + job_fields_requeue_stale()


def train_classifiers() -> int:
    """Retrain the learned document-type classifiers whose training data changed (schedule, migration 0022)."""
    return len(classifiers_train_stale())


def sweep_orphan_files() -> int:
    return len(orphan_files_sweep())


def retention_purge() -> int:
    return len(retention_purge_service().job_ids)


def build_export(job_id: str, fmt: str, name: str, pdfa: str | None = None) -> None:
    # pdfa defaults to None: builds queued by a release without PDF/A still run.
    build_export_service(job_id=job_id, fmt=fmt, name=name, pdfa=pdfa)


def build_batch_export(batch_id: str, formats: list[str], name: str) -> None:
    build_batch_export_service(batch_id=batch_id, formats=formats, name=name)
