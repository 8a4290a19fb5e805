"""Data model of the platform, one module per concern; ``jobs.models.X`` names every model (and the two
callables older migrations refer to)."""

from jobs.models.accounts import ApiToken, StorageUsage, UserSettings, new_webhook_secret
from jobs.models.batches import Batch, BatchJob
from jobs.models.documents import (
    Document, ExportFile, Job, LineCorrection, PageClaim, PageEdit, PageResult, SearchLine, _page_upload_to,
)
from jobs.models.fields import DocumentClassifier, DocumentType, FieldCorrection, JobFields
from jobs.models.records import AuditEntry, WebhookDelivery
from jobs.models.watch import WatchedFile

__all__ = [
    "ApiToken", "AuditEntry", "Batch", "BatchJob", "Document", "DocumentClassifier", "DocumentType", "ExportFile",
    "FieldCorrection", "Job",
    "JobFields", "LineCorrection", "PageClaim", "PageEdit", "PageResult", "SearchLine", "StorageUsage", "UserSettings", "WatchedFile", "WebhookDelivery",
    "_page_upload_to",
    "new_webhook_secret",
]
