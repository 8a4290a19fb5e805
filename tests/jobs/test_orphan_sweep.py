"""Files a crashed worker left without a row are swept; referenced and fresh files stay."""

from __future__ import annotations

import os
import time

import pytest
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile
from django_q.models import Schedule

from jobs.models import Job
from jobs.services.storage import orphan_files_sweep
from tests.jobs.helpers import page_record, small_png
from tests.jobs.test_api import run_pages

pytestmark = pytest.mark.django_db


def age(name: str, hours: float) -> None:
    path = default_storage.path(name)
    then = time.time() - hours * 3600
    os.utime(path, (then, then))


def test_orphans_older_than_the_grace_are_removed(api_client, media_root):
    upload = SimpleUploadedFile("page.png", small_png(), content_type="image/png")
    job = Job.objects.get(pk=api_client.post("/api/v1/jobs", {"file": upload}, format="multipart").json()["id"])
    run_pages(job, [page_record(1)])
    kept = [job.document.file.name, *job.pages.values_list("image", flat=True)]
    for name in kept:
        age(name, 5)
    orphan = default_storage.save(f"pages/{job.pk}/0002.jpg", ContentFile(b"jpeg of a page never committed"))
    age(orphan, 2)
    fresh = default_storage.save(f"pages/{job.pk}/0003.jpg", ContentFile(b"a page being stored right now"))

    assert orphan_files_sweep() == [orphan]
    assert not default_storage.exists(orphan)
    assert all(default_storage.exists(name) for name in [*kept, fresh])


def test_the_sweep_is_scheduled_hourly():
    assert Schedule.objects.get(name="jobs.sweep_orphan_files").schedule_type == Schedule.HOURLY


def test_an_upload_left_spooling_by_a_killed_web_process_is_swept(media_root):
    """Uploads over 10 MB spool in MEDIA_ROOT/.uploading while Django parses them; a web process killed
    then leaves the file, which nothing references."""
    left = default_storage.save(".uploading/tmpab12cd.upload.pdf", ContentFile(b"half an upload"))
    age(left, 2)
    assert orphan_files_sweep() == [left]
    assert not default_storage.exists(left)
