"""Full-text search (GET /api/v1/search): the user's own lines, as corrected, on PostgreSQL and SQLite."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from jobs import services
from jobs.models import SearchLine
from tests.jobs.factories import JobFactory
from tests.jobs.helpers import page_record

pytestmark = pytest.mark.django_db

SEARCH = "/api/v1/search"
JOBS = "/api/v1/jobs"

PAGES = {
    1: ("Quarterly report", "Revenue grew in spring"),
    2: ("Table of contents", "Appendix"),
    3: ("The invoice total is due", "Signed by the treasurer"),
}


def finished_job(owner, pages=PAGES, lang="en"):
    """A finished job whose pages were stored by the worker's service, each page's lines from ``pages``."""
    job = JobFactory(owner=owner, lang=lang, page_numbers=sorted(pages), pages_total=len(pages))
    services.job_claim(job_id=job.pk, worker_id="w")
    for number, texts in pages.items():
        services.job_record_page(job_id=job.pk, worker_id="w", record=page_record(number, texts=texts))
    return services.job_finish(job_id=job.pk, worker_id="w")


def search(client, q, **params):
    response = client.get(SEARCH, {"q": q, **params})
    assert response.status_code == 200, response.json()
    return response.json()


def test_a_word_on_page_3_is_found_with_its_line_polygon_and_links(api_client, user):
    job = finished_job(user)

    body = search(api_client, "invoice")

    assert (body["count"], body["next"], body["previous"]) == (1, None, None)
    hit = body["results"][0]
    assert (hit["job"], hit["page"], hit["line_id"], hit["region_type"]) == (str(job.pk), 3, "p3-l1", "text")
    assert hit["polygon"] == [[0, 20], [100, 20], [100, 38], [0, 38]]  # the line's, as stored
    assert hit["confidence"] == 0.9  # the recogniser's score of that line (tests.jobs.helpers.schema_page)
    assert hit["text"] == "The invoice total is due"
    assert hit["snippet"] == "The <mark>invoice</mark> total is due"
    assert hit["links"]["review"] == f"/jobs/{job.pk}/?page=3&line=p3-l1"
    assert hit["links"]["job"].endswith(f"{JOBS}/{job.pk}")
    assert hit["links"]["page"].endswith(f"{JOBS}/{job.pk}/pages/3")
    assert api_client.get(hit["links"]["page"]).status_code == 200


def test_phrases_and_prefixes_work_and_every_term_must_match(api_client, user):
    finished_job(user)

    assert [h["line_id"] for h in search(api_client, '"invoice total"')["results"]] == ["p3-l1"]
    assert search(api_client, '"total invoice"')["count"] == 0  # a phrase keeps its order
    assert [h["line_id"] for h in search(api_client, "treas*")["results"]] == ["p3-l2"]
    assert search(api_client, "treas*")["results"][0]["snippet"] == "Signed by the <mark>treasurer</mark>"
    assert [h["line_id"] for h in search(api_client, '"quarterly rep"*')["results"]] == ["p1-l1"]
    assert search(api_client, "REVENUE spring")["count"] == 1  # case-insensitive, all terms on the line
    assert search(api_client, "revenue appendix")["count"] == 0


def test_a_corrected_word_is_found_and_the_word_it_replaced_is_not(api_client, user):
    job = finished_job(user)

    response = api_client.patch(f"{JOBS}/{job.pk}/pages/3/lines/p3-l1", {"text": "The receipt total is due"},
                                format="json")

    assert response.status_code == 200, response.json()
    assert [h["text"] for h in search(api_client, "receipt")["results"]] == ["The receipt total is due"]
    assert search(api_client, "invoice")["count"] == 0


def test_a_retyped_line_keeps_its_confidence_and_a_line_typed_in_a_drawn_box_has_1(api_client, user):
    job = finished_job(user)
    lines = f"{JOBS}/{job.pk}/pages/3/lines"

    retyped = api_client.patch(f"{lines}/p3-l1", {"text": "The receipt total is due"}, format="json")
    drawn = api_client.post(lines, {"polygon": [[0, 0], [50, 0], [50, 15], [0, 15]], "text": "Stamped paid"},
                            format="json")

    assert (retyped.status_code, drawn.status_code) == (200, 201), (retyped.json(), drawn.json())
    assert [h["confidence"] for h in search(api_client, "receipt")["results"]] == [0.9]
    assert [h["confidence"] for h in search(api_client, "stamped")["results"]] == [1.0]


def test_a_geometry_edit_and_its_undo_change_what_is_found(api_client, user):
    job = finished_job(user)

    deleted = api_client.delete(f"{JOBS}/{job.pk}/pages/3/lines/p3-l2")
    assert deleted.status_code == 200, deleted.json()
    assert search(api_client, "treasurer")["count"] == 0

    undone = api_client.post(f"{JOBS}/{job.pk}/corrections/{deleted.json()['correction']['id']}/undo")
    assert undone.status_code == 200, undone.json()
    assert [h["line_id"] for h in search(api_client, "treasurer")["results"]] == ["p3-l2"]


def test_another_users_token_finds_nothing_of_the_first_users_jobs(api_client, other_api_client, user):
    job = finished_job(user)

    assert search(other_api_client, "invoice") == {"count": 0, "next": None, "previous": None, "results": []}
    assert search(other_api_client, "invoice", job=str(job.pk))["count"] == 0
    assert search(api_client, "invoice")["count"] == 1


def test_deleting_a_job_removes_its_lines_from_search(api_client, user):
    job = finished_job(user)
    kept = finished_job(user, pages={1: ("Another invoice",)})

    assert api_client.delete(f"{JOBS}/{job.pk}").status_code == 204

    assert [h["job"] for h in search(api_client, "invoice")["results"]] == [str(kept.pk)]
    assert not SearchLine.objects.filter(job_id=job.pk).exists()


def test_filters_by_job_and_page_number_and_paginates_with_p(api_client, user):
    first = finished_job(user, pages={n: (f"invoice number {n}",) for n in range(1, 61)})
    second = finished_job(user, pages={1: ("invoice elsewhere",)})

    assert search(api_client, "invoice", job=str(second.pk))["count"] == 1
    assert [h["line_id"] for h in search(api_client, "invoice", job=str(first.pk), page=7)["results"]] == ["p7-l1"]
    body = search(api_client, "invoice")
    assert body["count"] == 61 and len(body["results"]) == 50 and "p=2" in body["next"]
    rest = api_client.get(body["next"]).json()
    assert len(rest["results"]) == 11
    seen = {(h["job"], h["line_id"]) for h in body["results"] + rest["results"]}
    assert len(seen) == 61


def test_stemming_follows_the_jobs_language_on_postgresql(api_client, user):
    from django.db import connection

    finished_job(user, pages={1: ("Two invoices were paid",)}, lang="en")
    finished_job(user, pages={1: ("Deux factures payées",)}, lang="fr")

    english = search(api_client, "invoice")
    french = search(api_client, "facture")
    if connection.vendor == "postgresql":  # English and French stems
        assert english["results"][0]["snippet"] == "Two <mark>invoices</mark> were paid"
        assert french["results"][0]["snippet"] == "Deux <mark>factures</mark> payées"
    else:  # FTS5 matches words as written
        assert english["count"] == french["count"] == 0


def test_a_query_without_words_is_a_400(api_client, user):
    for q in ("", '"" *', "--"):
        response = api_client.get(SEARCH, {"q": q})
        assert response.status_code == 400, q
    assert api_client.get(SEARCH, {"q": "x", "job": "not-a-uuid"}).status_code == 400


def test_search_needs_a_login(client):
    assert client.get(SEARCH, {"q": "invoice"}).status_code in (401, 403)


def test_snippets_are_html_escaped(api_client, user):
    finished_job(user, pages={1: ("<b>invoice</b> & co",)})

    assert search(api_client, "invoice")["results"][0]["snippet"] == "&lt;b&gt;<mark>invoice</mark>&lt;/b&gt; &amp; co"


def test_pages_stored_before_the_index_are_found_after_ocr_reindex(api_client, user):
    """An upgraded site: its pages were stored before migration 0016 made the index (here: the index
    emptied as it was then); `manage.py ocr_reindex` puts them in, as they read now."""
    finished_job(user)
    SearchLine.objects.all().delete()
    assert search(api_client, "invoice")["count"] == 0

    out = io.StringIO()
    call_command("ocr_reindex", stdout=out)

    assert "Indexed 3 page(s)." in out.getvalue()
    assert [h["line_id"] for h in search(api_client, "invoice")["results"]] == ["p3-l1"]
