"""Documents, OCR jobs and what they produce: per-page results, claims, corrections, edits, exports, the search index.

Rows change state only through ``jobs.services``; no ``save()`` override or
signal here holds business logic. Of the OCR stack only the pipeline registry
(plain Python, no models loaded) is imported, for the pipeline choices.
"""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.search import SearchVectorField
from django.db import models

from jobs.options import JobOptions
from ocr_engine import pipelines


class Document(models.Model):
    """An uploaded file as received, after validation; immutable once stored.

    A ``file_url`` submission makes its Document before the file is there: ``source_url``
    set, ``file`` empty (and the fields about the file blank) until a worker has downloaded
    and checked it (jobs.services.fetching).
    """

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ocr_documents")
    # Stored under a random name: the user's file name never reaches the filesystem.
    file = models.FileField(upload_to="documents/%Y/%m/", blank=True)
    source_url = models.URLField(max_length=2000, blank=True)  # the file_url it is (to be) downloaded from
    original_name = models.CharField(max_length=255)
    sha256 = models.CharField(max_length=64)
    media_type = models.CharField(max_length=64)
    size_bytes = models.BigIntegerField()
    page_count = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["owner", "-created_at"], name="document_owner_created"),
            models.Index(fields=["sha256"], name="document_sha256"),
        ]

    def __str__(self) -> str:
        return self.original_name


class Job(models.Model):
    """One OCR run over (some pages of) one document.

    State machine (changed only by ``jobs.services``)::

        queued  --claim-->            running
        running --all pages done-->   succeeded | failed (pages_failed, timeout, ...)
        running --lease expired-->    running again under a new worker (resumes at
                                      the first unfinished page; attempts + 1)
        failed  --retry-->            queued (only failed/missing pages are redone)
        queued | running --cancel-->  canceled (a worker stops at the next page boundary)

    A worker holds a running job by ``worker_id`` + ``heartbeat_at`` (its lease,
    refreshed at every page). When a task's time budget is spent it releases the
    lease (``heartbeat_at = NULL``) and enqueues its continuation, so the job
    stays ``running`` for the user while any worker may take the next slice.
    """

    # The engine's pipeline registry, as choices (Job.Pipeline.OCR == "ocr", ...).
    Pipeline = models.TextChoices("Pipeline", [(p.name.upper(), (p.name, p.label)) for p in pipelines.all()])

    class Cluster(models.TextChoices):
        CPU = "cpu", "CPU"
        GPU = "gpu", "GPU"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        CANCELED = "canceled", "Canceled"

    ACTIVE_STATUSES = (Status.QUEUED, Status.RUNNING)
    FINAL_STATUSES = (Status.SUCCEEDED, Status.FAILED, Status.CANCELED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ocr_jobs")
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="jobs")

    # options
    pipeline = models.CharField(max_length=16, choices=Pipeline.choices)
    lang = models.CharField(max_length=16)
    # ocr_engine.config.TEXT_LAYER_MODES / ORIENTATION_MODES; EngineConfig validates them.
    text_layer = models.CharField(max_length=8, default="auto")
    orientation = models.CharField(max_length=8, default="auto")
    pages_spec = models.CharField(max_length=255, blank=True)  # as the user wrote it, e.g. "1-3,7"
    page_numbers = models.JSONField(default=list)  # the pages chosen, 1-based, ascending
    cluster = models.CharField(max_length=8, choices=Cluster.choices)
    webhook_url = models.URLField(max_length=2000, blank=True)
    # sha256 of the file + hash of the options: same key within the window -> same job.
    dedup_key = models.CharField(max_length=64)

    # state
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    pages_done = models.PositiveIntegerField(default=0)
    pages_total = models.PositiveIntegerField(default=0)
    attempts = models.PositiveIntegerField(default=0)
    max_attempts = models.PositiveIntegerField(default=3)
    error_code = models.CharField(max_length=64, blank=True)
    error_detail = models.TextField(blank=True)
    worker_id = models.CharField(max_length=128, blank=True)
    queue_task_id = models.CharField(max_length=64, blank=True)  # django-q task id of the pending task
    timings = models.JSONField(default=dict, blank=True)  # per-stage totals in seconds over all pages
    engine = models.JSONField(default=dict, blank=True)  # schema.EngineInfo of the engine that ran it

    created_at = models.DateTimeField(auto_now_add=True)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    deadline_at = models.DateTimeField(null=True, blank=True)

    # review (UI)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # retention (jobs.services.retention): when OCR_RETENTION_KEEP_RESULTS removed the original
    # and page images and kept the result; such a job does not expire again.
    files_purged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # pages_total too: the pages-per-day quota sums a day of the owner's jobs from the index alone
            models.Index(fields=["owner", "-created_at", "pages_total"], name="job_owner_created_pages"),
            models.Index(fields=["status", "cluster", "created_at"], name="job_status_cluster"),
            models.Index(fields=["owner", "dedup_key", "-created_at"], name="job_dedup"),
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.status})"

    @property
    def is_final(self) -> bool:
        return self.status in self.FINAL_STATUSES

    @property
    def options(self) -> JobOptions:
        """The options the job was submitted with (its webhook URL as resolved at submit; its document type
        as a person gave it, at submit or in review)."""
        stage = getattr(self, "fields_stage", None)  # None: the job has no JobFields row
        named = stage.document_type.name if stage and stage.type_source == "user" and stage.document_type else ""
        return JobOptions(pipeline=self.pipeline, lang=self.lang, text_layer=self.text_layer,
                          orientation=self.orientation, pages=self.pages_spec, webhook_url=self.webhook_url,
                          document_type=named)


