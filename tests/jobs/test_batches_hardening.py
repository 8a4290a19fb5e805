"""Batches against people who mean harm (issue 73): compression methods zipfile inflates whole, directories
claiming a million entries, the byte budget spent by refused members, names no file may have, the submit
rate spent per member, and batch exports (one file per set of formats, one audit entry, counted in the quota).

The same attacks against a running server, with its memory measured: tests/e2e/test_batches_hardening_e2e.py.
"""

from __future__ import annotations

import time
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from jobs.models import AuditEntry, Batch, ExportFile, Job, StorageUsage
from jobs.services.batch_exports import batch_export_formats
from jobs.services.batches import batch_create
from tests.jobs.helpers import TESTER
from tests.jobs.test_abuse_limits import budgets_store  # noqa: F401 - a fixture
from tests.jobs.test_batches import make_zip, png, run_job, upload
from tests.jobs.zip_samples import bzip2_gigabyte_zip, claiming_entries, lzma_zip

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("make", [bzip2_gigabyte_zip, lzma_zip])
def test_bzip2_and_lzma_members_are_refused_unread_and_the_page_goes_on(user, make):
    archive = make(png(1))
    started = time.monotonic()
    batch = batch_create(owner=user, files=[upload(archive)], by=TESTER)

    assert time.monotonic() - started < 2  # inflating the bzip2 member alone takes seconds and a gigabyte
    assert [job.document.original_name for job in batch.jobs.all()] == ["page.png"]
    assert [(e["member"], e["code"]) for e in batch.errors] == [("bomb.png", "archive_unsupported_compression")]


def test_a_directory_claiming_a_million_entries_is_refused_before_it_is_read(api_client):
    archive = claiming_entries(make_zip([("a.png", png(1))]), 1_000_000)
    assert zipfile.ZipFile(upload(archive)).namelist() == ["a.png"]  # zipfile itself reads the one entry

    started = time.monotonic()
    answer = api_client.post("/api/v1/batches", {"file": [upload(archive)]}, format="multipart")

    assert (answer.status_code, answer.json()["code"]) == (400, "archive_too_many_members")
    assert "1000000 entries" in answer.json()["detail"] and time.monotonic() - started < 1
    assert Batch.objects.count() == 0 and Job.objects.count() == 0


def test_a_directory_larger_than_its_claimed_count_needs_is_refused_too(api_client, settings):
    settings.OCR_BATCH_MAX_MEMBERS = 2  # at most 6 entries (folders, Finder's copies): 6 KiB of directory
    many = make_zip([(f"{n:05d}.png", b"") for n in range(400)])
    answer = api_client.post("/api/v1/batches", {"file": [upload(claiming_entries(many, 1))]}, format="multipart")

    assert (answer.status_code, answer.json()["code"]) == (400, "archive_too_many_members")


def test_members_refused_as_too_large_spend_the_byte_budget(user, settings):
    settings.OCR_MAX_UPLOAD_BYTES = 50_000
    settings.OCR_BATCH_MAX_UNCOMPRESSED_BYTES = 250_000
    # Each big member inflates 100 kB before it is refused as larger than an upload may be.
    members = [(f"big-{n}.png", png(n) + bytes(100_000)) for n in range(3)] + [("page.png", png(9))]

    batch = batch_create(owner=user, files=[upload(make_zip(members))], by=TESTER)

    assert [(e["member"], e["code"]) for e in batch.errors] == [
        ("big-0.png", "file_too_large"), ("big-1.png", "file_too_large"), ("big-2.png", "archive_bomb"),
        ("page.png", "archive_bomb")]
    assert batch.jobs.count() == 0 and batch.status == "failed"


def test_long_and_malformed_names_are_member_errors_listed_once_and_cut(user):
    long_name = "x" * 65_000 + ".png"
    archive = make_zip([(long_name, png(1)), ("nul#.exe.png", png(2)), ("bell\x07.png", png(3)),
                        ("ok.png", png(4)), ("é" * 128 + ".png", png(5))])  # 256 characters, 260 bytes
    archive = archive.replace(b"nul#", b"nul\x00")  # zipfile writes no NUL in a name: in both its headers

    batch = batch_create(owner=user, files=[upload(archive)], by=TESTER)

    assert [job.document.original_name for job in batch.jobs.all()] == ["ok.png"]
    assert [e["code"] for e in batch.errors] == ["archive_name_invalid"] * 4
    names = [e["member"] for e in batch.errors]
    assert names[0] == "x" * 254 + "\u2026" and names[1:3] == ["nul\ufffd.exe.png", "bell\ufffd.png"]
    assert all(len(name) <= 255 for name in names)
    assert all("xxx" not in e["detail"] and "nul" not in e["detail"] for e in batch.errors)  # the name once
    Batch.objects.get(pk=batch.pk)  # stored as JSON (no NUL, which PostgreSQL's jsonb refuses)


