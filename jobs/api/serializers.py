"""API shapes. Input serializers only check form (no side effects); services check meaning."""

from __future__ import annotations

import copy
import functools
import itertools
import uuid
from urllib.parse import quote

from django.urls import NoReverseMatch, get_script_prefix, reverse
from django.utils.http import RFC3986_SUBDELIMS
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from jobs.errors import error_dict
from jobs.models import Job, PageResult
from jobs.options import OPTION_HELP, JobOptions
from jobs.selectors.results import page_with_corrections
from jobs.selectors import job_queue_position
from jobs.services.retention import job_expires_at
from ocr_engine import exports, pipelines
from ocr_engine.schema import to_dict


class FieldsOnce:
    """A serializer mixin that builds the fields once per class; each instance gets shallow copies.

    DRF builds them again for every instance, each rebuilt from its arguments by a deep copy:
    184 µs of a job's answer, 74 µs here; 215 µs of checking a submission's form, 98 µs here.
    Binding sets attributes of the copy, and neither checking input nor writing output
    changes what the copies share: their options, error messages and validators (which
    keep no state between calls).
    """

    def get_fields(self):
        cls = type(self)
        if "_fields_built" not in cls.__dict__:
            cls._fields_built = self.fields_to_share(super().get_fields())
        return {name: copy.copy(field) for name, field in cls._fields_built.items()}

    def fields_to_share(self, fields: dict) -> dict:
        return fields


class JobOptionsSerializer(FieldsOnce, serializers.Serializer):
    """The options of a job (POST /jobs) and of every job of a batch (POST /batches), as a ``JobOptions``.

    Only their form is checked here: ``pipeline``, ``lang``, ``text_layer`` and ``orientation`` are free
    strings so that an unknown value gets the same ``unsupported_option`` error as every other way in
    (``JobOptions.check``), and a value left out takes ``JobOptions``' default.
    """

    pipeline = serializers.CharField(required=False, max_length=16, help_text=OPTION_HELP["pipeline"])
    lang = serializers.CharField(required=False, max_length=16, help_text=OPTION_HELP["lang"])
    pages = serializers.CharField(required=False, allow_blank=True, max_length=255, help_text=OPTION_HELP["pages"])
    text_layer = serializers.CharField(required=False, max_length=8, help_text=OPTION_HELP["text_layer"])
    orientation = serializers.CharField(required=False, max_length=8, help_text=OPTION_HELP["orientation"])
    webhook_url = serializers.URLField(required=False, allow_blank=True, max_length=2000,
                                       help_text=OPTION_HELP["webhook_url"])
    document_type = serializers.CharField(required=False, allow_blank=True, max_length=128,
                                          help_text=OPTION_HELP["document_type"])

    def options(self) -> JobOptions:
        return JobOptions.of(self.validated_data)


class JobCreateSerializer(JobOptionsSerializer):
    """POST /jobs: a multipart ``file`` or a ``file_url``, plus options."""

    file = serializers.FileField(required=False, allow_empty_file=True, use_url=False)
    file_url = serializers.URLField(required=False, max_length=2000)

    def validate(self, attrs):
        if bool(attrs.get("file")) == bool(attrs.get("file_url")):
            raise serializers.ValidationError("Send exactly one of `file` (multipart upload) or `file_url`.")
        return attrs


class JobFilterSerializer(serializers.Serializer):
    """Query parameters of GET /jobs."""

    status = serializers.ChoiceField(choices=Job.Status.choices, required=False)
    pipeline = serializers.CharField(required=False)
    created_after = serializers.DateTimeField(required=False)
    created_before = serializers.DateTimeField(required=False)

    def validate_pipeline(self, value):
        if value not in pipelines.names():
            raise serializers.ValidationError(f'"{value}" is not a valid choice.')
        return value


class JobWaitSerializer(serializers.Serializer):
    """Query parameter of GET /jobs/{id}: hold the answer until the job ends, for at most this long."""

    # Below the 60 s that proxies (nginx's proxy_read_timeout) allow an answer by default.
    MAX_WAIT_SECONDS = 50

    wait = serializers.FloatField(
        required=False, default=0, min_value=0, max_value=MAX_WAIT_SECONDS,
        help_text=f"Seconds (at most {MAX_WAIT_SECONDS}) to hold the answer until the job is final "
        "(succeeded, failed or canceled): one request instead of polling. 0: answer at once.")


