"""django-q2 plumbing: which cluster runs a job, enqueueing, and what is waiting.

Named clusters (settings.Q_CLUSTER): ``cpu`` (the default cluster),
``gpu`` (``Q_CLUSTER_NAME=gpu python manage.py qcluster``) for OCR, and ``llm`` for
the fields stage after OCR (jobs.services.extraction).
"""

from __future__ import annotations

import logging
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django_q.brokers import get_broker
from django_q.models import OrmQ
from django_q.signing import SignedPackage
from django_q.tasks import async_task

from jobs.models import Job
from ocr_engine import pipelines

logger = logging.getLogger(__name__)

PROCESS_JOB = "jobs.tasks.process_job"
HELP_JOB = "jobs.tasks.help_job"
EXTRACT_FIELDS = "jobs.tasks.extract_fields"
FIELDS_CLUSTER = "llm"  # the fields stage's own cluster (settings.Q_CLUSTER's ALT_CLUSTERS)


def cluster_for(pipeline: str) -> str:
    """GPU-only pipelines go to the GPU cluster; the others use it too when one exists."""
    if pipelines.get(pipeline).needs_gpu or settings.OCR_GPU_CLUSTER:
        return Job.Cluster.GPU
    return Job.Cluster.CPU


def enqueue_job(job: Job) -> None:
    """Queue ``process_job(job.id)`` on ``job.cluster`` and record the task on the job.

    With the ORM broker the queue entry is written inside the caller's
    transaction, so the Job row and its queue entry commit (or vanish)
    together. Other brokers live outside the database: enqueue after commit so
    a worker never receives the id of a row it cannot see yet; the
    ``requeue_stale`` schedule catches an entry lost between commit and push.
    """
    def push():
        job.queue_task_id = async_task(PROCESS_JOB, str(job.id), cluster=job.cluster, group=f"job-{job.id}")
        job.enqueued_at = timezone.now()
        Job.objects.filter(pk=job.pk).update(queue_task_id=job.queue_task_id, enqueued_at=job.enqueued_at)

    _push_with_commit(push)


def enqueue_helpers(job_id: UUID | str, cluster: str, count: int) -> None:
    """Queue ``help_job(job_id)`` ``count`` times on ``cluster``: idle workers there share the job's pages.

    Committed like ``enqueue_job``. A helper that arrives after the last page
    was claimed finds nothing to do and returns at once.
    """
    def push():
        for _ in range(count):
            async_task(HELP_JOB, str(job_id), cluster=cluster, group=f"job-{job_id}")

    _push_with_commit(push)


def enqueue_fields(job_id: UUID | str) -> None:
    """Queue ``extract_fields(job_id)`` on the fields cluster, committed like ``enqueue_job``."""
    def push():
        async_task(EXTRACT_FIELDS, str(job_id), cluster=FIELDS_CLUSTER, group=f"fields-{job_id}")

    _push_with_commit(push)


def _push_with_commit(push) -> None:
    """Run ``push`` inside the caller's transaction with the ORM broker (its queue rows commit with the
    job's), after commit with any other broker (see ``enqueue_job``)."""
    if settings.Q_BROKER == "orm":
        push()
    else:
        transaction.on_commit(push)


def waiting_task_ids(cluster: str) -> set[str]:
    """Ids of tasks waiting in ``cluster``'s queue (not the ones a worker holds)."""
    broker = get_broker(cluster)
    if settings.Q_BROKER == "orm":
        # A dequeued ORM entry stays in the table, locked until `retry`; only
        # unlocked rows are waiting.
        entries = OrmQ.objects.filter(key=broker.list_key, lock__lte=timezone.now())
        return {entry.task_id() for entry in entries}
    items = broker.connection.lrange(broker.list_key, 0, -1)
    return {SignedPackage.loads(item.decode() if isinstance(item, bytes) else item)["id"] for item in items}
