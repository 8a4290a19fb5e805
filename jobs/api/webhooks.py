"""Webhooks over the API: a job's delivery log (one entry per attempt), and the signing secret."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs.models import Job, WebhookDelivery
from jobs.services.accounts import webhook_secret_rotate
from jobs.webhooks.selectors import webhook_delivery_list_for_job


class WebhookDeliverySerializer(serializers.ModelSerializer):
    class Meta:
        model = WebhookDelivery
        fields = [
            "id", "delivery_id", "event", "url", "attempt", "status", "response_status", "error",
            "created_at", "attempted_at", "next_attempt_at", "delivered_at", "payload",
        ]
        read_only_fields = fields


class JobWebhookDeliveryList(generics.ListAPIView):
    """Attempts oldest first. ``failed`` with ``next_attempt_at`` set: a retry is scheduled; without: gave up."""

    serializer_class = WebhookDeliverySerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no user
            return WebhookDelivery.objects.none()
        try:
            return webhook_delivery_list_for_job(self.request.user, self.kwargs["pk"])
        except Job.DoesNotExist:
            raise Http404 from None


class WebhookSecretView(APIView):
    """POST /api/v1/webhook-secret: a new signing secret for the caller's webhooks, shown this once."""

    @extend_schema(request=None, responses={201: OpenApiTypes.OBJECT})
    def post(self, request):
        secret = webhook_secret_rotate(user=request.user)
        return Response({"webhook_secret": secret, "signature_header": "X-OCR-Signature"},
                        status=status.HTTP_201_CREATED)
