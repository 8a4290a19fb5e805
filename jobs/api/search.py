"""GET /search?q=…[&job=…][&page=…][&p=…]: the user's own lines that match, best first, 50 a page.

Thin: the query's terms (jobs.selectors.search), the matching lines, one answer per line. ``page``
names a page of the documents (as everywhere in this API), so the answer's pages are ``p``.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.generics import GenericAPIView
from rest_framework.pagination import PageNumberPagination

from jobs.api.serializers import ApiUrls
from jobs.api.views import ERROR
from jobs.models import SearchLine
from jobs.selectors.search import parse_query, search_lines, snippet


class SearchFilterSerializer(serializers.Serializer):
    """Query parameters of GET /search."""

    q = serializers.CharField(max_length=500, help_text='Words (all must be there), "a phrase", prefix*.')
    job = serializers.UUIDField(required=False, help_text="Only this job's lines.")
    page = serializers.IntegerField(min_value=1, required=False, help_text="Only lines on this page number.")

    def validate_q(self, value: str):
        terms = parse_query(value)
        if not terms:
            raise serializers.ValidationError("The query has no words to search for.")
        return terms


class SearchPagination(PageNumberPagination):
    page_query_param = "p"  # ``page`` filters by the documents' page number


class SearchResultSerializer(serializers.ModelSerializer):
    """One matching line: where it is, how sure the engine was, its text as corrected, the text with the
    query's words marked."""

    job = serializers.UUIDField(source="job_id")
    page = serializers.IntegerField(source="page_number")
    snippet = serializers.SerializerMethodField(help_text="HTML-escaped text, matching words in <mark>.")
    links = serializers.SerializerMethodField()

    class Meta:
        model = SearchLine
        fields = ["job", "page", "line_id", "polygon", "confidence", "region_type", "text", "snippet", "links"]

    def get_snippet(self, line: SearchLine) -> str:
        return snippet(line.text, self.context["terms"])

    def get_links(self, line: SearchLine) -> dict:
        urls: ApiUrls = self.context["urls"]
        review = reverse("web:job", kwargs={"job_id": line.job_id})
        return {
            "review": f"{review}?{urlencode({'page': line.page_number, 'line': line.line_id})}",
            "job": urls.url("job-detail", pk=line.job_id),
            "page": urls.url("job-page", pk=line.job_id, page_number=line.page_number),
        }


class SearchView(GenericAPIView):
    """Full-text search over the user's own results (docs/review.md, "Search")."""

    pagination_class = SearchPagination

    @extend_schema(parameters=[SearchFilterSerializer], responses={200: SearchResultSerializer(many=True), 400: ERROR})
    def get(self, request):
        form = SearchFilterSerializer(data=request.query_params)
        form.is_valid(raise_exception=True)
        terms = form.validated_data["q"]
        lines = search_lines(request.user, terms, job_id=form.validated_data.get("job"),
                             page_number=form.validated_data.get("page"))
        context = {"terms": terms, "urls": ApiUrls.of(request)}
        return self.get_paginated_response(
            SearchResultSerializer(self.paginate_queryset(lines), many=True, context=context).data)
