"""Batches: several documents submitted together (a ZIP, or several files in one POST), one job each.

A job can belong to more than one batch: the same file with the same options within the dedup window
is one job (``jobs.services.submission.duplicate_of``), whichever batch asked for it.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from jobs.models.documents import Job


class Batch(models.Model):
    """A group of jobs with one progress, one status and one webhook (``jobs.services.batches``).

    State machine (changed only by ``jobs.services.batches``)::

        queued --its last job ends-->  succeeded (every job succeeded, no member error)
                                       | failed (no job succeeded)
                                       | partial (some succeeded; others failed, were canceled or refused)
        queued --cancel-->             canceled
        final --one of its jobs is retried--> queued (and ends, and notifies, again)

    ``status`` stores ``queued`` while jobs are active; what a client sees then is ``running`` once
    any of them has started (``jobs.selectors.batches``). ``errors`` are the members refused before
    any job was made for them: ``[{"member", "code", "detail"}]``.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        PARTIAL = "partial", "Partly succeeded"
        CANCELED = "canceled", "Canceled"

    FINAL_STATUSES = (Status.SUCCEEDED, Status.FAILED, Status.PARTIAL, Status.CANCELED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ocr_batches")
    name = models.CharField(max_length=255)  # the ZIP's file name, or the first file's
    options = models.JSONField(default=dict)  # the job options every member was submitted with
    webhook_url = models.URLField(max_length=2000, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    errors = models.JSONField(default=list, blank=True)
    jobs = models.ManyToManyField(Job, through="BatchJob", related_name="batches")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "batches"
        indexes = [models.Index(fields=["owner", "-created_at"], name="batch_owner_created")]

    def __str__(self) -> str:
        return f"{self.name} ({self.status})"

    @property
    def is_final(self) -> bool:
        return self.status in self.FINAL_STATUSES


class BatchJob(models.Model):
    """A job of a batch, and the member (file name inside the ZIP, or the part's file name) it was made from."""

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="members")
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="batch_members")
    member = models.CharField(max_length=1000)

    class Meta:
        ordering = ["batch", "id"]
        constraints = [models.UniqueConstraint(fields=["batch", "job"], name="batchjob_batch_job_unique")]
