"""One value for a job's options (``JobOptions``): every way in takes every option, with the same defaults."""

from __future__ import annotations

import argparse
import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from jobs.api.serializers import JobOptionsSerializer
from jobs.management.commands import ocr_submit, ocr_watch
from jobs.models import Batch, Job
from jobs.options import JobOptions
from jobs.web.forms import UploadForm
from tests.jobs.helpers import small_png, three_page_pdf

# Every option set to something other than its default.
CHOSEN = {"pipeline": "ocr", "lang": "de", "text_layer": "ocr", "orientation": "none", "pages": "2",
          "webhook_url": "https://hooks.example.org/ocr", "document_type": "invoice"}


@pytest.fixture(autouse=True)
def invoice_type(user):
    """The user's document type CHOSEN names."""
    from jobs.models import DocumentType

    return DocumentType.objects.create(owner=user, name="invoice", match="invoice")


def job_options(job: Job) -> dict:
    return job.options.as_dict()


def test_chosen_values_cover_every_option_and_differ_from_the_defaults():
    assert set(CHOSEN) == set(JobOptions.names())
    assert all(getattr(JobOptions(), name) != value for name, value in CHOSEN.items())


def test_blank_and_missing_values_take_the_defaults():
    assert JobOptions.of({"pipeline": "", "lang": None, "pages": "  ", "other": "x"}) == JobOptions()
    assert JobOptions.of({**CHOSEN, "pages": " 2 "}).as_dict() == CHOSEN


@pytest.mark.parametrize("entry_point", [
    lambda: set(JobOptionsSerializer().fields),
    lambda: set(UploadForm().fields) - {"files"},
    lambda: {action.dest for action in _parser(ocr_submit.Command())._actions},
    lambda: {action.dest for action in _parser(ocr_watch.Command())._actions},
], ids=["api", "upload form", "ocr_submit", "ocr_watch"])
def test_every_entry_point_spells_every_option(entry_point):
    assert set(JobOptions.names()) <= entry_point()


def _parser(command) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return parser


@pytest.mark.django_db
def test_the_api_takes_every_option(api_client):
    upload = SimpleUploadedFile("doc.pdf", three_page_pdf(), content_type="application/pdf")
    response = api_client.post("/api/v1/jobs", {"file": upload, **CHOSEN}, format="multipart")
    assert response.status_code == 202, response.json()
    assert job_options(Job.objects.get(pk=response.json()["id"])) == CHOSEN


@pytest.mark.django_db
def test_the_api_defaults_are_job_options_defaults(api_client):
    upload = SimpleUploadedFile("page.png", small_png(), content_type="image/png")
    response = api_client.post("/api/v1/jobs", {"file": upload}, format="multipart")
    assert response.status_code == 202
    assert job_options(Job.objects.get(pk=response.json()["id"])) == JobOptions().as_dict()


@pytest.mark.django_db
def test_the_upload_form_takes_every_option(client, user):
    client.force_login(user)
    upload = SimpleUploadedFile("doc.pdf", three_page_pdf(), content_type="application/pdf")
    response = client.post("/upload/", {"files": upload, **CHOSEN})
    assert response.status_code == 302
    assert job_options(Job.objects.get()) == CHOSEN


@pytest.mark.django_db
def test_the_upload_form_shows_a_private_webhook_url_at_its_field(client, user, settings):
    settings.OCR_ALLOW_PRIVATE_URLS = False
    client.force_login(user)
    upload = SimpleUploadedFile("page.png", small_png(), content_type="image/png")
    response = client.post("/upload/", {"files": upload, "webhook_url": "http://127.0.0.1:9/hook"})
    assert response.status_code == 400
    assert response.context["form"].errors["webhook_url"]
    assert not Job.objects.exists()


@pytest.mark.django_db
def test_a_batch_takes_every_option(api_client):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("doc.pdf", three_page_pdf())
    upload = SimpleUploadedFile("docs.zip", archive.getvalue(), content_type="application/zip")
    response = api_client.post("/api/v1/batches", {"file": upload, **CHOSEN}, format="multipart")
    assert response.status_code == 202, response.json()
    batch = Batch.objects.get()
    assert job_options(batch.jobs.get()) == CHOSEN
    assert response.json()["options"] == {name: value for name, value in CHOSEN.items() if name != "webhook_url"}


@pytest.mark.django_db
def test_ocr_submit_takes_every_option(tmp_path, user):
    path = tmp_path / "doc.pdf"
    path.write_bytes(three_page_pdf())
    flags = [item for name, value in CHOSEN.items() for item in (f"--{name.replace('_', '-')}", value)]
    call_command("ocr_submit", str(path), *flags, "--user", user.username, "--no-wait", stdout=io.StringIO())
    assert job_options(Job.objects.get()) == CHOSEN
