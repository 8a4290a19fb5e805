"""REST API v1: declarative views over selectors and services; no business logic here."""

from __future__ import annotations

from django.conf import settings
from django.http import FileResponse, Http404, HttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import SAFE_METHODS
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs import selectors, services
from jobs.services.audit import Actor
from jobs.services.exports import export_file, export_is_inline, export_kind, export_served
from jobs.services.storage import stored_head
from jobs.selectors import results
from jobs.engines.config import available_languages, models_dir
from jobs.api.serializers import (
    ApiUrls,
    JobCreateSerializer,
    JobFilterSerializer,
    JobSerializer,
    JobWaitSerializer,
    PageSerializer,
)
from jobs.api.parsers import JSONParser
from jobs.api.streaming import stored_download
from jobs.api.throttles import SubmitRateThrottle
from jobs.models import Job, PageResult
from jobs.queue import cluster_for
from ocr_engine import exports, pipelines
from ocr_engine.config import DEFAULT_LANG, DEFAULT_PIPELINE

ERROR = inline_serializer("Error", {"code": serializers.CharField(), "detail": serializers.CharField()})


class JobViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = JobSerializer
    parser_classes = [MultiPartParser, FormParser, JSONParser]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no user
            return Job.objects.none()
        if self.action != "list":
            return selectors.job_list_for_user(self.request.user)
        filters = JobFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return selectors.job_list_for_user(self.request.user, filters.validated_data)

    def get_throttles(self):
        throttles = super().get_throttles()
        return [*throttles, SubmitRateThrottle()] if self.action == "create" else throttles

    def get_object(self) -> Job:
        try:
            return selectors.job_get_for_user(self.request.user, self.kwargs["pk"],
                                              for_change=self.request.method not in SAFE_METHODS)
        except Job.DoesNotExist:
            raise Http404 from None

    @extend_schema(parameters=[JobFilterSerializer])
    def list(self, request, *args, **kwargs):
        page = self.paginate_queryset(self.get_queryset())
        jobs = selectors.job_list_with_queue_positions(page)
        return self.get_paginated_response(self.get_serializer(jobs, many=True).data)

    @extend_schema(parameters=[JobWaitSerializer], responses={200: JobSerializer, 400: ERROR, 404: ERROR})
    def retrieve(self, request, *args, **kwargs):
        options = JobWaitSerializer(data=request.query_params)
        options.is_valid(raise_exception=True)
        job = self.get_object()
        if options.validated_data["wait"]:
            try:
                job = services.job_wait(job=job, seconds=options.validated_data["wait"])
            except Job.DoesNotExist:  # deleted while it was awaited
                raise Http404 from None
        return Response(self.get_serializer(job).data)

    @extend_schema(
        request={"multipart/form-data": JobCreateSerializer, "application/json": JobCreateSerializer},
        responses={202: JobSerializer, 200: JobSerializer, 400: ERROR, 413: ERROR, 415: ERROR, 422: ERROR},
        description="Queue a job. 202 with the new job and a Location header; 200 with `reused: true` "
        "when the same file and options were submitted within the dedup window. A `file_url` is checked here "
        "(http(s), no credentials, public addresses) and downloaded by a worker: the job's pages are known, "
        "and a download or file error fails the job, after that.",
    )
    def create(self, request, *args, **kwargs):
        form = JobCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        options = form.options()
        if data.get("file"):
            job, reused = services.job_create(owner=request.user, file=data["file"], filename=data["file"].name,
                                              options=options)
        else:
            job, reused = services.job_create_from_url(owner=request.user, file_url=data["file_url"], options=options)
        body = {**self.get_serializer(job).data, "reused": reused}
        location = body["links"]["self"]
        return Response(body, status=status.HTTP_200_OK if reused else status.HTTP_202_ACCEPTED,
                        headers={"Location": location})

    @extend_schema(responses={204: None, 404: ERROR})
    def destroy(self, request, *args, **kwargs):
        services.job_delete(job=self.get_object(), by=Actor.of_request(request))
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(request=None, responses={200: JobSerializer, 409: ERROR})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        job = services.job_cancel(job=self.get_object(), by=Actor.of_request(request))
        return Response(self.get_serializer(job).data)

    @extend_schema(request=None, responses={202: JobSerializer, 409: ERROR})
    @action(detail=True, methods=["post"])
    def retry(self, request, pk=None):
        job = services.job_retry(job=self.get_object(), by=Actor.of_request(request))
        return Response(self.get_serializer(job).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description=(
        "`inline: true` with the normalized DocumentResult in `result` when it is at most "
        "OCR_INLINE_RESULT_MAX_BYTES; otherwise `inline: false` with links to the pages and the download."))})
    @action(detail=True, methods=["get"])
    def result(self, request, pk=None):
        job = self.get_object()
        data, size = results.job_result_inline(job, settings.OCR_INLINE_RESULT_MAX_BYTES)
        body = {"id": str(job.id), "status": job.status, "complete": job.status == Job.Status.SUCCEEDED,
                "size_bytes": size}
        if data is not None:
            return Response({**body, "inline": True, "result": data})
        pages = job.pages.filter(status=PageResult.Status.SUCCEEDED).values_list("page_number", flat=True)
        urls = ApiUrls.of(request)
        return Response({
            **body, "inline": False,
            "download": urls.url("job-result-json", pk=job.pk),
            "pages": [urls.url("job-page", pk=job.pk, page_number=n) for n in pages],
        })

    @extend_schema(responses={(200, "application/json"): OpenApiTypes.OBJECT})
    @action(detail=True, methods=["get"], url_path=r"result\.json", url_name="result-json")
    def result_json(self, request, pk=None):
        job = self.get_object()
        if not export_is_inline(job):
            return self._worker_export(request, job, "json", filename=f"{job.id}.json")
        response = HttpResponse(results.job_result_json(job), content_type="application/json")
        export_served(job=job, fmt="json", by=Actor.of_request(request))
        response["Content-Disposition"] = content_disposition_header(True, f"{job.id}.json")
        return response

    # [*...], not list(...): in this class body "list" is the viewset's list action.
    @extend_schema(parameters=[OpenApiParameter("pdfa", str, enum=[*exports.PDFA_LEVELS], description=(
        "export.pdf only: `2b` makes the searchable PDF a PDF/A-2b file (embedded fonts, sRGB output intent, "
        "XMP metadata), keeping born-digital pages as they were uploaded; another value is a 400 "
        "`unsupported_option`."))],
        responses={200: OpenApiTypes.BINARY, 202: OpenApiResponse(ERROR, description=(
            "A job over OCR_EXPORT_INLINE_MAX_PAGES pages: a worker is building the export; ask again after "
            "`Retry-After` seconds.")), 400: ERROR, 404: ERROR})
    @action(detail=True, methods=["get"], url_path=r"export\.(?P<fmt>[a-z]+)", url_name="export")
    def export(self, request, pk=None, fmt=None):
        job = self.get_object()
        pdfa = request.query_params.get("pdfa")
        exports.check_options(fmt, pdfa)  # a 400 before any work, inline or queued
        if not export_is_inline(job):
            return self._worker_export(request, job, fmt, pdfa=pdfa)
        content, media_type, filename = results.job_export(job, fmt, pdfa=pdfa)
        export_served(job=job, fmt=export_kind(fmt, pdfa), by=Actor.of_request(request))
        response = HttpResponse(content, content_type=media_type)
        # RFC 6266 encoding: a user's file name with quotes, semicolons or non-ASCII
        # characters cannot add parameters to the header.
        response["Content-Disposition"] = content_disposition_header(True, filename)
        return response

    @staticmethod
    def _worker_export(request, job: Job, fmt: str, filename: str | None = None, pdfa: str | None = None):
        """A long job's export, built by a worker and streamed from storage; 202 while it is being built."""
        name = export_file(job, fmt, pdfa=pdfa)
        if name is None:
            return Response({"code": "export_pending", "detail": f"A worker is building the {fmt} export of this "
                             f"job's {job.pages_done} pages; ask again in a few seconds."},
                            status=status.HTTP_202_ACCEPTED, headers={"Retry-After": "5"})
        export_served(job=job, fmt=export_kind(fmt, pdfa), by=Actor.of_request(request))
        # Only a PAGE export's first bytes tell its type (one page's XML or a ZIP of pages).
        media_type, download_name = results.export_download(job, fmt, stored_head(name, 2) if fmt == "page" else b"")
        return stored_download(request, name, content_type=media_type, filename=filename or download_name)

    @extend_schema(parameters=[OpenApiParameter("raw", bool, description="false leaves PaddleOCR's raw output out")],
                   responses={200: PageSerializer, 404: ERROR})
    @action(detail=True, methods=["get"], url_path=r"pages/(?P<page_number>\d+)", url_name="page")
    def page(self, request, pk=None, page_number=None):
        with_raw = request.query_params.get("raw", "true").lower() not in ("false", "0", "no")
        context = {"request": request, "with_raw": with_raw}
        return Response(PageSerializer(self._page(page_number), context=context).data)

    @extend_schema(responses={(200, "image/jpeg"): OpenApiTypes.BINARY, 404: ERROR})
    @action(detail=True, methods=["get"], url_path=r"pages/(?P<page_number>\d+)/image", url_name="page-image")
    def page_image(self, request, pk=None, page_number=None):
        return self._file(self._page(page_number).image, "image/jpeg")

    @extend_schema(responses={(200, "image/webp"): OpenApiTypes.BINARY, 404: ERROR})
    @action(detail=True, methods=["get"], url_path=r"pages/(?P<page_number>\d+)/thumbnail",
            url_name="page-thumbnail")
    def page_thumbnail(self, request, pk=None, page_number=None):
        return self._file(self._page(page_number).thumbnail, "image/webp")

    def _page(self, page_number) -> PageResult:
        try:
            return selectors.page_get_for_user(self.request.user, self.kwargs["pk"], int(page_number))
        except PageResult.DoesNotExist:
            raise Http404 from None

    @staticmethod
    def _file(field, content_type: str) -> FileResponse:
        if not field:
            raise Http404
        return FileResponse(field.open("rb"), content_type=content_type)


class LanguagesView(APIView):
    """Languages this server reads (the offline model pack's, or all of PaddleOCR's when online)."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        languages = available_languages()
        return Response({
            "default": DEFAULT_LANG,
            "offline_pack": models_dir() is not None,
            "languages": [{"code": code, "name": name} for code, name in sorted(languages.items())],
        })


class PipelinesView(APIView):
    """The engine's pipelines and where they run; GPU-only ones are available only with a GPU cluster."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        return Response({
            "default": DEFAULT_PIPELINE,
            "pipelines": [
                {"name": p.name, "label": p.label, "needs_gpu": p.needs_gpu, "description": p.label,
                 "cluster": cluster_for(p.name), "available": not p.needs_gpu or settings.OCR_GPU_CLUSTER}
                for p in pipelines.all()
            ],
            "export_formats": list(exports.FORMATS),
        })
