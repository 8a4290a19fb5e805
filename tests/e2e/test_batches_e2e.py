"""End to end: a ZIP through POST /api/v1/batches, a real qcluster with the real engine, PostgreSQL, and a
real HTTP receiver for the batch's webhook.

Five one-line images are read; a member climbing out of the archive, a nested ZIP and a zip bomb are
refused with their codes, so the batch ends ``partial``: one ``batch.partial``, signed, and an export
ZIP of the five texts.
"""

from __future__ import annotations

import io
import time
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image, ImageDraw, ImageFont

from jobs.models import UserSettings, WebhookDelivery
from tests.jobs.webhook_receiver import Receiver
from tests.ocr_engine.samples import FONT_DIR

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db(transaction=True)]

LINES = ["Harbour lights", "Stone bridges", "Quiet river", "Morning train", "Golden field"]


def line_image(text: str) -> bytes:
    image = Image.new("RGB", (420, 80), "white")
    font = ImageFont.truetype(str(FONT_DIR / "DejaVuSans.ttf"), 36)
    ImageDraw.Draw(image).text((20, 18), text, fill="black", font=font)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def archive(members: list[tuple[str, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for name, data in members:
            zipped.writestr(name, data)
    return buffer.getvalue()


def test_a_zip_becomes_five_jobs_three_member_errors_and_one_signed_batch_partial(api_client, user, qcluster):
    secret = UserSettings.objects.create(user=user).webhook_secret
    receiver = Receiver()
    try:
        upload = archive([
            *[(f"page-{n}.png", line_image(text)) for n, text in enumerate(LINES, start=1)],
            ("../../etc/escape.png", line_image("Escape")),
            ("more.zip", archive([("inner.png", line_image("Inner"))])),
            ("bomb.png", bytes(8 * 1024 * 1024)),
        ])
        qcluster()
        answer = api_client.post("/api/v1/batches", {
            "file": SimpleUploadedFile("scans.zip", upload, content_type="application/zip"),
            "pipeline": "ocr", "lang": "en", "webhook_url": receiver.url}, format="multipart")
        assert answer.status_code == 202, answer.content
        batch = answer.json()
        assert len(batch["jobs"]) == 5 and batch["progress"] == {"jobs_done": 0, "jobs_total": 5}
        assert [(e["member"], e["code"]) for e in batch["errors"]] == [
            ("../../etc/escape.png", "archive_path_unsafe"), ("more.zip", "archive_nested"),
            ("bomb.png", "archive_bomb")]

        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not WebhookDelivery.objects.filter(
                batch_id=batch["id"], status="delivered").exists():
            time.sleep(0.5)
        time.sleep(2)  # a second delivery, if there were one, would have been sent by now
        done = api_client.get(batch["links"]["self"]).json()
        batch_hooks = [r for r in receiver.received if r.headers["X-OCR-Event"].startswith("batch.")]
    finally:
        receiver.close()

    assert done["status"] == "partial", done
    assert done["progress"] == {"jobs_done": 5, "jobs_total": 5}
    assert [j["status"] for j in done["jobs"]] == ["succeeded"] * 5
    (hook,) = batch_hooks
    assert hook.headers["X-OCR-Event"] == "batch.partial" and hook.signed_with(secret)
    assert hook.json()["batch"]["id"] == batch["id"] and len(hook.json()["batch"]["errors"]) == 3

    exported = api_client.get(f"{done['links']['export_zip']}?format=txt")
    assert exported.status_code == 200
    with zipfile.ZipFile(io.BytesIO(exported.content)) as zipped:
        assert sorted(zipped.namelist()) == [f"page-{n}.txt" for n in range(1, 6)]
        texts = {name: zipped.read(name).decode().strip().lower() for name in zipped.namelist()}
    for n, line in enumerate(LINES, start=1):
        assert line.lower() in texts[f"page-{n}.txt"], texts