def test_an_archive_whose_names_are_not_utf8_is_refused_whole_not_a_server_error(api_client):
    archive = bytearray(make_zip([("caf\u00e9.png", png(1))]))  # written with the UTF-8 flag
    archive[archive.rfind("é".encode()) + 1] = 0xFF  # the central directory's name: invalid UTF-8
    answer = api_client.post("/api/v1/batches", {"file": [upload(bytes(archive))]}, format="multipart")

    assert (answer.status_code, answer.json()["code"]) == (400, "invalid_archive")


@pytest.mark.usefixtures("budgets_store")
def test_a_batch_spends_one_submit_unit_per_member(api_client, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "submit": "3/min"}
    four = make_zip([(f"{n}.png", png(n)) for n in range(4)])
    refused = api_client.post("/api/v1/batches", {"file": [upload(four)]}, format="multipart")
    assert refused.status_code == 429 and refused.json()["code"] == "throttled" and int(refused["Retry-After"]) > 0
    assert Batch.objects.count() == 0 and Job.objects.count() == 0

    three = make_zip([(f"{n}.png", png(n)) for n in range(3)])
    assert api_client.post("/api/v1/batches", {"file": [upload(three)]}, format="multipart").status_code == 202
    single = api_client.post("/api/v1/jobs", {"file": upload(png(7), "one.png")}, format="multipart")
    assert single.status_code == 429  # the three members spent the budget


@pytest.mark.usefixtures("budgets_store")
def test_the_upload_forms_batch_spends_one_submit_unit_per_member(client, user, settings):
    settings.API_THROTTLE_RATES = {**settings.API_THROTTLE_RATES, "submit": "3/min"}
    client.force_login(user)
    four = make_zip([(f"{n}.png", png(n)) for n in range(4)])

    answer = client.post("/upload/", {"files": [SimpleUploadedFile("scans.zip", four)], "pipeline": "ocr",
                                      "lang": "en"})

    assert answer.status_code == 429 and int(answer["Retry-After"]) > 0
    assert Batch.objects.count() == 0 and Job.objects.count() == 0


def test_export_formats_in_any_order_are_one_file_one_audit_entry_a_download_and_counted(api_client, user,
                                                                                         settings):
    from django_q.models import OrmQ

    from jobs import tasks

    batch = batch_create(owner=user, files=[upload(make_zip([("a.png", png(1)), ("b.png", png(2))]))], by=TESTER)
    first, second = batch.jobs.order_by("batch_members__id")
    run_job(first), run_job(second)
    assert batch_export_formats("txt,md") == batch_export_formats(" md,txt,md ") == ["md", "txt"]

    answer = api_client.get(f"/api/v1/batches/{batch.pk}/export.zip?format=txt,md")
    assert answer.status_code == 200
    (entry,) = AuditEntry.objects.filter(action="exported")
    assert (entry.job, entry.detail) == (batch.pk, "batch md,txt, 2 jobs")

    settings.OCR_EXPORT_INLINE_MAX_PAGES, settings.OCR_EXPORT_WAIT_SECONDS = 0, 0  # built by a worker
    before = StorageUsage.objects.get(user=user).stored_bytes
    assert api_client.get(f"/api/v1/batches/{batch.pk}/export.zip?format=txt,md").status_code == 202
    (queued,) = [e for e in OrmQ.objects.all() if e.task["func"] == "jobs.tasks.build_batch_export"]
    tasks.build_batch_export(*queued.task["args"])

    built = api_client.get(f"/api/v1/batches/{batch.pk}/export.zip?format=md,txt")  # the other order: that file
    assert built.status_code == 200
    assert len([e for e in OrmQ.objects.all() if e.task["func"] == "jobs.tasks.build_batch_export"]) == 1
    (counted,) = ExportFile.objects.all()
    assert counted.job == first and counted.size_bytes == len(b"".join(built.streaming_content))
    assert StorageUsage.objects.get(user=user).stored_bytes == before + counted.size_bytes
    assert AuditEntry.objects.filter(action="exported").count() == 2  # one per download, not per job
