"""Corrections as training data: the recognition training ZIP and the engine-vs-reviewer CER report."""

from __future__ import annotations

from datetime import datetime, time

from django.http import Http404, StreamingHttpResponse
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs import selectors
from jobs.api.streaming import stream_for
from jobs.api.views import ERROR
from jobs.models import Job
from jobs.services.training_set import cer_report, training_zip_chunks
from ocr_engine.errors import InputError


def parse_since(value: str | None) -> datetime | None:
    """ISO date or date-time; a date means its midnight, a naive time the server's zone."""
    if not value:
        return None
    moment = parse_datetime(value)
    if moment is None and (day := parse_date(value)) is not None:
        moment = datetime.combine(day, time.min)
    if moment is None:
        raise InputError(f"since must be an ISO date or date-time, got {value!r}.")
    return timezone.make_aware(moment) if timezone.is_naive(moment) else moment


class TrainingSetView(APIView):
    """GET /training-set?since=…: ZIP of corrected line crops, rec_gt.txt and engine_reading.txt, streamed."""

    @extend_schema(parameters=[OpenApiParameter("since", str, description="ISO date or date-time")],
                   responses={(200, "application/zip"): OpenApiTypes.BINARY, 400: ERROR})
    def get(self, request):
        chunks = training_zip_chunks(request.user, parse_since(request.query_params.get("since")))
        response = StreamingHttpResponse(stream_for(request, chunks), content_type="application/zip")
        response["Content-Disposition"] = 'attachment; filename="training-set.zip"'
        return response


class CerReportView(APIView):
    """GET /cer: the engine's character error rate against reviewers' corrections, per job and overall."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        return Response(cer_report(request.user))


class JobCerView(APIView):
    """GET /jobs/{id}/cer: the same report for one job."""

    @extend_schema(responses={200: OpenApiTypes.OBJECT, 404: ERROR})
    def get(self, request, pk):
        try:
            job = selectors.job_get_for_user(request.user, pk)
        except Job.DoesNotExist:
            raise Http404 from None
        return Response(cer_report(request.user, job)["jobs"][str(job.pk)])
