"""Batches on real PostgreSQL: a ZIP's members (each refusal by its code), the multi-file form, how a
batch's status follows its jobs, its one signed webhook, and its export ZIP.

Jobs are run by calling the worker's services with engine-shaped pages (tests.jobs.helpers); the e2e
test (tests/e2e/test_batches_e2e.py) lets a real qcluster and the real engine do it.
"""

from __future__ import annotations

import io
import stat
import threading
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from PIL import Image

from jobs.options import JobOptions
from jobs import services
from jobs.models import AuditEntry, Batch, Document, Job, WebhookDelivery
from jobs.services.batches import batch_create
from tests.jobs.helpers import TESTER, failed_record, page_record
from tests.jobs.test_webhooks import queued_deliveries, receiver, run_queued, secret_of, webhook_settings  # noqa: F401

pytestmark = pytest.mark.django_db


def png(shade: int) -> bytes:
    """A small valid page; a different ``shade`` is a different file (no dedup between them)."""
    buffer = io.BytesIO()
    Image.new("RGB", (80, 40), (shade, shade, shade)).save(buffer, "PNG")
    return buffer.getvalue()


def make_zip(members: list[tuple[str | zipfile.ZipInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


def symlink(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def encrypted(archive: bytes, name: str) -> bytes:
    """``archive`` with ``name`` marked encrypted (general purpose bit 0), which zipfile cannot write."""
    data = bytearray(archive)
    offset = zipfile.ZipFile(io.BytesIO(archive)).getinfo(name).header_offset
    data[offset + 6] |= 0x1  # the local header's flags
    central = data.find(b"PK\x01\x02")
    while central != -1:
        length = int.from_bytes(data[central + 28:central + 30], "little")
        if data[central + 46:central + 46 + length] == name.encode():
            data[central + 8] |= 0x1  # the central directory's flags
            break
        central = data.find(b"PK\x01\x02", central + 4)
    return bytes(data)


def upload(data: bytes, name: str = "scans.zip") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/zip")


def run_job(job: Job, *, fail: bool = False) -> Job:
    """What a worker does with a one-page job."""
    services.job_claim(job_id=job.pk, worker_id="w")
    record = failed_record(1) if fail else page_record(1)
    services.job_record_page(job_id=job.pk, worker_id="w", record=record)
    return services.job_finish(job_id=job.pk, worker_id="w")


def stored_files(media_root) -> list[str]:
    return sorted(p.name for p in (media_root / "documents").rglob("*") if p.is_file())


def test_each_refused_member_gets_its_own_error_and_the_others_become_jobs(user, media_root):
    archive = make_zip([
        ("first.png", png(10)), ("folder/second.png", png(20)), ("folder/", b""),
        ("../escape.png", png(30)), ("/etc/absolute.png", png(40)), (symlink("link.png"), b"/etc/passwd"),
        ("secret.png", png(50)), ("inner.zip", make_zip([("a.png", png(60))])),
        ("disguised.png", make_zip([("b.png", png(70))])), ("zeros.png", bytes(3 * 1024 * 1024)),
        ("notes.txt", b"just some text"), ("__MACOSX/._first.png", b"finder data"),
    ])
    archive = encrypted(archive, "secret.png")

    batch = batch_create(owner=user, files=[upload(archive)], by=TESTER)

    assert [(job.document.original_name, job.status) for job in batch.jobs.order_by("batch_members__id")] == [
        ("first.png", "queued"), ("second.png", "queued")]
    assert [(e["member"], e["code"]) for e in batch.errors] == [
        ("../escape.png", "archive_path_unsafe"), ("/etc/absolute.png", "archive_path_unsafe"),
        ("link.png", "archive_symlink"), ("secret.png", "archive_encrypted"), ("inner.zip", "archive_nested"),
        ("disguised.png", "archive_nested"), ("zeros.png", "archive_bomb"), ("notes.txt", "unsupported_file_type"),
    ]
    assert all(e["detail"] for e in batch.errors)
    assert "OCR_BATCH_MAX_RATIO" in batch.errors[6]["detail"]
    # Nothing of a refused member is stored, nor left in the upload folder.
    assert Document.objects.count() == 2 and len(stored_files(media_root)) == 2
    assert list((media_root / ".uploading").iterdir()) == []
    assert batch.status == "queued"
    (entry,) = AuditEntry.objects.filter(action="batch_created")
    assert (entry.job, entry.actor, entry.detail) == (batch.pk, "test", "2 jobs, 8 members refused")


def test_members_past_the_batch_total_are_refused_and_the_refused_bytes_count_too(user, settings):
    big, small = png(10) + bytes(20_000), png(20)  # trailing bytes after IEND: still a valid PNG
    settings.OCR_BATCH_MAX_UNCOMPRESSED_BYTES = len(big) + len(small) + 100
    archive = make_zip([("big.png", big), ("again.png", png(30) + bytes(20_000)), ("small.png", small)])

    batch = batch_create(owner=user, files=[upload(archive)], by=TESTER)

    # again.png was inflated before it was refused: those bytes are spent, so small.png no longer fits.
    assert [job.document.original_name for job in batch.jobs.all().order_by("batch_members__id")] == ["big.png"]
    assert [(e["member"], e["code"]) for e in batch.errors] == [("again.png", "archive_bomb"),
                                                                ("small.png", "archive_bomb")]
    assert "OCR_BATCH_MAX_UNCOMPRESSED_BYTES" in batch.errors[0]["detail"]


def test_a_member_the_upload_checks_refuse_is_listed_with_their_code(user, settings):
    settings.OCR_QUOTA_PAGES_PER_DAY = 1
    batch = batch_create(owner=user, files=[upload(make_zip([("a.png", png(1)), ("b.png", png(2))]))], by=TESTER)

    assert batch.jobs.count() == 1
    assert [(e["member"], e["code"]) for e in batch.errors] == [("b.png", "quota_exceeded")]


def test_api_multi_file_form_makes_one_batch(api_client, user):
    answer = api_client.post("/api/v1/batches", {
        "file": [upload(png(1), "one.png"), upload(png(2), "two.png"),
                 upload(make_zip([("three.png", png(3))]), "more.zip")],
        "lang": "en", "pages": "1",
    }, format="multipart")

    assert answer.status_code == 202, answer.json()
    body = answer.json()
    assert answer["Location"] == body["links"]["self"] == f"http://testserver/api/v1/batches/{body['id']}"
    assert body["status"] == "queued" and body["progress"] == {"jobs_done": 0, "jobs_total": 3}
    assert [(j["document"]["name"], j["status"]) for j in body["jobs"]] == [
        ("one.png", "queued"), ("two.png", "queued"), ("three.png", "queued")]
    assert body["errors"] == [] and body["options"]["pages"] == "1"

    detail = api_client.get(body["links"]["self"]).json()
    assert detail["jobs"] == body["jobs"]
    listed = api_client.get("/api/v1/batches").json()
    assert [b["id"] for b in listed["results"]] == [body["id"]]


def test_api_refuses_a_zip_that_is_not_one_and_stores_nothing(api_client, media_root):
    answer = api_client.post("/api/v1/batches", {"file": [upload(b"PK\x03\x04 but not really a zip")]},
                             format="multipart")

    assert answer.status_code == 400
    assert answer.json()["code"] == "invalid_archive"
    assert Batch.objects.count() == 0 and Job.objects.count() == 0


def test_api_refuses_too_many_members_and_bad_options_before_anything(api_client, settings):
    settings.OCR_BATCH_MAX_MEMBERS = 2
    many = upload(make_zip([(f"{n}.png", png(n)) for n in range(3)]))
    answer = api_client.post("/api/v1/batches", {"file": [many]}, format="multipart")
    assert (answer.status_code, answer.json()["code"]) == (400, "archive_too_many_members")

    answer = api_client.post("/api/v1/batches", {"file": [upload(png(1), "a.png")], "lang": "xx-none"},
                             format="multipart")
    assert (answer.status_code, answer.json()["code"]) == (400, "unsupported_option")
    answer = api_client.post("/api/v1/batches", {"lang": "en"}, format="multipart")
    assert (answer.status_code, answer.json()["code"]) == (400, "invalid_request")
    assert Batch.objects.count() == 0


def test_another_users_batch_is_not_found(api_client, other_api_client):
    body = api_client.post("/api/v1/batches", {"file": [upload(png(1), "a.png")]}, format="multipart").json()

    assert other_api_client.get(f"/api/v1/batches/{body['id']}").status_code == 404
    assert other_api_client.get("/api/v1/batches").json()["results"] == []
    assert api_client.get("/api/v1/batches/not-a-uuid").status_code == 404


@pytest.mark.parametrize("outcomes, refused, expected", [
    ((True, True), False, "succeeded"),
    ((True, False), False, "partial"),
    ((False, False), False, "failed"),
    ((True, True), True, "partial"),
    ((False, False), True, "failed"),
])
def test_status_follows_the_jobs(user, outcomes, refused, expected):
    members = [(f"{n}.png", png(n)) for n in range(len(outcomes))] + ([("x.txt", b"text")] if refused else [])
    batch = batch_create(owner=user, files=[upload(make_zip(members))], by=TESTER)
    jobs = list(batch.jobs.order_by("batch_members__id"))

    run_job(jobs[0], fail=not outcomes[0])
    batch.refresh_from_db()
    assert batch.status == "queued" and batch.finished_at is None
    run_job(jobs[1], fail=not outcomes[1])
    batch.refresh_from_db()
    assert batch.status == expected and batch.finished_at is not None


def test_a_canceled_job_counts_as_not_succeeded_and_a_canceled_batch_stays_canceled(api_client, user):
    batch = batch_create(owner=user, files=[upload(make_zip([("a.png", png(1)), ("b.png", png(2))]))], by=TESTER)
    first, second = batch.jobs.order_by("batch_members__id")
    run_job(first)
    services.job_cancel(job=second, by=TESTER)
    batch.refresh_from_db()
    assert batch.status == "partial"

    other = batch_create(owner=user, files=[upload(make_zip([("c.png", png(3))]))], by=TESTER)
    answer = api_client.post(f"/api/v1/batches/{other.pk}/cancel")
    assert answer.status_code == 200 and answer.json()["status"] == "canceled"
    assert [j["status"] for j in answer.json()["jobs"]] == ["canceled"]
    assert api_client.post(f"/api/v1/batches/{other.pk}/cancel").json()["code"] == "invalid_state"


def test_the_batch_webhook_is_delivered_once_signed(user, receiver, django_capture_on_commit_callbacks):  # noqa: F811
    hook = receiver()
    archive = make_zip([("a.png", png(1)), ("b.png", png(2)), ("../bad.png", png(3))])
    with django_capture_on_commit_callbacks(execute=True):
        batch = batch_create(owner=user, files=[upload(archive)], by=TESTER, options=JobOptions(webhook_url=hook.url))
        first, second = batch.jobs.order_by("batch_members__id")
        run_job(first)
        run_job(second)
        services.job_finish(job_id=second.pk, worker_id="w")  # the finishing task delivered twice
    run_queued()
    run_queued()  # at-least-once: the same tasks again

    batch_hooks = [r for r in hook.received if r.headers["X-OCR-Event"].startswith("batch.")]
    (request,) = batch_hooks
    assert request.headers["X-OCR-Event"] == "batch.partial"
    assert request.signed_with(secret_of(user)) and not request.signed_with("another-secret")
    body = request.json()
    assert body["event"] == "batch.partial" and body["batch"]["id"] == str(batch.pk)
    assert body["batch"]["progress"] == {"jobs_done": 2, "jobs_total": 2}
    assert body["batch"]["errors"][0]["code"] == "archive_path_unsafe"
    assert [j["status"] for j in body["batch"]["jobs"]] == ["succeeded", "succeeded"]
    assert body["batch"]["links"]["self"] == f"https://ocr.example.org/api/v1/batches/{batch.pk}"
    assert sorted(r.headers["X-OCR-Event"] for r in hook.received) == ["batch.partial", "job.succeeded",
                                                                        "job.succeeded"]


@pytest.mark.django_db(transaction=True)
def test_two_last_jobs_ending_at_once_end_the_batch_once(user):
    batch = batch_create(owner=user, files=[upload(make_zip([("a.png", png(1)), ("b.png", png(2))]))], by=TESTER,
                         options=JobOptions(webhook_url="http://127.0.0.1:9/hook"))
    jobs = list(batch.jobs.all())
    for job in jobs:
        services.job_claim(job_id=job.pk, worker_id=f"w{job.pk}")
        services.job_record_page(job_id=job.pk, worker_id=f"w{job.pk}", record=page_record(1))
    start = threading.Barrier(len(jobs))

    def finish(job):
        start.wait()
        try:
            services.job_finish(job_id=job.pk, worker_id=f"w{job.pk}")
        finally:
            connection.close()

    threads = [threading.Thread(target=finish, args=(job,)) for job in jobs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    batch.refresh_from_db()
    assert batch.status == "succeeded"
    (delivery,) = WebhookDelivery.objects.filter(batch=batch)
    assert delivery.event == "batch.succeeded" and (delivery.pk,) in queued_deliveries()


def test_export_zip_holds_each_succeeded_jobs_exports(api_client, user):
    archive = make_zip([("a.png", png(1)), ("sub/a.png", png(2)), ("c.png", png(3))])
    batch = batch_create(owner=user, files=[upload(archive)], by=TESTER)
    first, second, third = batch.jobs.order_by("batch_members__id")
    run_job(first), run_job(second), run_job(third, fail=True)

    answer = api_client.get(f"/api/v1/batches/{batch.pk}/export.zip?format=txt,json")

    assert answer.status_code == 200 and answer["Content-Type"] == "application/zip"
    assert 'filename="scans.zip"' in answer["Content-Disposition"]
    with zipfile.ZipFile(io.BytesIO(b"".join(answer.streaming_content) if answer.streaming else answer.content)) as z:
        assert sorted(z.namelist()) == ["a (2).json", "a (2).txt", "a.json", "a.txt"]
        assert z.read("a.txt").decode().startswith("Hello world")
    assert api_client.get(f"/api/v1/batches/{batch.pk}/export.zip?format=txt,nope").json()["code"] == (
        "unsupported_option")


def test_a_large_batchs_zip_is_built_by_a_worker(api_client, user, settings):
    from django_q.models import OrmQ

    from jobs import tasks

    settings.OCR_EXPORT_INLINE_MAX_PAGES = 0
    settings.OCR_EXPORT_WAIT_SECONDS = 0
    batch = batch_create(owner=user, files=[upload(make_zip([("a.png", png(1))]))], by=TESTER)
    run_job(batch.jobs.get())
    url = f"/api/v1/batches/{batch.pk}/export.zip?format=txt"

    pending = api_client.get(url)
    assert pending.status_code == 202 and pending["Retry-After"] == "5"
    assert pending.json()["code"] == "export_pending"
    (entry,) = [e for e in OrmQ.objects.all() if e.task["func"] == "jobs.tasks.build_batch_export"]
    tasks.build_batch_export(*entry.task["args"])

    built = api_client.get(url)
    assert built.status_code == 200
    with zipfile.ZipFile(io.BytesIO(b"".join(built.streaming_content))) as z:
        assert z.namelist() == ["a.txt"]


def test_an_office_file_is_a_member_to_refuse_not_an_archive_to_unpack(user):
    docx = make_zip([("[Content_Types].xml", b"<Types/>"), ("word/document.xml", b"<w:document/>")])
    batch = batch_create(owner=user, files=[upload(png(1), "a.png"), upload(docx, "letter.docx")], by=TESTER)

    assert batch.jobs.count() == 1
    assert [(e["member"], e["code"]) for e in batch.errors] == [("letter.docx", "unsupported_file_type")]


def test_deleting_the_last_active_job_ends_the_batch_and_a_retry_reopens_it(user):
    batch = batch_create(owner=user, files=[upload(make_zip([("a.png", png(1)), ("b.png", png(2))]))], by=TESTER)
    first, second = batch.jobs.order_by("batch_members__id")
    run_job(first, fail=True)
    services.job_delete(job=second, by=TESTER)
    batch.refresh_from_db()
    assert batch.status == "failed"

    services.job_retry(job=first, by=TESTER)
    batch.refresh_from_db()
    assert (batch.status, batch.finished_at) == ("queued", None)
    services.job_claim(job_id=first.pk, worker_id="w")
    services.job_record_page(job_id=first.pk, worker_id="w", record=page_record(1))
    services.job_finish(job_id=first.pk, worker_id="w")
    batch.refresh_from_db()
    assert batch.status == "succeeded"


def test_a_damaged_member_is_corrupt_and_one_over_the_upload_size_too_large(user, settings):
    settings.OCR_MAX_UPLOAD_BYTES = 50_000
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("damaged.png", png(1))
        archive.writestr("big.png", png(2) + bytes(60_000))
        archive.writestr("ok.png", png(3))
    data = bytearray(buffer.getvalue())
    data[30 + len("damaged.png") + 100] ^= 0xFF  # a byte of the first member's stored data: its CRC fails

    batch = batch_create(owner=user, files=[upload(bytes(data))], by=TESTER)

    assert [(e["member"], e["code"]) for e in batch.errors] == [("damaged.png", "corrupt_file"),
                                                                ("big.png", "file_too_large")]
    assert [job.document.original_name for job in batch.jobs.all()] == ["ok.png"]


def test_a_file_submitted_before_is_that_job_in_the_batch(user):
    earlier, _ = services.job_create(owner=user, file=png(1), filename="a.png")
    run_job(earlier)

    batch = batch_create(owner=user, files=[upload(make_zip([("a.png", png(1)), ("copy.png", png(1))]))], by=TESTER)

    assert list(batch.jobs.all()) == [earlier]  # the same file twice in the ZIP too: one job
    assert batch.status == "succeeded" and batch.finished_at is not None  # it had ended already
