"""manage.py ocr_storage_copy --to s3://…: a file-system site's stored files into a real S3 server."""

from __future__ import annotations

import io
import uuid

import pytest
from django.core.management import CommandError, call_command

from jobs.models import Job
from ocrsite.object_store import default_storage_settings
from tests.jobs.helpers import page_record, three_page_pdf
from tests.jobs.test_api import JOBS, run_pages, upload
from tests.s3_server import BUCKET

pytestmark = pytest.mark.django_db


def copy(to: str) -> str:
    out = io.StringIO()
    call_command("ocr_storage_copy", "--to", to, stdout=out)
    return out.getvalue()


def test_the_copy_is_verified_resumable_and_the_site_runs_from_it(api_client, settings, s3_server, media_root):
    settings.S3_ENDPOINT_URL, settings.S3_REGION = s3_server.endpoint, "us-east-1"
    job = Job.objects.get(pk=upload(api_client, three_page_pdf(), name="a.pdf").json()["id"])
    run_pages(job, [page_record(1), page_record(2)])
    image = api_client.get(f"{JOBS}/{job.pk}/pages/2/image")
    jpeg = b"".join(image.streaming_content)
    prefix = uuid.uuid4().hex
    url = f"s3://{BUCKET}/{prefix}"

    assert copy(url).endswith("5 copied, 0 already there, 0 missing here.\n")  # the original, 2 images, 2 thumbnails
    client = s3_server.client()
    page_key = f"{prefix}/{job.pages.get(page_number=2).image.name}"
    assert client.get_object(Bucket=BUCKET, Key=page_key)["Body"].read() == jpeg
    # Interrupted, or changed since: a run again copies what is not there as it was, and only that.
    client.delete_object(Bucket=BUCKET, Key=f"{prefix}/{job.document.file.name}")
    client.put_object(Bucket=BUCKET, Key=page_key, Body=b"half written")
    assert copy(url).endswith("2 copied, 3 already there, 0 missing here.\n")
    assert client.get_object(Bucket=BUCKET, Key=page_key)["Body"].read() == jpeg

    settings.STORAGES = {**settings.STORAGES, "default": default_storage_settings(
        url, endpoint_url=s3_server.endpoint, region="us-east-1", url_seconds=60)}
    for stored in media_root.rglob("*"):  # the site now runs from the store alone
        if stored.is_file():
            stored.unlink()
    assert b"".join(api_client.get(f"{JOBS}/{job.pk}/pages/2/image").streaming_content) == jpeg


def test_a_file_missing_here_is_named_and_fails_the_command(api_client, settings, s3_server, media_root):
    settings.S3_ENDPOINT_URL = s3_server.endpoint
    job = Job.objects.get(pk=upload(api_client, three_page_pdf(), name="a.pdf").json()["id"])
    (media_root / job.document.file.name).unlink()
    with pytest.raises(CommandError, match="1 file"):
        copy(f"s3://{BUCKET}/{uuid.uuid4().hex}")
    with pytest.raises(CommandError, match="STORAGE_URL must look like"):
        copy("/var/lib/ocr")
