"""Fields: what a business reads a document for. A user's document types, each job's classification and
extracted fields, and reviewers' corrections of them (docs/extraction.md).

Stages after OCR (``jobs.services.classification``, ``jobs.services.extraction``): the job's document type
is the one named at submit (``source: user``) or classified from its text (``rules``, ``model``,
``llm``); its fields are extracted by that type's backend and each value verified against the lines it
cites (``ocr_engine.fields``).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from jobs.models.documents import Job


class DocumentType(models.Model):
    """A kind of document a user reads for fields: how to recognise it (``match`` by ``matching_algorithm``,
    as Paperless-ngx matches) and what to read from it (``fields_schema``, a JSON Schema of an object;
    ``ocr_engine.fields.spec`` says how its types are spelled)."""

    class Matching(models.TextChoices):
        ANY = "any", "Any of the words"
        ALL = "all", "All of the words"
        LITERAL = "literal", "The exact text"
        REGEX = "regex", "A regular expression"
        FUZZY = "fuzzy", "Close to the text"
        AUTO = "auto", "Learned from classified documents"

    class Backend(models.TextChoices):
        AUTO = "auto", "The LLM when one is configured, else rules"
        RULES = "rules", "Rules (labels and geometry)"
        LLM = "llm", "An LLM"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="document_types")
    name = models.CharField(max_length=128)
    match = models.TextField(blank=True, max_length=1000)
    matching_algorithm = models.CharField(max_length=8, choices=Matching.choices, default=Matching.ANY)
    fields_schema = models.JSONField(default=dict)
    backend = models.CharField(max_length=8, choices=Backend.choices, default=Backend.AUTO)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="documenttype_owner_name_unique")]
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class JobFields(models.Model):
    """One job's fields stage: its document type, how that was decided, and the fields read.

    State machine (changed only by ``jobs.services.extraction``)::

        pending --extracted--> succeeded
        pending --no type, or a type without fields--> skipped
        pending --the backend failed after its retries--> failed (error_code, error_detail)
        any --the type changed, or a retry--> pending

    ``fields`` is exactly the ``fields`` member of ``GET /api/v1/jobs/{id}/fields``: for each name
    ``{"value", "confidence", "grounded", "reason", "evidence": [{"page", "line_id", "polygon"}]}``, a list
    of objects of such fields for an array. Reviewers' corrections are ``FieldCorrection`` rows, applied
    over it when it is read.
    """

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        SUCCEEDED = "succeeded", "Succeeded"
        FAILED = "failed", "Failed"
        SKIPPED = "skipped", "Skipped"

    class Source(models.TextChoices):
        USER = "user", "Named by the user"
        RULES = "rules", "Matched by the type's rules"
        MODEL = "model", "The learned classifier"
        LLM = "llm", "The LLM"

    job = models.OneToOneField(Job, on_delete=models.CASCADE, primary_key=True, related_name="fields_stage")
    document_type = models.ForeignKey(DocumentType, null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="+")
    type_source = models.CharField(max_length=8, choices=Source.choices, blank=True)
    type_confidence = models.FloatField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    backend = models.CharField(max_length=8, blank=True)  # the backend that read the fields: rules or llm
    fields = models.JSONField(default=dict, blank=True)
    error_code = models.CharField(max_length=64, blank=True)
    error_detail = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    queued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["status"], name="jobfields_status")]

    def __str__(self) -> str:
        return f"{self.job_id} fields ({self.status})"


class FieldCorrection(models.Model):
    """A reviewer's value and/or evidence for one field (``name``: ``total``, or ``line_items.0.amount``
    inside an array); the latest per field wins, kept as training data like line corrections."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="field_corrections")
    name = models.CharField(max_length=255)
    value = models.JSONField(null=True)
    evidence = models.JSONField(default=list)  # [{"page", "line_id", "polygon"}]
    original = models.JSONField(null=True)  # the field as extracted, before this correction
    corrected_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    corrected_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "name"], name="fieldcorrection_job_name_unique")]

    def __str__(self) -> str:
        return f"{self.job_id} {self.name}"


class DocumentClassifier(models.Model):
    """An owner's learned document-type classifier (``jobs.services.classifier``), trained from the jobs whose
    type a user named or a reviewer set. ``changed_at``: when that training data last changed; the schedule
    retrains an owner whose ``changed_at`` is after ``trained_at``.

    ``model`` holds plain arrays (NumPy's ``.npz``, read with ``allow_pickle=False``), not a pickle: a
    row read back from the database can hold numbers and words, never code to run.
    """

    owner = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, primary_key=True,
                                 related_name="document_classifier")
    changed_at = models.DateTimeField(null=True, blank=True)
    trained_at = models.DateTimeField(null=True, blank=True)
    data_key = models.CharField(max_length=64, blank=True)  # sha256 of the (job, type) pairs it learned
    documents = models.PositiveIntegerField(default=0)  # how many it learned from
    model = models.BinaryField(null=True, blank=True)  # None: too little to learn from (under two types)

    def __str__(self) -> str:
        return f"classifier of {self.owner_id}"
