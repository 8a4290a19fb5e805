"""Review endpoints: mark a job reviewed. Thin: selector, service, serializer.

A line's text is corrected with PATCH …/lines/{id} (jobs.api.page_edits.LineView), answered as every edit is.
"""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs import selectors
from jobs.api.serializers import JobSerializer
from jobs.api.views import ERROR
from jobs.models import Job
from jobs.services.audit import client_address
from jobs.services.review import job_mark_reviewed


class JobReviewedView(APIView):
    """POST /jobs/{id}/reviewed: the job, with reviewed_at and reviewed_by set."""

    @extend_schema(request=None, responses={200: JobSerializer, 404: ERROR, 409: ERROR})
    def post(self, request, pk):
        try:
            job = selectors.job_get_for_user(request.user, pk, for_change=True)
        except Job.DoesNotExist:
            raise Http404 from None
        job = job_mark_reviewed(job=job, user=request.user, address=client_address(request))
        return Response(JobSerializer(job, context={"request": request}).data)
