"""Review edit endpoints: lines retyped, drawn, moved, split, merged, deleted; regions retyped and reordered; undo.

Thin: selector, one service (jobs.services.page_edits), one answer. Every edit, whichever row
it is stored in (a ``LineCorrection`` or a ``PageEdit``), answers ``_answer``'s shape
(docs/review.md, "What an edit answers"): the corrected page as GET /jobs/{id}/pages/{n}?raw=false
shows it, plus ``correction`` (the change made, or null when nothing is stored) and ``line`` (the
line the edit was made on, as the page now shows it, or null). A split adds ``new_line_id``.
"""

from __future__ import annotations

from django.db.models import prefetch_related_objects
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from jobs import selectors
from jobs.api.serializers import PageSerializer
from jobs.api.views import ERROR
from jobs.models import Job, LineCorrection, PageEdit, PageResult
from jobs.reread import read_polygon
from jobs.services import page_edits
from jobs.services.audit import client_address
from jobs.services.review import LINE_TEXT

ANSWER = OpenApiResponse(OpenApiTypes.OBJECT, description=(
    "The corrected page as GET …/pages/{n}?raw=false shows it, plus `correction` ({id, kind, made_by, made_at, "
    "undone_at}, or null) and `line` (the edited line, or null); a split adds `new_line_id`. See docs/review.md."))
RESPONSES = {200: ANSWER, 400: ERROR, 404: ERROR, 409: ERROR, 503: ERROR}


class PolygonField(serializers.ListField):
    def __init__(self, **kwargs):
        point = serializers.ListField(child=serializers.FloatField(), min_length=2, max_length=2)
        super().__init__(child=point, min_length=3, max_length=64, **kwargs)


class LineCreateSerializer(serializers.Serializer):
    polygon = PolygonField()
    text = serializers.CharField(allow_blank=True, trim_whitespace=False, max_length=5000, required=False)
    region_id = serializers.CharField(max_length=32, required=False)

    def validate_text(self, value: str) -> str:
        if any(ch in value for ch in "\r\n\f\v"):
            raise serializers.ValidationError("A line's text cannot contain line breaks.")
        return value


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


def _correction(change: PageEdit | LineCorrection | None) -> dict | None:
    """The change an edit made, alike for both stores. Only a ``PageEdit`` has an id to undo; a retype of an
    engine line (a ``LineCorrection``, kind ``line_text``) is undone by retyping the engine's text."""
    if isinstance(change, PageEdit):
        pk, kind, by, at, undone = change.pk, change.kind, change.made_by, change.made_at, change.undone_at
    elif isinstance(change, LineCorrection):
        pk, kind, by, at, undone = None, LINE_TEXT, change.corrected_by, change.corrected_at, None
    else:
        return None  # the line is back to the engine's text: nothing is stored
    return {"id": pk, "kind": kind, "made_by": by.get_username() if by else None, "made_at": at, "undone_at": undone}


def _answer(request, page: PageResult, change: PageEdit | LineCorrection | None, line_id: str | None,
            status: int = 200) -> Response:
    """What every edit answers (docs/review.md): the page, ``correction`` and ``line`` (null when it is gone)."""
    page.refresh_from_db()  # drops the prefetched corrections and edits, which this change made stale
    prefetch_related_objects([page], "corrections__corrected_by", "edits")
    body = PageSerializer(page, context={"request": request, "with_raw": False}).data  # raw never changes
    body["correction"] = _correction(change)
    lines = body["normalized"]["lines"] if body["normalized"] else []
    body["line"] = next((line for line in lines if line["id"] == line_id), None)
    return Response(body, status=status)


class LineCreateView(APIView):
    """POST /jobs/{id}/pages/{n}/lines {"polygon", "text"?, "region_id"?}: a new line, read by the worker."""

    @extend_schema(request=LineCreateSerializer, responses={201: ANSWER, **RESPONSES})
    def post(self, request, pk, page_number):
        page = _page(request, pk, page_number)
        data = _valid(LineCreateSerializer, request)
        edit, line_id = page_edits.line_create(page=page, user=request.user, read=read_polygon,
                                                address=client_address(request), **data)
        return _answer(request, page, edit, line_id, status=201)


class LineView(APIView):
    """PATCH (polygon, text, region_id) and DELETE /jobs/{id}/pages/{n}/lines/{line_id}."""

    @extend_schema(request=LineChangeSerializer, responses=RESPONSES)
    def patch(self, request, pk, page_number, line_id):
        page = _page(request, pk, page_number)
        data = _valid(LineChangeSerializer, request)
        change = page_edits.line_edit(page=page, line_id=line_id, user=request.user, read=read_polygon,
                                      address=client_address(request), **data)
        return _answer(request, page, change, line_id)

    @extend_schema(request=None, responses=RESPONSES)
    def delete(self, request, pk, page_number, line_id):
        page = _page(request, pk, page_number)
        edit = page_edits.line_delete(page=page, line_id=line_id, user=request.user,
                                      address=client_address(request))
        return _answer(request, page, edit, line_id)  # gone: ``line`` is null


class LineSplitView(APIView):
    """POST /jobs/{id}/pages/{n}/lines/{line_id}/split {"at": x in page pixels}."""

    @extend_schema(request=SplitSerializer, responses=RESPONSES)
    def post(self, request, pk, page_number, line_id):
        page = _page(request, pk, page_number)
        at = _valid(SplitSerializer, request)["at"]
        edit, new_id = page_edits.line_split(page=page, line_id=line_id, at=at, user=request.user,
                                              address=client_address(request))
        response = _answer(request, page, edit, line_id)
        response.data["new_line_id"] = new_id
        return response


class LineMergeView(APIView):
    """POST /jobs/{id}/pages/{n}/lines/merge {"line_ids": [...]}: the lines as one (the first's id)."""

    @extend_schema(request=MergeSerializer, responses=RESPONSES)
    def post(self, request, pk, page_number):
        page = _page(request, pk, page_number)
        line_ids = _valid(MergeSerializer, request)["line_ids"]
        edit = page_edits.line_merge(page=page, line_ids=line_ids, user=request.user,
                                     address=client_address(request))
        return _answer(request, page, edit, page_edits.edited_line_id(edit))


class RegionView(APIView):
    """PATCH /jobs/{id}/pages/{n}/regions/{region_id} {"type"?, "order"?}."""

    @extend_schema(request=RegionChangeSerializer, responses=RESPONSES)
    def patch(self, request, pk, page_number, region_id):
        page = _page(request, pk, page_number)
        data = _valid(RegionChangeSerializer, request)
        edit = page_edits.region_change(page=page, region_id=region_id, user=request.user,
                                        address=client_address(request), **data)
        return _answer(request, page, edit, None)


class CorrectionUndoView(APIView):
    """POST /jobs/{id}/corrections/{correction_id}/undo: the page without that edit; ``line`` is its line, if any."""

    @extend_schema(request=None, responses=RESPONSES)
    def post(self, request, pk, correction_id):
        try:
            job = selectors.job_get_for_user(request.user, pk, for_change=True)
            edit = PageEdit.objects.select_related("page", "made_by").get(page__job=job, pk=correction_id)
        except (Job.DoesNotExist, PageEdit.DoesNotExist):
            raise Http404 from None
        edit = page_edits.page_edit_undo(edit=edit, user=request.user, address=client_address(request))
        return _answer(request, _page(request, pk, edit.page.page_number), edit, page_edits.edited_line_id(edit))
