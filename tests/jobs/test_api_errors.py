"""Under /api/ every error is JSON ``{code, detail}`` with no internals; downloads name files safely."""

from __future__ import annotations

from email.message import EmailMessage

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import OperationalError
from django.test import Client

from jobs.api.views import JobViewSet
from jobs.models import Document, Job
from jobs.services.documents import clean_file_name
from tests.jobs.helpers import page_record, small_png
from tests.jobs.test_api import run_pages


@pytest.mark.django_db
def test_unknown_api_route_is_json_404(api_client):
    response = api_client.get("/api/v1/no-such-thing")
    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.json()["code"] == "not_found"


@pytest.mark.django_db
def test_wrong_method_is_json_405(api_client):
    response = api_client.put("/api/v1/pipelines")
    assert response.status_code == 405 and response.json()["code"] == "method_not_allowed"


@pytest.mark.django_db
def test_unexpected_error_is_json_500_without_internals(api_client, monkeypatch):
    def locked(*args, **kwargs):
        raise OperationalError("database is locked at /var/lib/secret-host")

    monkeypatch.setattr(JobViewSet, "list", locked)
    client = Client(raise_request_exception=False)
    client.defaults["HTTP_AUTHORIZATION"] = api_client._credentials["HTTP_AUTHORIZATION"]
    response = client.get("/api/v1/jobs")
    assert response.status_code == 500
    body = response.json()
    assert body["code"] == "server_error" and "locked" not in body["detail"] and "secret-host" not in body["detail"]


@pytest.mark.django_db
def test_html_pages_keep_html_404(client):
    response = client.get("/no-such-page/")
    assert response.status_code == 404 and not response["Content-Type"].startswith("application/json")


@pytest.mark.django_db
def test_hostile_file_names_cannot_add_header_parameters(api_client):
    upload = SimpleUploadedFile("page.png", small_png(), content_type="image/png")
    job = Job.objects.get(pk=api_client.post("/api/v1/jobs", {"file": upload}, format="multipart").json()["id"])
    run_pages(job, [page_record(1)])
    # A name as a remote server or an old client could hand it over.
    Document.objects.filter(pk=job.document_id).update(original_name='a".png; filename*=UTF-8\'\'evil.txt')
    response = api_client.get(f"/api/v1/jobs/{job.pk}/export.txt")
    assert response.status_code == 200, response.content
    # A standards-following client (RFC 6266 via the email parser) reads one file name: the whole original one.
    message = EmailMessage()
    message["Content-Disposition"] = response["Content-Disposition"]
    assert message.get_filename().startswith('a".png; filename*=') and message.get_filename() != "evil.txt"
    assert list(message["Content-Disposition"].params) == ["filename"]


def test_control_characters_are_stripped_from_file_names():
    assert clean_file_name("../report\r\n\x00.pdf") == "report.pdf"
    assert clean_file_name("\r\n") == "document"


@pytest.mark.django_db
def test_json_nested_too_deeply_is_a_400(api_client):
    upload = SimpleUploadedFile("page.png", small_png(), content_type="image/png")
    job = Job.objects.get(pk=api_client.post("/api/v1/jobs", {"file": upload}, format="multipart").json()["id"])
    run_pages(job, [page_record(1)])
    deep = "[" * 200_000  # deeper than Python's JSON parser can follow: a RecursionError, not a ValueError
    for method, path in [("post", "/api/v1/jobs"),  # the job routes' own parsers
                         ("patch", f"/api/v1/jobs/{job.pk}/pages/1/lines/p1-l1"),  # the default ones
                         ("post", f"/api/v1/jobs/{job.pk}/pages/1/lines")]:
        response = getattr(api_client, method)(path, deep, content_type="application/json")
        assert response.status_code == 400, path
        assert response.json()["code"] == "parse_error"
    malformed = api_client.post("/api/v1/jobs", "{", content_type="application/json")
    assert malformed.status_code == 400 and malformed.json()["code"] == "parse_error"  # the same answer