def _page_upload_to(instance: "PageResult", filename: str) -> str:
    return f"pages/{instance.job_id}/{filename}"


class PageResult(models.Model):
    """What the engine produced for one page; one row per (job, page), written once per run."""

    class Status(models.TextChoices):
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"

    LOW_CONFIDENCE = 0.8  # "check this line": the review queue's count and the job page's default threshold

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="pages")
    page_number = models.PositiveIntegerField()
    status = models.CharField(max_length=16, choices=Status.choices)
    width = models.PositiveIntegerField(null=True, blank=True)
    height = models.PositiveIntegerField(null=True, blank=True)
    scale = models.FloatField(null=True, blank=True)
    image = models.FileField(upload_to=_page_upload_to, blank=True)  # the page as the engine saw it (JPEG)
    thumbnail = models.FileField(upload_to=_page_upload_to, blank=True)  # small WebP for page strips
    stored_bytes = models.BigIntegerField(default=0)  # of image + thumbnail, counted in the owner's StorageUsage
    raw = models.JSONField(null=True, blank=True)  # PaddleOCR's own output (numpy -> lists, nothing else)
    normalized = models.JSONField(null=True, blank=True)  # ocr_engine.schema.to_dict(Page)
    line_count = models.PositiveIntegerField(default=0)
    region_count = models.PositiveIntegerField(default=0)
    mean_confidence = models.FloatField(null=True, blank=True)  # for "worst pages first"
    # The engine's lines under LOW_CONFIDENCE: the review queue counts what is still open from these
    # ids alone, without parsing a page's whole result.
    low_confidence_lines = models.JSONField(default=list, blank=True)
    timings = models.JSONField(default=dict, blank=True)
    error_code = models.CharField(max_length=64, blank=True)
    error_detail = models.TextField(blank=True)
    worker_id = models.CharField(max_length=128, blank=True)  # host:pid of the worker that read it
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["job", "page_number"]
        constraints = [models.UniqueConstraint(fields=["job", "page_number"], name="pageresult_job_page_unique")]
        indexes = [models.Index(fields=["mean_confidence"], name="pageresult_confidence")]

    def __str__(self) -> str:
        return f"{self.job_id} p{self.page_number}"


