"""Review endpoints: correct a line's text, mark a job reviewed. Thin: selector, service, serializer."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs import selectors
from jobs.api.serializers import JobSerializer
from jobs.api.views import ERROR
from jobs.models import Job, PageResult
from jobs.selectors.results import page_with_corrections
from jobs.services.review import job_mark_reviewed, line_correct
from ocr_engine.schema import to_dict


class LineCorrectionSerializer(serializers.Serializer):
    # Blank is allowed: a reviewer may empty a line the engine made up.
    text = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=5000)

    def validate_text(self, value: str) -> str:
        if any(ch in value for ch in "\r\n\f\v"):
            raise serializers.ValidationError("A line's text cannot contain line breaks.")
        return value


class LineCorrectionView(APIView):
    """PATCH /jobs/{id}/pages/{n}/lines/{line_id} {"text"}: the line as the result now shows it."""

    @extend_schema(request=LineCorrectionSerializer,
                   responses={200: OpenApiTypes.OBJECT, 400: ERROR, 404: ERROR, 409: ERROR})
    def patch(self, request, pk, page_number, line_id):
        try:
            page = selectors.page_get_for_user(request.user, pk, page_number, for_change=True)
        except PageResult.DoesNotExist:
            raise Http404 from None
        form = LineCorrectionSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        correction = line_correct(page=page, line_id=line_id, text=form.validated_data["text"], user=request.user)
        page.refresh_from_db()  # drops the prefetched corrections
        line = next(line for line in page_with_corrections(page).lines if line.id == line_id)
        by = correction.corrected_by if correction else None
        return Response({
            **to_dict(line),
            "corrected_by": by.get_username() if by else None,
            "corrected_at": correction.corrected_at if correction else None,
        })


class JobReviewedView(APIView):
    """POST /jobs/{id}/reviewed: the job, with reviewed_at and reviewed_by set."""

    @extend_schema(request=None, responses={200: JobSerializer, 404: ERROR, 409: ERROR})
    def post(self, request, pk):
        try:
            job = selectors.job_get_for_user(request.user, pk, for_change=True)
        except Job.DoesNotExist:
            raise Http404 from None
        job = job_mark_reviewed(job=job, user=request.user)
        return Response(JobSerializer(job, context={"request": request}).data)
