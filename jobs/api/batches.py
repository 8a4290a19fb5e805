"""REST API v1 batches: a ZIP (or several files) in one POST, one job per member; thin views over the services."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import SAFE_METHODS
from rest_framework.response import Response

from jobs.api.serializers import ApiUrls, JobOptionsSerializer
from jobs.api.streaming import stored_download
from jobs.api.throttles import submissions_admit
from jobs.api.views import ERROR
from jobs.models import Batch
from jobs.selectors.batches import batch_get_for_user, batch_jobs, batch_list_for_user, batch_progress
from jobs.services.audit import Actor
from jobs.services.batch_exports import (
    batch_export_file, batch_export_formats, batch_export_is_inline, batch_export_served, batch_export_zip,
)
from jobs.services.batches import batch_cancel, batch_create


class BatchCreateSerializer(JobOptionsSerializer):
    """POST /batches: one ZIP in ``file``, or several ``file`` parts, plus the options of every job."""

    file = serializers.ListField(child=serializers.FileField(allow_empty_file=True, use_url=False), min_length=1)


class BatchProgressSerializer(serializers.Serializer):
    jobs_done = serializers.IntegerField()
    jobs_total = serializers.IntegerField()


class BatchJobSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.CharField()
    document = serializers.DictField(help_text='{"name": the file name the job was made from}')


class BatchErrorSerializer(serializers.Serializer):
    member = serializers.CharField(help_text="The file's name in the ZIP (or the form)")
    code = serializers.CharField()
    detail = serializers.CharField()


class BatchSerializer(serializers.Serializer):
    """A batch, its progress, its jobs in member order, and the members refused."""

    id = serializers.UUIDField()
    name = serializers.CharField()
    status = serializers.ChoiceField(choices=Batch.Status.choices)
    progress = BatchProgressSerializer()
    jobs = BatchJobSerializer(many=True)
    errors = BatchErrorSerializer(many=True)
    options = serializers.DictField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    links = serializers.DictField()

    def to_representation(self, batch: Batch) -> dict:
        progress = batch_progress(batch)
        urls = ApiUrls.of(self.context["request"])
        return {
            "id": str(batch.id),
            "name": batch.name,
            "status": progress.status,
            "progress": {"jobs_done": progress.jobs_done, "jobs_total": progress.jobs_total},
            "jobs": [{"id": str(job.id), "status": job.status, "document": {"name": job.document.original_name},
                      "links": {"self": urls.url("job-detail", pk=job.pk)}} for job in batch_jobs(batch)],
            "errors": batch.errors,
            "options": batch.options,
            "created_at": batch.created_at.isoformat(),
            "finished_at": batch.finished_at.isoformat() if batch.finished_at else None,
            "links": {"self": urls.url("batch-detail", pk=batch.pk), "cancel": urls.url("batch-cancel", pk=batch.pk),
                      "export_zip": urls.url("batch-export-zip", pk=batch.pk)},
        }


class ExportFormatsNotRenderers(BaseContentNegotiation):
    """On export.zip, ``?format=`` names the exports in the ZIP, not one of DRF's renderers
    (URL_FORMAT_OVERRIDE): the answer is the ZIP, or a JSON error."""

    def select_parser(self, request, parsers):
        return parsers[0] if parsers else None

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class BatchViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = BatchSerializer
    parser_classes = [MultiPartParser, FormParser]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no user
            return Batch.objects.none()
        return batch_list_for_user(self.request.user)

    def get_object(self) -> Batch:
        try:
            return batch_get_for_user(self.request.user, self.kwargs["pk"],
                                      for_change=self.request.method not in SAFE_METHODS)
        except Batch.DoesNotExist:
            raise Http404 from None

    @extend_schema(
        request={"multipart/form-data": BatchCreateSerializer},
        responses={202: BatchSerializer, 400: ERROR, 413: ERROR, 429: ERROR},
        description="Queue one job per supported file: the members of a ZIP in `file`, or several `file` parts "
        "(a ZIP among them is unpacked too), each with the job options given. A member that cannot be a job "
        "(unsafe path, symbolic link, encrypted, nested archive, zip bomb, unsupported type, over a limit or "
        "quota) is listed in `errors` with its code; the others go on. 400 `invalid_archive` for a ZIP that is "
        "not one and 400 `archive_too_many_members` past OCR_BATCH_MAX_MEMBERS, storing nothing. Each member spends "
        "one unit of the submit rate (429 `throttled` when they do not all fit).",
    )
    def create(self, request, *args, **kwargs):
        form = BatchCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        # The submit budget is spent per member once they are counted, not per request (SubmitRateThrottle).
        batch = batch_create(owner=request.user, files=form.validated_data["file"], by=Actor.of_request(request),
                             admit=lambda members: submissions_admit(request.user, members), options=form.options())
        body = self.get_serializer(batch).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["links"]["self"]})

    @extend_schema(request=None, responses={200: BatchSerializer, 409: ERROR})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        batch = batch_cancel(batch=self.get_object(), by=Actor.of_request(request))
        return Response(self.get_serializer(batch).data)

    @extend_schema(
        parameters=[OpenApiParameter("format", str, description="Comma-separated export formats, e.g. txt,pdf")],
        responses={(200, "application/zip"): OpenApiTypes.BINARY, 202: OpenApiResponse(ERROR, description=(
            "Over OCR_EXPORT_INLINE_MAX_PAGES pages in all: a worker is building the ZIP; ask again after "
            "`Retry-After` seconds.")), 400: ERROR, 404: ERROR})
    @action(detail=True, methods=["get"], url_path=r"export\.zip", url_name="export-zip",
            content_negotiation_class=ExportFormatsNotRenderers)
    def export_zip(self, request, pk=None):
        batch = self.get_object()
        formats = batch_export_formats(request.query_params.get("format", "txt"))
        filename = f"{batch.name.rsplit('.', 1)[0] or 'batch'}.zip"
        if batch_export_is_inline(batch):
            batch_export_served(batch=batch, formats=formats, by=Actor.of_request(request))
            response = HttpResponse(batch_export_zip(batch, formats), content_type="application/zip")
            response["Content-Disposition"] = content_disposition_header(True, filename)
            return response
        name = batch_export_file(batch, formats)
        if name is None:
            return Response({"code": "export_pending", "detail": "A worker is building this batch's ZIP; "
                             "ask again in a few seconds."},
                            status=status.HTTP_202_ACCEPTED, headers={"Retry-After": "5"})
        batch_export_served(batch=batch, formats=formats, by=Actor.of_request(request))
        return stored_download(request, name, content_type="application/zip", filename=filename)
