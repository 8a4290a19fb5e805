"""Geometry review endpoints: lines drawn, moved, split, merged, deleted; regions retyped and reordered; undo.

Thin: selector, one service (jobs.services.page_edits), the page representation.
Every response is the corrected page as GET /jobs/{id}/pages/{n} shows it, plus
the ``correction`` just made (its id undoes it) and, for line edits, the ``line``.
"""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs import selectors
from jobs.api.review import LineCorrectionSerializer, LineCorrectionView
from jobs.api.serializers import PageSerializer
from jobs.api.views import ERROR
from jobs.models import Job, PageEdit, PageResult
from jobs.reread import read_polygon
from jobs.selectors.results import page_with_corrections
from jobs.services import page_edits
from ocr_engine.schema import to_dict

RESPONSES = {200: OpenApiTypes.OBJECT, 400: ERROR, 404: ERROR, 409: ERROR, 503: ERROR}


class PolygonField(serializers.ListField):
    def __init__(self, **kwargs):
        point = serializers.ListField(child=serializers.FloatField(), min_length=2, max_length=2)
        super().__init__(child=point, min_length=3, max_length=64, **kwargs)


class LineCreateSerializer(serializers.Serializer):
    polygon = PolygonField()
    text = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=5000, required=False)
    region_id = serializers.CharField(max_length=32, required=False)

    validate_text = LineCorrectionSerializer.validate_text


class LineChangeSerializer(LineCreateSerializer):
    polygon = PolygonField(required=False)

    def validate(self, attrs):
        if not attrs:
            raise serializers.ValidationError("Give at least one of polygon, text, region_id.")
        return attrs


class SplitSerializer(serializers.Serializer):
    at = serializers.FloatField()


class MergeSerializer(serializers.Serializer):
    line_ids = serializers.ListField(child=serializers.CharField(max_length=32), min_length=2, max_length=50)


class RegionChangeSerializer(serializers.Serializer):
    type = serializers.CharField(max_length=32, required=False)
    order = serializers.IntegerField(min_value=1, required=False)


def _page(request, pk, page_number) -> PageResult:
    try:
        return selectors.page_get_for_user(request.user, pk, page_number, for_change=True)  # every use edits
    except PageResult.DoesNotExist:
        raise Http404 from None


def _valid(serializer_class, request) -> dict:
    form = serializer_class(data=request.data)
    form.is_valid(raise_exception=True)
    return form.validated_data


def _edited(request, page: PageResult, edit: PageEdit, line_id: str | None = None, status: int = 200) -> Response:
    page.refresh_from_db()  # drops the prefetched edits
    body = PageSerializer(page, context={"request": request}).data
    body["correction"] = {
        "id": edit.pk, "kind": edit.kind, "made_by": edit.made_by.get_username() if edit.made_by else None,
        "made_at": edit.made_at, "undone_at": edit.undone_at,
    }
    if line_id is not None:
        line = next((line for line in page_with_corrections(page).lines if line.id == line_id), None)
        body["line"] = to_dict(line) if line is not None else None
    return Response(body, status=status)


class LineCreateView(APIView):
    """POST /jobs/{id}/pages/{n}/lines {"polygon", "text"?, "region_id"?}: a new line, read by the worker."""

    @extend_schema(request=LineCreateSerializer, responses={201: OpenApiTypes.OBJECT, **RESPONSES})
    def post(self, request, pk, page_number):
        page = _page(request, pk, page_number)
        data = _valid(LineCreateSerializer, request)
        edit, line_id = page_edits.line_create(page=page, user=request.user, read=read_polygon, **data)
        return _edited(request, page, edit, line_id, status=201)


class LineView(LineCorrectionView):
    """PATCH (polygon, text, region_id) and DELETE /jobs/{id}/pages/{n}/lines/{line_id}."""

    @extend_schema(request=LineChangeSerializer, responses=RESPONSES)
    def patch(self, request, pk, page_number, line_id):
        page = _page(request, pk, page_number)
        data = _valid(LineChangeSerializer, request)
        engine_line = any(line["id"] == line_id for line in page.normalized and page.normalized["lines"] or [])
        if set(data) == {"text"} and engine_line and not page.edits.exists():
            return super().patch(request, pk, page_number, line_id)  # a plain retype: a LineCorrection
        edit = page_edits.line_change(page=page, line_id=line_id, user=request.user, read=read_polygon, **data)
        return _edited(request, page, edit, line_id)

    @extend_schema(request=None, responses=RESPONSES)
    def delete(self, request, pk, page_number, line_id):
        page = _page(request, pk, page_number)
        edit = page_edits.line_delete(page=page, line_id=line_id, user=request.user)
        return _edited(request, page, edit)


class LineSplitView(APIView):
    """POST /jobs/{id}/pages/{n}/lines/{line_id}/split {"at": x in page pixels}."""

    @extend_schema(request=SplitSerializer, responses=RESPONSES)
    def post(self, request, pk, page_number, line_id):
        page = _page(request, pk, page_number)
        at = _valid(SplitSerializer, request)["at"]
        edit, new_id = page_edits.line_split(page=page, line_id=line_id, at=at, user=request.user)
        response = _edited(request, page, edit, line_id)
        response.data["new_line_id"] = new_id
        return response


class LineMergeView(APIView):
    """POST /jobs/{id}/pages/{n}/lines/merge {"line_ids": [...]}: the lines as one (the first's id)."""

    @extend_schema(request=MergeSerializer, responses=RESPONSES)
    def post(self, request, pk, page_number):
        page = _page(request, pk, page_number)
        line_ids = _valid(MergeSerializer, request)["line_ids"]
        edit = page_edits.line_merge(page=page, line_ids=line_ids, user=request.user)
        return _edited(request, page, edit, edit.payload["line_ids"][0])


class RegionView(APIView):
    """PATCH /jobs/{id}/pages/{n}/regions/{region_id} {"type"?, "order"?}."""

    @extend_schema(request=RegionChangeSerializer, responses=RESPONSES)
    def patch(self, request, pk, page_number, region_id):
        page = _page(request, pk, page_number)
        data = _valid(RegionChangeSerializer, request)
        edit = page_edits.region_change(page=page, region_id=region_id, user=request.user, **data)
        return _edited(request, page, edit)


class CorrectionUndoView(APIView):
    """POST /jobs/{id}/corrections/{correction_id}/undo: the page without that edit."""

    @extend_schema(request=None, responses=RESPONSES)
    def post(self, request, pk, correction_id):
        try:
            job = selectors.job_get_for_user(request.user, pk, for_change=True)
            edit = PageEdit.objects.select_related("page", "made_by").get(page__job=job, pk=correction_id)
        except (Job.DoesNotExist, PageEdit.DoesNotExist):
            raise Http404 from None
        edit = page_edits.page_edit_undo(edit=edit)
        return _edited(request, _page(request, pk, edit.page.page_number), edit)
