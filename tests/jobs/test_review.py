"""Review: line corrections and "reviewed" marks, through the API (jobs/api/review.py) and the services."""

from __future__ import annotations

import pytest

from jobs import services
from jobs.errors import LineNotFound
from jobs.models import Job, LineCorrection, PageResult
from jobs.services.review import line_correct
from tests.jobs.factories import JobFactory, PageResultFactory
from tests.jobs.helpers import page_record

pytestmark = pytest.mark.django_db

JOBS = "/api/v1/jobs"


def finished_job(owner) -> Job:
    job = JobFactory(owner=owner)
    services.job_claim(job_id=job.pk, worker_id="w")
    services.job_record_page(job_id=job.pk, worker_id="w", record=page_record(1))
    return services.job_finish(job_id=job.pk, worker_id="w")


def line_url(job, line_id="p1-l2", page=1) -> str:
    return f"{JOBS}/{job.pk}/pages/{page}/lines/{line_id}"


def test_correction_is_stored_next_to_the_original_and_used_everywhere(api_client, user):
    job = finished_job(user)

    response = api_client.patch(line_url(job), {"text": "Second line, reviewed"}, format="json")

    assert response.status_code == 200, response.json()
    body = response.json()  # every edit's answer (docs/review.md): the page, its correction, its line
    line = body["line"]
    assert (line["id"], line["text"], line["original_text"]) == ("p1-l2", "Second line, reviewed", "Second line")
    assert body["normalized"]["lines"][1] == line and body["corrections"]["p1-l2"]["by"] == "alice"
    assert body["correction"]["kind"] == "line_text" and body["correction"]["id"] is None
    assert body["correction"]["made_by"] == "alice" and body["correction"]["made_at"]
    correction = LineCorrection.objects.get()
    assert (correction.original_text, correction.corrected_by) == ("Second line", user)
    # The engine's reading is untouched in the stored page.
    assert PageResult.objects.get().normalized["lines"][1]["text"] == "Second line"

    text = api_client.get(f"{JOBS}/{job.pk}/export.txt").content.decode()
    assert "Second line, reviewed" in text and "Hello world" in text
    page = api_client.get(f"{JOBS}/{job.pk}/pages/1").json()["normalized"]
    assert page["lines"][1]["original_text"] == "Second line" and "Second line, reviewed" in page["text"]
    result = api_client.get(f"{JOBS}/{job.pk}/result").json()["result"]
    assert "Second line, reviewed" in result["text"]


def test_correcting_again_replaces_and_the_original_text_removes_the_correction(api_client, user):
    job = finished_job(user)
    api_client.patch(line_url(job), {"text": "first try"}, format="json")
    api_client.patch(line_url(job), {"text": "second try"}, format="json")
    assert list(LineCorrection.objects.values_list("text", "original_text")) == [("second try", "Second line")]

    back = api_client.patch(line_url(job), {"text": "Second line"}, format="json").json()

    assert (back["line"]["text"], back["line"]["original_text"], back["correction"]) == ("Second line", None, None)
    assert back["corrections"] == {}
    assert not LineCorrection.objects.exists()


def test_a_line_may_be_emptied(api_client, user):
    job = finished_job(user)
    body = api_client.patch(line_url(job), {"text": ""}, format="json").json()
    assert (body["line"]["text"], body["line"]["original_text"]) == ("", "Second line")


@pytest.mark.parametrize("payload, code", [
    ({"text": "two\nlines"}, "invalid_request"),
    ({}, "invalid_request"),
    ({"text": "x" * 5001}, "invalid_request"),
])
def test_bad_correction_is_400(api_client, user, payload, code):
    job = finished_job(user)
    response = api_client.patch(line_url(job), payload, format="json")
    assert (response.status_code, response.json()["code"]) == (400, code)
    assert not LineCorrection.objects.exists()


def test_unknown_line_and_unknown_page_are_404(api_client, user):
    job = finished_job(user)
    unknown_line = api_client.patch(line_url(job, "p1-l99"), {"text": "x"}, format="json")
    assert (unknown_line.status_code, unknown_line.json()["code"]) == (404, "line_not_found")
    assert api_client.patch(line_url(job, page=2), {"text": "x"}, format="json").status_code == 404


def test_failed_page_cannot_be_corrected(api_client, user):
    page = PageResultFactory(job=JobFactory(owner=user), status=PageResult.Status.FAILED)
    response = api_client.patch(line_url(page.job, "p1-l1"), {"text": "x"}, format="json")
    assert (response.status_code, response.json()["code"]) == (409, "invalid_state")


def test_other_users_cannot_correct_or_mark(other_api_client, user):
    job = finished_job(user)
    assert other_api_client.patch(line_url(job), {"text": "mine now"}, format="json").status_code == 404
    assert other_api_client.post(f"{JOBS}/{job.pk}/reviewed").status_code == 404
    assert not LineCorrection.objects.exists()
    job.refresh_from_db()
    assert job.reviewed_at is None


def test_mark_reviewed(api_client, user):
    job = finished_job(user)

    response = api_client.post(f"{JOBS}/{job.pk}/reviewed")

    assert response.status_code == 200
    assert response.json()["reviewed_by"] == "alice" and response.json()["reviewed_at"]
    job.refresh_from_db()
    assert job.reviewed_by == user
    assert api_client.get(f"{JOBS}/{job.pk}").json()["reviewed_by"] == "alice"


def test_active_job_cannot_be_marked_reviewed(api_client, user):
    job = JobFactory(owner=user)
    response = api_client.post(f"{JOBS}/{job.pk}/reviewed")
    assert (response.status_code, response.json()["code"]) == (409, "invalid_state")


def test_service_rejects_a_line_of_another_page(user):
    job = finished_job(user)
    with pytest.raises(LineNotFound):
        line_correct(page=PageResult.objects.get(job=job), line_id="p2-l1", text="x", user=user)
