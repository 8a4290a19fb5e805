"""GET /review-queue: pages still to review across the user's jobs, worst first."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs.selectors.review_queue import review_queue

ORDERS = ("confidence", "open")


class ReviewQueueView(APIView):
    """Pages of jobs not yet marked reviewed: ``order=confidence`` (lowest mean first, default) or
    ``order=open`` (most low-confidence lines no reviewer has touched first)."""

    @extend_schema(parameters=[OpenApiParameter("order", str, enum=ORDERS)], responses={200: OpenApiTypes.OBJECT})
    def get(self, request):
        order = request.query_params.get("order", "confidence")
        if order not in ORDERS:
            return Response({"code": "invalid_request", "detail": f"order must be one of {', '.join(ORDERS)}."},
                            status=400)
        return Response({"order": order, "pages": review_queue(request.user, order=order)})
