"""GET /audit: the audit log of the user's own jobs, newest first (DRF's page-number pagination)."""

from __future__ import annotations

from rest_framework import generics, serializers

from jobs.models import AuditEntry


class AuditEntrySerializer(serializers.ModelSerializer):
    class Meta:
        model = AuditEntry
        fields = ["action", "job", "actor", "at", "address"]
        read_only_fields = fields


class AuditLogView(generics.ListAPIView):
    """What was done to the user's jobs, by whom (``user:<name>``, ``admin:<name>``, ``retention``), when and
    from which address; entries of deleted jobs stay. Other users' entries are in the admin only."""

    serializer_class = AuditEntrySerializer

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):  # schema generation: no user
            return AuditEntry.objects.none()
        return AuditEntry.objects.filter(owner=self.request.user.pk)
