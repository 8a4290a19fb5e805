"""GET /api/v1/jobs/{id}/webhooks: the job's webhook delivery log, one entry per attempt (read-only)."""

from __future__ import annotations

from django.http import Http404
from rest_framework import generics, serializers

from jobs.models import Job, WebhookDelivery
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
