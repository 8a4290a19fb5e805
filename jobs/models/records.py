"""What happened to jobs, kept apart from them: webhook deliveries and the audit log."""

from __future__ import annotations

import uuid

from django.db import models

from jobs.models.batches import Batch
from jobs.models.documents import Job


class WebhookDelivery(models.Model):
    """One attempt (or pending attempt) to POST a job's or a batch's event to a webhook URL.

    All attempts at one event share ``delivery_id`` (sent as X-OCR-Delivery);
    ``jobs.webhooks`` owns the lifecycle: pending -> delivered | failed, and a
    failed attempt with ``next_attempt_at`` set has a retry scheduled (none
    set: the delivery gave up).
    """

    class Event(models.TextChoices):
        JOB_SUCCEEDED = "job.succeeded", "job.succeeded"
        JOB_FAILED = "job.failed", "job.failed"
        BATCH_SUCCEEDED = "batch.succeeded", "batch.succeeded"
        BATCH_FAILED = "batch.failed", "batch.failed"
        BATCH_PARTIAL = "batch.partial", "batch.partial"

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    # Exactly one of the two: what the event is about.
    job = models.ForeignKey(Job, null=True, blank=True, on_delete=models.CASCADE, related_name="webhook_deliveries")
    batch = models.ForeignKey(Batch, null=True, blank=True, on_delete=models.CASCADE,
                              related_name="webhook_deliveries")
    delivery_id = models.UUIDField(default=uuid.uuid4, editable=False)
    event = models.CharField(max_length=32, choices=Event.choices)
    url = models.URLField(max_length=2000)
    payload = models.JSONField(default=dict)
    attempt = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    response_status = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    attempted_at = models.DateTimeField(null=True, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "webhook deliveries"
        # Makes scheduling idempotent: a second on_commit or task run cannot add the same attempt again.
        constraints = [
            models.UniqueConstraint(fields=["delivery_id", "attempt"], name="webhook_delivery_attempt_unique"),
            models.CheckConstraint(condition=models.Q(job__isnull=True) ^ models.Q(batch__isnull=True),
                                   name="webhook_delivery_job_or_batch"),
        ]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="webhook_status_next"),
            models.Index(fields=["job", "-created_at"], name="webhook_job_created"),
        ]

    def __str__(self) -> str:
        return f"{self.event} -> {self.url} ({self.status})"


class AuditEntry(models.Model):
    """Who or what did what to which job, when, from where (``jobs.services.audit``); written once, never
    changed or deleted by the application.

    The job and its owner are kept as values, not foreign keys: an entry outlives its job (a deletion's
    entry is about a job that is gone) and is the owner's to read (GET /api/v1/audit) after it.
    """

    class Action(models.TextChoices):
        DELETED = "deleted", "deleted"
        CANCELED = "canceled", "canceled"
        RETRIED = "retried", "retried"
        CORRECTED = "corrected", "corrected"  # a review edit: a line retyped, drawn, split, ...; an undo
        REVIEWED = "reviewed", "marked reviewed"
        EXPORTED = "exported", "exported"
        PURGED = "purged", "files purged"  # retention with OCR_RETENTION_KEEP_RESULTS: the result stays
        BATCH_CREATED = "batch_created", "batch created"  # ``job`` holds the batch's id (jobs.services.batches)

    action = models.CharField(max_length=16, choices=Action.choices)
    job = models.UUIDField()
    owner = models.BigIntegerField()  # the job's owner's user id
    actor = models.CharField(max_length=160)  # "user:<username>", "admin:<username>", "retention"
    address = models.GenericIPAddressField(null=True, blank=True)  # the request's REMOTE_ADDR
    detail = models.CharField(max_length=255, blank=True)  # e.g. an export's format
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name_plural = "audit entries"
        indexes = [models.Index(fields=["owner", "-at"], name="audit_owner_at"),
                   models.Index(fields=["job"], name="audit_job")]

    def __str__(self) -> str:
        return f"{self.actor} {self.action} {self.job}"
