"""Services: every state change of documents and jobs goes through these functions.

Split by sub-domain: documents (validate + store uploads), submission (new
jobs), processing and pages (what a worker does), lifecycle (cancel/retry/delete/recover).
"""

from jobs.services.documents import CheckedDocument, document_check
from jobs.services.lifecycle import job_cancel, job_delete, job_requeue, job_requeue_stale, job_retry, job_wait
from jobs.services.pages import PageRecord, job_record_page
from jobs.services.processing import job_claim, job_fail, job_finish, job_heartbeat, job_help, job_release, job_run
from jobs.services.submission import job_create, job_create_from_url

__all__ = [
    "CheckedDocument", "PageRecord", "document_check", "job_cancel", "job_claim",
    "job_create", "job_create_from_url", "job_delete", "job_fail", "job_finish", "job_heartbeat", "job_help",
    "job_record_page", "job_release", "job_requeue", "job_requeue_stale", "job_retry",
    "job_run", "job_wait",
]