class ApiUrls:
    """Absolute API URLs for one request, which names the scheme and host.

    ``build_absolute_uri`` parses and re-quotes every URL and checks the host each time: a
    job's eighteen links took 103 µs that way, 72 µs here. The paths made here are already
    quoted, so the checked origin is read once and put in front of each.
    """

    def __init__(self, origin: str):
        self.origin = origin

    @classmethod
    def of(cls, request) -> ApiUrls:
        return cls(request.build_absolute_uri("/")[:-1])

    def url(self, name: str, /, **kwargs) -> str:  # positional-only: a route may have a parameter "name"
        values = {key: quote(str(value), safe=URL_SAFE) for key, value in kwargs.items()}
        return self.origin + _route_path(get_script_prefix(), name, *sorted(kwargs)).format_map(values)

    def template(self, name: str, /, *placeholders: str, **kwargs) -> str:
        """A URL with ``{placeholder}`` holes (RFC 6570, level 1) for the client to fill.

        Clients follow links instead of building URLs; a template is the link for a
        family of resources (a page of the job, a line of the page).
        """
        url = self.url(name, **kwargs, **{placeholder: "{%s}" % placeholder for placeholder in placeholders})
        return url.replace("%7B", "{").replace("%7D", "}")  # the holes, which URLs quote


URL_SAFE = RFC3986_SUBDELIMS + "/~:@"  # what reverse() leaves unquoted


@functools.cache
def _route_path(script_prefix: str, name: str, *params: str) -> str:
    """The path of API route ``name`` with a ``{param}`` hole per parameter, reversed once per process.

    ``reverse`` tries every pattern of the name on every call: a job's links cost 1 ms that way.
    The script prefix is part of the key because reverse() puts it in front.
    """
    # A stand-in value per parameter that its converter or pattern takes: digits or letters.
    for kinds in itertools.product((str(9_000_000_000), "zqxjzqxj"), repeat=len(params)):
        sentinels = {param: f"{kind}{'abcdefgh'[k] if kind.isalpha() else k}"
                     for k, (param, kind) in enumerate(zip(params, kinds))}
        try:
            path = reverse(f"api:{name}", kwargs=sentinels)
        except NoReverseMatch:
            continue
        path = path.replace("{", "{{").replace("}", "}}")
        for param, sentinel in sentinels.items():
            path = path.replace(sentinel, "{%s}" % param)
        return path
    raise NoReverseMatch(f"No route api:{name} with parameters {params}")


def job_links(urls: ApiUrls, job: Job) -> dict:
    """Every job-level resource and action, and templates for its pages: clients follow these."""
    return {
        "self": urls.url("job-detail", pk=job.pk),
        "result": urls.url("job-result", pk=job.pk),
        "result_json": urls.url("job-result-json", pk=job.pk),
        "exports": {fmt: urls.url("job-export", pk=job.pk, fmt=fmt) for fmt in exports.FORMATS},
        "cancel": urls.url("job-cancel", pk=job.pk),
        "retry": urls.url("job-retry", pk=job.pk),
        "reviewed": urls.url("job-reviewed", pk=job.pk),
        "cer": urls.url("job-cer", pk=job.pk),
        "webhooks": urls.url("job-webhooks", pk=job.pk),
        "page": urls.template("job-page", "page_number", pk=job.pk),
        "page_thumbnail": urls.template("job-page-thumbnail", "page_number", pk=job.pk),
        "correction_undo": urls.template("job-correction-undo", "correction_id", pk=job.pk),
    }


# Fields whose output depends on the value alone, never on the serializer's context (the request).
VALUE_ONLY_FIELDS = (
    serializers.BooleanField, serializers.CharField, serializers.ChoiceField, serializers.DateTimeField,
    serializers.FloatField, serializers.IntegerField, serializers.JSONField, serializers.SerializerMethodField,
    serializers.SlugRelatedField, serializers.UUIDField,
)


class ModelFieldsOnceSerializer(FieldsOnce, serializers.ModelSerializer):
    """A read-only ModelSerializer that reads its model and builds its fields once per class.

    The fields depend only on ``Meta``. Every field must be read-only: a writable related
    field holds a queryset, which this does not reason about, so this refuses one. Each must
    also be one of ``VALUE_ONLY_FIELDS``, so that output needs no field bound to this
    instance: DRF's ``to_representation`` copies and binds every field (a job has 23) for
    every instance it writes; here they are bound once per class, and only a method field's
    method is looked up on this instance.
    """

    def fields_to_share(self, fields: dict) -> dict:
        writable = sorted(name for name, field in fields.items() if not field.read_only)
        if writable:
            raise TypeError(f"{type(self).__name__}: fields shared between instances must be read-only: {writable}")
        bound = sorted(name for name, field in fields.items() if not isinstance(field, VALUE_ONLY_FIELDS))
        if bound:
            raise TypeError(f"{type(self).__name__}: fields that read the request cannot be shared: {bound}")
        return fields

    def to_representation(self, instance) -> dict:
        body = {}
        for name, field in self._fields_bound_once():
            if isinstance(field, serializers.SerializerMethodField):
                body[name] = getattr(self, field.method_name)(instance)
                continue
            try:
                value = field.get_attribute(instance)
            except serializers.SkipField:
                continue
            body[name] = None if value is None else field.to_representation(value)
        return body

    @classmethod
    def _fields_bound_once(cls) -> list[tuple[str, serializers.Field]]:
        if "_bound_once" not in cls.__dict__:
            fields = cls().get_fields()  # copies of the fields built once (FieldsOnce)
            for name, field in fields.items():
                field.bind(name, None)  # a source and a method name; no parent is read
            cls._bound_once = list(fields.items())
        return cls._bound_once


