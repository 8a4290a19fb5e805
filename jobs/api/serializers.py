"""API shapes. Input serializers only check form (no side effects); services check meaning."""

from __future__ import annotations

from django.urls import reverse
from rest_framework import serializers

from jobs.models import Job, PageResult
from jobs.results import page_with_corrections
from jobs.selectors import job_queue_position
from ocr_engine import exports
from ocr_engine.schema import to_dict


class JobCreateSerializer(serializers.Serializer):
    """POST /jobs: a multipart ``file`` or a ``file_url``, plus options.

    ``pipeline`` and ``lang`` are free strings here so that an unknown value
    gets the engine's own ``unsupported_option`` error, like every other caller.
    """

    file = serializers.FileField(required=False, allow_empty_file=True, use_url=False)
    file_url = serializers.URLField(required=False, max_length=2000)
    pipeline = serializers.CharField(required=False, default=Job.Pipeline.STRUCTURE, max_length=16)
    lang = serializers.CharField(required=False, default="en", max_length=16)
    pages = serializers.CharField(required=False, allow_blank=True, default="", max_length=255)
    webhook_url = serializers.URLField(required=False, allow_blank=True, default="", max_length=2000)

    def validate(self, attrs):
        if bool(attrs.get("file")) == bool(attrs.get("file_url")):
            raise serializers.ValidationError("Send exactly one of `file` (multipart upload) or `file_url`.")
        return attrs


class JobFilterSerializer(serializers.Serializer):
    """Query parameters of GET /jobs."""

    status = serializers.ChoiceField(choices=Job.Status.choices, required=False)
    pipeline = serializers.ChoiceField(choices=Job.Pipeline.choices, required=False)
    created_after = serializers.DateTimeField(required=False)
    created_before = serializers.DateTimeField(required=False)


def api_url(request, name: str, **kwargs) -> str:
    return request.build_absolute_uri(reverse(f"api:{name}", kwargs=kwargs))


class JobSerializer(serializers.ModelSerializer):
    document = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    queue_position = serializers.SerializerMethodField()
    error = serializers.SerializerMethodField()
    links = serializers.SerializerMethodField()
    pages = serializers.CharField(source="pages_spec")
    reviewed_by = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Job
        fields = [
            "id", "status", "pipeline", "lang", "pages", "page_numbers", "cluster", "document", "progress",
            "queue_position", "attempts", "error", "timings", "engine", "webhook_url",
            "created_at", "started_at", "finished_at", "reviewed_at", "reviewed_by", "links",
        ]
        read_only_fields = fields

    def get_document(self, job: Job) -> dict:
        doc = job.document
        return {"name": doc.original_name, "media_type": doc.media_type, "size_bytes": doc.size_bytes,
                "page_count": doc.page_count, "sha256": doc.sha256}

    def get_progress(self, job: Job) -> dict:
        percent = round(100 * job.pages_done / job.pages_total, 1) if job.pages_total else 0.0
        return {"pages_done": job.pages_done, "pages_total": job.pages_total, "percent": percent}

    def get_queue_position(self, job: Job) -> int | None:
        return job_queue_position(job)

    def get_error(self, job: Job) -> dict | None:
        return {"code": job.error_code, "detail": job.error_detail} if job.error_code else None

    def get_links(self, job: Job) -> dict:
        request = self.context["request"]
        return {
            "self": api_url(request, "job-detail", pk=job.pk),
            "result": api_url(request, "job-result", pk=job.pk),
            "result_json": api_url(request, "job-result-json", pk=job.pk),
            "exports": {fmt: api_url(request, "job-export", pk=job.pk, fmt=fmt) for fmt in exports.FORMATS},
            "cancel": api_url(request, "job-cancel", pk=job.pk),
            "retry": api_url(request, "job-retry", pk=job.pk),
        }


class PageSerializer(serializers.ModelSerializer):
    """GET /jobs/{id}/pages/{n}: the normalized page (corrections applied) and PaddleOCR's raw output."""

    normalized = serializers.SerializerMethodField()
    error = serializers.SerializerMethodField()
    links = serializers.SerializerMethodField()

    class Meta:
        model = PageResult
        fields = [
            "page_number", "status", "width", "height", "scale", "line_count", "region_count",
            "mean_confidence", "timings", "error", "normalized", "raw", "created_at", "links",
        ]
        read_only_fields = fields

    def get_normalized(self, page: PageResult) -> dict | None:
        return to_dict(page_with_corrections(page)) if page.normalized else None

    def get_error(self, page: PageResult) -> dict | None:
        return {"code": page.error_code, "detail": page.error_detail} if page.error_code else None

    def get_links(self, page: PageResult) -> dict:
        request = self.context["request"]
        kwargs = {"pk": page.job_id, "page_number": page.page_number}
        return {
            "image": api_url(request, "job-page-image", **kwargs) if page.image else None,
            "thumbnail": api_url(request, "job-page-thumbnail", **kwargs) if page.thumbnail else None,
        }