class SearchLine(models.Model):
    """One line of a stored page as full-text search reads it: its text as the review shows it now
    (corrections and edits applied), where it is, and the owner and page it belongs to.

    Written only by ``jobs.services.search.page_index``, in the transaction that stores or corrects the
    page; deleted with its page (and job), so search never shows what is gone. One row per line, not per
    page: a hit is a line, and the count, the order and the pagination are the database's.
    PostgreSQL searches ``vector`` (GIN-indexed, migration 0016); SQLite the FTS5 table
    ``jobs_searchline_fts``, which triggers keep equal to this table (``vector`` stays NULL there).
    """

    page = models.ForeignKey(PageResult, on_delete=models.CASCADE, related_name="search_lines")
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="+")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    page_number = models.PositiveIntegerField()
    line_id = models.CharField(max_length=32)
    position = models.PositiveIntegerField()  # the line's place in the page's reading order
    region_type = models.CharField(max_length=32, blank=True)
    polygon = models.JSONField(default=list)
    text = models.TextField()
    # The line's confidence as its page's result has it. NULL only on rows indexed before migration
    # 0017, until ``manage.py ocr_reindex``; nullable also lets SQLite add the column in place, where a
    # rebuilt table would lose the FTS5 triggers of migration 0016.
    confidence = models.FloatField(null=True)
    config = models.CharField(max_length=32)  # PostgreSQL text search configuration of the job's language
    vector = SearchVectorField(null=True)

    class Meta:
        indexes = [
            models.Index(fields=["owner", "config"], name="searchline_owner_config"),
            models.Index(fields=["page", "position"], name="searchline_page_position"),
        ]

    def __str__(self) -> str:
        return f"{self.page} {self.line_id}"


class PageClaim(models.Model):
    """A worker's hold on one page of a running job while it reads it.

    Lets several workers share one job (jobs.services.processing): each claims
    the next page that has neither a result nor a live claim. A claim older
    than OCR_LEASE_SECONDS belongs to a dead worker and may be taken over.
    """

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="page_claims")
    page_number = models.PositiveIntegerField()
    worker_id = models.CharField(max_length=128)
    claimed_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "page_number"], name="pageclaim_job_page_unique")]

    def __str__(self) -> str:
        return f"{self.job_id} p{self.page_number} by {self.worker_id}"


class LineCorrection(models.Model):
    """A reviewer's text for one line; the engine's text stays in ``PageResult.normalized``."""

    page = models.ForeignKey(PageResult, on_delete=models.CASCADE, related_name="corrections")
    line_id = models.CharField(max_length=32)  # schema.Line.id, e.g. "p1-l12"
    text = models.TextField()
    original_text = models.TextField()
    corrected_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    corrected_at = models.DateTimeField(auto_now=True)

    class Meta:
        # Latest correction wins; history is out of scope for now.
        constraints = [models.UniqueConstraint(fields=["page", "line_id"], name="linecorrection_page_line_unique")]

    def __str__(self) -> str:
        return f"{self.page} {self.line_id}"


class PageEdit(models.Model):
    """A reviewer's geometry or structure edit on one page (``ocr_engine.edits`` kinds), replayed in id order.

    ``payload`` is resolved when the edit is made (new ids, split texts), so
    replay is deterministic. Undo sets ``undone_at``; the row stays as history.
    """

    class Kind(models.TextChoices):
        LINE_CREATE = "line_create", "line created"
        LINE_CHANGE = "line_change", "line changed"
        LINE_DELETE = "line_delete", "line deleted"
        LINE_SPLIT = "line_split", "line split"
        LINE_MERGE = "line_merge", "lines merged"
        REGION_CHANGE = "region_change", "region changed"

    page = models.ForeignKey(PageResult, on_delete=models.CASCADE, related_name="edits")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    payload = models.JSONField(default=dict)
    made_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    made_at = models.DateTimeField(auto_now_add=True)
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["page", "id"]

    def __str__(self) -> str:
        return f"{self.page} {self.kind} #{self.pk}"


class ExportFile(models.Model):
    """An export a worker built and stored (``jobs.services.exports``), until the orphan sweep expires it
    or its job is deleted: its bytes count in the owner's ``StorageUsage`` meanwhile."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="export_files")
    name = models.CharField(max_length=255, unique=True)  # in the default storage
    size_bytes = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name
