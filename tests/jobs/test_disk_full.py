"""A full disk answers 507 with a code, and leaves neither a partial file nor a row behind."""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from jobs.models import Document, Job
from tests.ocr_engine import samples


@pytest.fixture
def tiny_disk(tmp_path, settings):
    """MEDIA_ROOT on a real 64 KiB file system (tmpfs), as root can mount on the test machines."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {done.stderr.decode().strip()}")
    settings.MEDIA_ROOT = str(mount)
    yield mount
    subprocess.run(["umount", str(mount)], check=True)


@pytest.mark.django_db
def test_disk_full_is_507_and_nothing_stays(api_client, tiny_disk):
    noise = Image.fromarray(np.random.default_rng(1).integers(0, 255, (300, 300, 3), dtype=np.uint8))
    png = samples.encode(noise, "PNG")  # ~270 KB: more than the disk holds
    response = api_client.post("/api/v1/jobs", {"file": SimpleUploadedFile("scan.png", png, "image/png")},
                               format="multipart")
    assert response.status_code == 507
    assert response.json()["code"] == "insufficient_storage"
    assert not Job.objects.exists() and not Document.objects.exists()
    assert [f for _, _, files in os.walk(tiny_disk) for f in files] == []
