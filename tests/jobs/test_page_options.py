"""The per-page options ``text_layer`` and ``orientation``: accepted, stored, shown, checked."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from jobs.models import Job
from ocr_engine.cli import parse_args
from tests.jobs.helpers import small_png


def _submit(client, **options):
    upload = SimpleUploadedFile("page.png", small_png(), content_type="image/png")
    return client.post("/api/v1/jobs", {"file": upload, **options}, format="multipart")


@pytest.mark.django_db
def test_options_default_to_auto_and_are_shown(api_client):
    response = _submit(api_client)
    assert response.status_code == 202
    assert (response.json()["text_layer"], response.json()["orientation"]) == ("auto", "auto")


@pytest.mark.django_db
def test_options_are_stored_and_change_the_dedup_key(api_client):
    first = _submit(api_client, text_layer="ocr", orientation="none")
    assert first.status_code == 202
    job = Job.objects.get(pk=first.json()["id"])
    assert (job.text_layer, job.orientation) == ("ocr", "none")
    # The same file with other options is other work, not a duplicate.
    second = _submit(api_client, text_layer="auto", orientation="none")
    assert second.status_code == 202 and second.json()["id"] != first.json()["id"]


@pytest.mark.django_db
@pytest.mark.parametrize("options", [{"text_layer": "maybe"}, {"orientation": "sideways"}])
def test_unknown_option_values_are_refused_with_a_code(api_client, options):
    response = _submit(api_client, **options)
    assert response.status_code == 400
    assert response.json()["code"] == "unsupported_option"
    assert list(options.values())[0] in response.json()["detail"]
    assert not Job.objects.exists()


def test_cli_takes_both_options():
    args = parse_args(["scan.pdf", "--text-layer", "ocr", "--orientation", "none"])
    assert (args.text_layer, args.orientation) == ("ocr", "none")
    assert (parse_args(["scan.pdf"]).text_layer, parse_args(["scan.pdf"]).orientation) == ("auto", "auto")
