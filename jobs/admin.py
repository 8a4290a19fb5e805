"""Admin: read-mostly views of documents, jobs, pages and webhook deliveries.

Actions call the same services as the API; nothing here changes state directly.
API tokens are listed and created here too, never shown: DRF's own token admin listed every key.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.admin.options import IS_POPUP_VAR
from django.contrib.auth import admin as auth_admin
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils.html import format_html
from django.utils.text import capfirst
from rest_framework.authtoken.admin import TokenAdmin
from rest_framework.authtoken.models import Token, TokenProxy

from jobs import services
from jobs.errors import JobStateError
from jobs.models import (
    ApiToken,
    AuditEntry,
    Batch,
    Document,
    DocumentType,
    FieldCorrection,
    Job,
    JobFields,
    LineCorrection,
    PageResult,
    UserSettings,
    WatchedFile,
    WebhookDelivery,
)
from jobs.services.audit import Actor
from jobs.services.extraction import job_fields_queue
from jobs.selectors.results import job_result_inline

PREVIEW_CHARS = 20_000


def _pretty(data) -> str:
    text = json.dumps(data, ensure_ascii=False, indent=2)
    if len(text) > PREVIEW_CHARS:
        text = text[:PREVIEW_CHARS] + f"\n… ({len(text) - PREVIEW_CHARS} more characters; see the API download)"
    return format_html('<pre style="max-height:40em;overflow:auto;white-space:pre-wrap">{}</pre>', text)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class PageResultInline(admin.TabularInline):
    model = PageResult
    fields = ("page_number", "status", "line_count", "region_count", "mean_confidence", "error_code", "created_at")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = True


@admin.register(Job)
class JobAdmin(ReadOnlyAdmin):
    list_display = ("id", "document_name", "owner", "pipeline", "lang", "status", "progress", "cluster",
                    "attempts", "error_code", "created_at", "finished_at")
    list_filter = ("status", "pipeline", "cluster", "owner", "created_at")
    search_fields = ("document__original_name", "document__sha256", "=id")
    date_hierarchy = "created_at"
    list_select_related = ("document", "owner")
    # engine and timings are shown inside the preview, pretty-printed.
    readonly_fields = [f.name for f in Job._meta.fields if f.name not in ("engine", "timings")] + ["result_preview"]
    inlines = [PageResultInline]
    actions = ["retry_jobs", "cancel_jobs", "requeue_jobs"]

    @admin.display(description="document", ordering="document__original_name")
    def document_name(self, job: Job) -> str:
        return job.document.original_name

    @admin.display(description="pages")
    def progress(self, job: Job) -> str:
        return f"{job.pages_done}/{job.pages_total}"

    @admin.display(description="result (normalized, corrections applied)")
    def result_preview(self, job: Job) -> str:
        data, size = job_result_inline(job, settings.OCR_INLINE_RESULT_MAX_BYTES)
        if data is None:
            data = f"{size:,} bytes: too large to preview here; download it from GET /api/v1/jobs/{job.id}/result.json"
        return _pretty({"timings": job.timings, "engine": job.engine, "result": data})

    def _run(self, request, queryset, action, verb: str, **by) -> None:
        done = 0
        for job in queryset:
            try:
                action(job=job, **by)
                done += 1
            except JobStateError as exc:
                self.message_user(request, f"{job.id}: {exc.message}", messages.WARNING)
        self.message_user(request, f"{verb} {done} job(s).")

    @admin.action(description="Retry failed pages of the selected failed jobs", permissions=["act"])
    def retry_jobs(self, request, queryset):
        self._run(request, queryset, services.job_retry, "Retried", by=Actor.of_request(request, admin=True))

    @admin.action(description="Cancel the selected queued/running jobs", permissions=["act"])
    def cancel_jobs(self, request, queryset):
        self._run(request, queryset, services.job_cancel, "Canceled", by=Actor.of_request(request, admin=True))

    @admin.action(description="Queue the selected queued/running jobs again (stuck jobs)", permissions=["act"])
    def requeue_jobs(self, request, queryset):
        self._run(request, queryset, services.job_requeue, "Requeued")

    def has_act_permission(self, request) -> bool:
        """The service actions change jobs: Django's ``change_job``, though the admin form stays read-only."""
        return request.user.has_perm("jobs.change_job")

    def delete_model(self, request, obj):
        services.job_delete(job=obj, by=Actor.of_request(request, admin=True))

    def delete_queryset(self, request, queryset):
        for job in queryset:
            services.job_delete(job=job, by=Actor.of_request(request, admin=True))


@admin.register(Document)
class DocumentAdmin(ReadOnlyAdmin):
    list_display = ("original_name", "owner", "media_type", "page_count", "size_bytes", "sha256", "created_at")
    list_filter = ("media_type", "created_at")
    search_fields = ("original_name", "sha256")
    list_select_related = ("owner",)


@admin.register(Batch)
class BatchAdmin(ReadOnlyAdmin):
    list_display = ("name", "owner", "status", "created_at", "finished_at")
    list_filter = ("status", "created_at")
    search_fields = ("=id", "name")
    list_select_related = ("owner",)


@admin.register(PageResult)
class PageResultAdmin(ReadOnlyAdmin):
    list_display = ("job", "page_number", "status", "line_count", "region_count", "mean_confidence", "created_at")
    list_filter = ("status",)
    search_fields = ("=job__id", "job__document__original_name")
    list_select_related = ("job",)
    exclude = ("raw", "normalized", "timings")
    readonly_fields = ["job", "page_number", "status", "width", "height", "scale", "image", "thumbnail",
                       "line_count", "region_count", "mean_confidence", "error_code", "error_detail",
                       "created_at", "updated_at", "timings_preview", "normalized_preview", "raw_preview"]

    @admin.display(description="timings")
    def timings_preview(self, page: PageResult) -> str:
        return _pretty(page.timings)

    @admin.display(description="normalized")
    def normalized_preview(self, page: PageResult) -> str:
        return _pretty(page.normalized)

    @admin.display(description="raw PaddleOCR output")
    def raw_preview(self, page: PageResult) -> str:
        return _pretty(page.raw)