class JobSerializer(ModelFieldsOnceSerializer):
    document = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    queue_position = serializers.SerializerMethodField()
    error = serializers.SerializerMethodField()
    links = serializers.SerializerMethodField()
    pages = serializers.CharField(source="pages_spec", read_only=True)
    reviewed_by = serializers.SlugRelatedField(slug_field="username", read_only=True)
    expires_at = serializers.SerializerMethodField()
    document_type = serializers.SerializerMethodField(help_text="the document type a person gave the job (at "
                                                      "submit or in review); GET .../fields has the classified one")

    class Meta:
        model = Job
        fields = [
            "id", "status", "pipeline", "lang", "text_layer", "orientation", "pages", "page_numbers", "cluster",
            "document", "progress", "queue_position", "attempts", "error", "timings", "engine", "webhook_url",
            "document_type",
            "created_at", "started_at", "finished_at", "expires_at", "reviewed_at", "reviewed_by", "links",
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
        return error_dict(job.error_code, job.error_detail)

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_document_type(self, job: Job) -> str:
        return job.options.document_type

    def get_expires_at(self, job: Job) -> str | None:
        expires = job_expires_at(job)
        return None if expires is None else serializers.DateTimeField().to_representation(expires)

    def get_links(self, job: Job) -> dict:
        return job_links(ApiUrls.of(self.context["request"]), job)


class PageSerializer(ModelFieldsOnceSerializer):
    """GET /jobs/{id}/pages/{n}: the normalized page (corrections applied) and PaddleOCR's raw output.

    The one page representation: the API, the review UI and every edit's response use it.
    ``corrections`` says who retyped which line and when; ``links`` name every page-level action.
    The context's ``with_raw=False`` leaves ``raw`` out (``?raw=false``), for viewers that only draw.
    """

    normalized = serializers.SerializerMethodField()
    error = serializers.SerializerMethodField()
    corrections = serializers.SerializerMethodField()
    links = serializers.SerializerMethodField()

    class Meta:
        model = PageResult
        fields = [
            "page_number", "status", "width", "height", "scale", "line_count", "region_count",
            "mean_confidence", "timings", "error", "normalized", "corrections", "raw", "created_at", "links",
        ]
        read_only_fields = fields

    def to_representation(self, page: PageResult) -> dict:
        body = super().to_representation(page)
        if not self.context.get("with_raw", True):
            del body["raw"]
        return body

    def get_normalized(self, page: PageResult) -> dict | None:
        return to_dict(page_with_corrections(page)) if page.normalized else None

    def get_error(self, page: PageResult) -> dict | None:
        return error_dict(page.error_code, page.error_detail)

    def get_corrections(self, page: PageResult) -> dict[str, dict]:
        return {
            c.line_id: {"by": c.corrected_by.get_username() if c.corrected_by else None, "at": c.corrected_at}
            for c in page.corrections.all()
        }

    def get_links(self, page: PageResult) -> dict:
        return page_links(ApiUrls.of(self.context["request"]), page)


def page_links(urls: ApiUrls, page: PageResult) -> dict:
    """Every page-level resource and action, and templates for its lines and regions."""
    kwargs = {"pk": page.job_id, "page_number": page.page_number}
    return {
        "self": urls.url("job-page", **kwargs),
        "job": urls.url("job-detail", pk=page.job_id),
        "image": urls.url("job-page-image", **kwargs) if page.image else None,
        "thumbnail": urls.url("job-page-thumbnail", **kwargs) if page.thumbnail else None,
        "lines": urls.url("job-lines", **kwargs),
        "lines_merge": urls.url("job-lines-merge", **kwargs),
        "line": urls.template("job-line", "line_id", **kwargs),
        "line_split": urls.template("job-line-split", "line_id", **kwargs),
        "region": urls.template("job-region", "region_id", **kwargs),
    }
