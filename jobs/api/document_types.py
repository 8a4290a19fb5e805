"""A user's document types and a job's type: ``/api/v1/document-types`` and ``PUT /api/v1/jobs/{id}/document-type``.

Thin: a serializer checks form, a service (``jobs.services.document_types``, ``jobs.services.job_types``)
checks meaning. Types belong to their user: another user's type answers 404 like a missing one.
"""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs import selectors
from jobs.api.views import ERROR
from jobs.models import DocumentType, Job
from jobs.services import document_types
from jobs.services.job_types import job_type_set


class DocumentTypeSerializer(serializers.ModelSerializer):
    class Meta:
        model = DocumentType
        fields = ["id", "name", "match", "matching_algorithm", "fields_schema", "backend", "created_at", "updated_at"]
        read_only_fields = ["id", "created_at", "updated_at"]
        extra_kwargs = {"fields_schema": {"required": False, "help_text": (
            "a JSON Schema of an object: the fields to read (docs/extraction.md); {} for a type read for no fields")}}


class DocumentTypeViewSet(viewsets.ViewSet):
    """POST/GET /document-types, GET/PATCH/DELETE /document-types/{id}."""

    serializer_class = DocumentTypeSerializer
    queryset = DocumentType.objects.none()  # only for the API schema (the type of {id}); reads are the owner's
    lookup_value_regex = r"[0-9]+"

    def _get(self, request, pk) -> DocumentType:
        try:
            return document_types.document_type_get(owner=request.user, pk=int(pk))
        except (DocumentType.DoesNotExist, ValueError):
            raise Http404 from None

    @extend_schema(responses={200: DocumentTypeSerializer(many=True)})
    def list(self, request):
        return Response(DocumentTypeSerializer(document_types.document_type_list(owner=request.user), many=True).data)

    @extend_schema(request=DocumentTypeSerializer, responses={201: DocumentTypeSerializer, 400: ERROR})
    def create(self, request):
        form = DocumentTypeSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        created = document_types.document_type_create(owner=request.user, **form.validated_data)
        return Response(DocumentTypeSerializer(created).data, status=status.HTTP_201_CREATED)

    @extend_schema(responses={200: DocumentTypeSerializer, 404: ERROR})
    def retrieve(self, request, pk=None):
        return Response(DocumentTypeSerializer(self._get(request, pk)).data)

    @extend_schema(request=DocumentTypeSerializer, responses={200: DocumentTypeSerializer, 400: ERROR, 404: ERROR})
    def partial_update(self, request, pk=None):
        document_type = self._get(request, pk)
        form = DocumentTypeSerializer(document_type, data=request.data, partial=True)
        form.is_valid(raise_exception=True)
        changed = document_types.document_type_update(document_type=document_type, **form.validated_data)
        return Response(DocumentTypeSerializer(changed).data)

    @extend_schema(responses={204: None, 404: ERROR})
    def destroy(self, request, pk=None):
        document_types.document_type_delete(document_type=self._get(request, pk))
        return Response(status=status.HTTP_204_NO_CONTENT)


class JobDocumentTypeSerializer(serializers.Serializer):
    document_type = serializers.CharField(max_length=128, help_text="the id or the name of one of your types")


class JobDocumentTypeView(APIView):
    """PUT /jobs/{id}/document-type: a reviewer gives the job its type; its fields are read again, and the
    job becomes training data of the owner's learned classifier."""

    @extend_schema(request=JobDocumentTypeSerializer, responses={200: JobDocumentTypeSerializer, 400: ERROR,
                                                                  404: ERROR})
    def put(self, request, pk):
        try:
            job = selectors.job_get_for_user(request.user, pk, for_change=True)
        except Job.DoesNotExist:
            raise Http404 from None
        form = JobDocumentTypeSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        stage = job_type_set(job=job, ref=form.validated_data["document_type"])
        return Response({"document_type": {"id": stage.document_type_id, "name": stage.document_type.name,
                                           "source": stage.type_source, "confidence": stage.type_confidence},
                         "status": stage.status})