@admin.register(LineCorrection)
class LineCorrectionAdmin(ReadOnlyAdmin):
    list_display = ("page", "line_id", "original_text", "text", "corrected_by", "corrected_at")
    search_fields = ("text", "original_text")


@admin.register(DocumentType)
class DocumentTypeAdmin(ReadOnlyAdmin):
    """Users' document types; they change them through the API (jobs.services.document_types checks them)."""

    list_display = ("name", "owner", "matching_algorithm", "match", "backend", "updated_at")
    list_filter = ("matching_algorithm", "backend")
    search_fields = ("name", "owner__username")


@admin.register(JobFields)
class JobFieldsAdmin(ReadOnlyAdmin):
    """Each job's fields stage (jobs.services.extraction): its type, state and answer; read again on demand."""

    list_display = ("job", "document_type", "type_source", "status", "backend", "error_code", "attempts",
                    "finished_at")
    list_filter = ("status", "backend", "type_source", "error_code")
    search_fields = ("job__id", "document_type__name")
    actions = ["read_again"]

    @admin.action(description="Read the fields of the selected succeeded jobs again", permissions=["act"])
    def read_again(self, request, queryset):
        queued = 0
        for stage in queryset.select_related("job").filter(job__status=Job.Status.SUCCEEDED):
            with transaction.atomic():
                queued += job_fields_queue(job=stage.job)
        self.message_user(request, f"Queued {queued} fields stage(s).")

    def has_act_permission(self, request) -> bool:
        return request.user.has_perm("jobs.change_job")


@admin.register(FieldCorrection)
class FieldCorrectionAdmin(ReadOnlyAdmin):
    list_display = ("job", "name", "value", "corrected_by", "corrected_at")
    search_fields = ("job__id", "name")


@admin.register(UserSettings)
class UserSettingsAdmin(admin.ModelAdmin):
    list_display = ("user", "default_webhook_url", "max_pages_per_day", "max_storage_bytes", "max_queued_url_jobs",
                    "retention_days")
    exclude = ("webhook_secret",)  # a secret is shown to its owner only, once, on the settings page


@admin.register(AuditEntry)
class AuditEntryAdmin(ReadOnlyAdmin):
    """Every user's entries; the log is never edited or deleted here either."""

    list_display = ("at", "action", "job", "actor", "address", "detail", "owner")
    list_filter = ("action", "at")
    search_fields = ("=job", "actor", "=address")
    date_hierarchy = "at"

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(ReadOnlyAdmin):
    list_display = ("job", "batch", "event", "url", "attempt", "status", "response_status", "error", "attempted_at",
                    "next_attempt_at", "delivered_at")
    list_filter = ("status", "event", "created_at")
    search_fields = ("=job__id", "=batch__id", "=delivery_id", "url")
    list_select_related = ("job", "batch")


@admin.register(WatchedFile)
class WatchedFileAdmin(ReadOnlyAdmin):
    """What the watched folders' watchers (manage.py ocr_watch) did with each file."""

    list_display = ("name", "folder", "state", "job", "error_code", "created_at", "updated_at")
    list_filter = ("state", "folder")
    search_fields = ("name", "=sha256", "=job__id")
    list_select_related = ("job",)


admin.site.unregister(TokenProxy)  # DRF's, which lists every key


@admin.register(ApiToken)
class ApiTokenAdmin(TokenAdmin):
    """DRF's token admin (its pages find a token by its user's id), naming each token by its key's start."""

    list_display = ("__str__", "user", "created")

    def lookup_allowed(self, lookup, value, request):
        # The list takes any lookup on the model's own fields from its URL: ?key__startswith=3f would
        # tell a key one character at a time (pk is the key too, to the database).
        return lookup.partition("__")[0] not in ("key", "pk") and super().lookup_allowed(lookup, value, request)

    def changelist_view(self, request, extra_context=None):
        _refuse_popup(request)
        return super().changelist_view(request, extra_context)

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        _refuse_popup(request)
        return super().changeform_view(request, object_id, form_url, extra_context)


def _refuse_popup(request) -> None:
    """A popup's rows and answers carry each object's primary key for the opener (``data-popup-opener``),
    and a token's is its key. No field of any model points at tokens, so no form opens this admin as one."""
    if IS_POPUP_VAR in request.GET or IS_POPUP_VAR in request.POST:
        raise PermissionDenied


admin.site.unregister(User)


@admin.register(User)
class UserAdmin(auth_admin.UserAdmin):
    """Django's, with the token in a user's deletion page named as in the token admin: Django lists the
    objects a deletion takes by their ``str()``, which is the whole key for DRF's ``Token``."""

    def get_deleted_objects(self, objs, request):
        deleted, model_count, perms_needed, protected = super().get_deleted_objects(objs, request)
        shown = {f"{capfirst(Token._meta.verbose_name)}: {token.key}": f"{capfirst(token._meta.verbose_name)}: {token}"
                 for token in ApiToken.objects.filter(user__in=objs)}
        return _replaced(deleted, shown), model_count, perms_needed, protected


def _replaced(items: list, shown: dict[str, str]) -> list:
    """``items`` (nested lists of text) with each text that is a key of ``shown`` replaced by its value."""
    return [_replaced(item, shown) if isinstance(item, list) else shown.get(item, item) for item in items]
