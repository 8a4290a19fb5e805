"""A job's fields: ``GET /api/v1/jobs/{id}/fields`` and ``PATCH /api/v1/jobs/{id}/fields/{name}``; as files,
``GET /api/v1/jobs/{id}/fields.json`` and ``fields.csv`` (jobs.services.fields_exports).

Thin: selector, one service (jobs.services.field_corrections), one answer: the job's fields as
``jobs.selectors.fields`` reads them (docs/extraction.md).
"""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs import selectors
from jobs.api.views import ERROR
from jobs.models import Job
from jobs.selectors.fields import job_fields
from jobs.services.audit import client_address
from jobs.services.audit import Actor
from jobs.services.exports import export_served
from jobs.services.field_corrections import UNCHANGED, job_field_correct
from jobs.services.fields_exports import FIELDS_FORMATS, fields_file_name, job_fields_file

ANSWER = OpenApiResponse(OpenApiTypes.OBJECT, description=(
    '`{"document_type": {"name", "source", "confidence"} | null, "status": "pending" | "succeeded" | "failed" | '
    '"skipped", "error": {"code", "detail"} | null, "fields": {"<name>": {"value", "confidence", "grounded", '
    '"reason", "evidence": [{"page", "line_id", "polygon"}]}}}`; an array field holds a list of objects of such '
    'fields; a corrected field adds `corrected: {by, at}`. See docs/extraction.md.'))


class EvidenceSerializer(serializers.Serializer):
    line_id = serializers.CharField(max_length=64)
    page = serializers.IntegerField(required=False, min_value=1)  # the line id names its page already


class FieldCorrectionSerializer(serializers.Serializer):
    """A value (JSON of the field's kind, or null: the document has none) and/or the lines it stands on."""

    value = serializers.JSONField(required=False, allow_null=True)
    evidence = EvidenceSerializer(many=True, required=False, max_length=50)

    def validate(self, attrs):
        if "value" not in attrs and "evidence" not in attrs:
            raise serializers.ValidationError("Give a value, evidence, or both.")
        return attrs


def _job(request, pk, *, for_change: bool = False) -> Job:
    try:
        return selectors.job_get_for_user(request.user, pk, for_change=for_change)
    except Job.DoesNotExist:
        raise Http404 from None


class JobFieldsView(APIView):
    """GET /jobs/{id}/fields: the job's document type, the fields stage's state and its fields."""

    @extend_schema(responses={200: ANSWER, 404: ERROR})
    def get(self, request, pk):
        return Response(job_fields(_job(request, pk)))


class JobFieldView(APIView):
    """PATCH /jobs/{id}/fields/{name}: a reviewer corrects one field (``line_items.0.amount`` in an array)."""

    @extend_schema(request=FieldCorrectionSerializer, responses={200: ANSWER, 400: ERROR, 404: ERROR, 409: ERROR})
    def patch(self, request, pk, name):
        job = _job(request, pk, for_change=True)
        form = FieldCorrectionSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        evidence = data.get("evidence")
        job_field_correct(job=job, name=name, user=request.user, value=data.get("value", UNCHANGED),
                          line_ids=None if evidence is None else [e["line_id"] for e in evidence],
                          address=client_address(request))
        return Response(job_fields(job))


class JobFieldsFileView(APIView):
    """GET /jobs/{id}/fields.json or fields.csv: the job's fields as a download, named after its file."""

    @extend_schema(operation_id="jobs_fields_file", responses={
        (200, "application/json"): OpenApiTypes.OBJECT, (200, "text/csv"): OpenApiTypes.STR, 404: ERROR})
    def get(self, request, pk, fmt):
        job = _job(request, pk)
        response = HttpResponse(job_fields_file(job, fmt), content_type=FIELDS_FORMATS[fmt])
        export_served(job=job, fmt=fmt, by=Actor.of_request(request))
        response["Content-Disposition"] = content_disposition_header(True, fields_file_name(job, fmt))
        return response
