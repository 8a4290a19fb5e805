"""Services against real PostgreSQL, the real ORM broker and real files (no OCR engine needed)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from django_q.models import OrmQ

from jobs.options import JobOptions
from jobs import services
from jobs.errors import JobStateError
from jobs.models import Document, Job, PageResult
from ocr_engine.errors import GpuRequired, OcrError
from tests.jobs.factories import JobFactory
from tests.jobs.helpers import TESTER, failed_record, page_record, small_png, three_page_pdf

pytestmark = pytest.mark.django_db


def queued_task_ids(cluster="cpu") -> list[str]:
    return [entry.task_id() for entry in OrmQ.objects.filter(key=cluster)]


def files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def create(user, data=None, **options):
    return services.job_create(owner=user, file=data or small_png(), filename="note.png",
                               options=JobOptions(**options))


# --- submission -------------------------------------------------------------

def test_job_create_stores_document_and_queues_one_task(user, media_root):
    job, reused = create(user, pipeline="ocr", lang="de")

    assert reused is False
    assert job.status == Job.Status.QUEUED and job.cluster == "cpu"
    assert job.page_numbers == [1] and job.pages_total == 1
    assert job.document.media_type == "image/png" and job.document.original_name == "note.png"
    assert Path(job.document.file.path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert queued_task_ids("cpu") == [job.queue_task_id]


def test_page_range_selects_pages(user):
    job, _ = create(user, three_page_pdf(), pages="1,3")
    assert job.page_numbers == [1, 3] and job.pages_total == 2 and job.document.page_count == 3


def test_same_file_and_options_within_window_reuse_the_job(user, other_user):
    first, _ = create(user)
    again, reused = create(user)
    other_lang, reused_other_lang = create(user, lang="fr")
    others, reused_by_other = create(other_user)

    assert reused is True and again.pk == first.pk
    assert reused_other_lang is False and other_lang.pk != first.pk
    assert reused_by_other is False and others.pk != first.pk
    assert Job.objects.filter(owner=user).count() == 2


def test_dedup_window_and_failed_jobs(user, settings):
    first, _ = create(user)
    services.job_cancel(job=first, by=TESTER)
    after_cancel, reused = create(user)
    assert reused is False and after_cancel.pk != first.pk

    settings.OCR_DEDUP_WINDOW_SECONDS = 0
    later, reused = create(user)
    assert reused is False and later.pk != after_cancel.pk


def test_gpu_routing(user, settings):
    with pytest.raises(GpuRequired):
        create(user, pipeline="vl")
    assert not Job.objects.exists()

    settings.OCR_GPU_CLUSTER = True
    job, _ = create(user, pipeline="structure")
    assert job.cluster == "gpu"
    assert queued_task_ids("gpu") == [job.queue_task_id] and queued_task_ids("cpu") == []


@pytest.mark.parametrize("options, code", [
    ({"lang": "xx"}, "unsupported_option"),
    ({"pipeline": "magic"}, "unsupported_option"),
    ({"pages": "2"}, "page_out_of_range"),
    ({"pages": "one"}, "invalid_page_range"),
])
def test_rejected_submissions_store_nothing(user, media_root, options, code):
    with pytest.raises(OcrError) as error:
        create(user, **options)
    assert error.value.code == code
    assert not Job.objects.exists() and not Document.objects.exists() and not OrmQ.objects.exists()
    assert files_under(media_root) == []


# --- claim / pages / finish -------------------------------------------------

def test_claim_is_exclusive_and_counts_attempts(user):
    job, _ = create(user)
    claimed = services.job_claim(job_id=job.pk, worker_id="w1")

    assert claimed.status == Job.Status.RUNNING and claimed.worker_id == "w1" and claimed.attempts == 1
    assert claimed.started_at is not None and claimed.deadline_at > claimed.started_at
    assert services.job_claim(job_id=job.pk, worker_id="w2") is None


def test_stale_lease_is_taken_over_until_attempts_run_out(user, settings):
    job, _ = create(user)
    services.job_claim(job_id=job.pk, worker_id="w1")
    stale = timezone.now() - timedelta(seconds=settings.OCR_LEASE_SECONDS + 1)
    Job.objects.filter(pk=job.pk).update(heartbeat_at=stale)

    taken = services.job_claim(job_id=job.pk, worker_id="w2")
    assert taken.worker_id == "w2" and taken.attempts == 2
    assert services.job_heartbeat(job_id=job.pk, worker_id="w1") is False
    assert services.job_record_page(job_id=job.pk, worker_id="w1", record=page_record(1)) is False

    Job.objects.filter(pk=job.pk).update(heartbeat_at=stale, attempts=job.max_attempts)
    assert services.job_claim(job_id=job.pk, worker_id="w3") is None


def test_record_page_is_idempotent_and_keeps_finished_pages(user, media_root):
    job, _ = create(user)
    services.job_claim(job_id=job.pk, worker_id="w1")

    assert services.job_record_page(job_id=job.pk, worker_id="w1", record=page_record(1))
    first = PageResult.objects.get(job=job)
    assert services.job_record_page(job_id=job.pk, worker_id="w1", record=page_record(1, texts=("Other",)))

    page = PageResult.objects.get(job=job)
    assert (page.pk, page.updated_at) == (first.pk, first.updated_at)
    assert [line["text"] for line in page.normalized["lines"]] == ["Hello world", "Second line"]
    assert page.line_count == 2 and page.region_count == 1 and page.mean_confidence == pytest.approx(0.9)
    assert Path(page.image.path).read_bytes()[:2] == b"\xff\xd8"  # JPEG
    assert len(files_under(media_root / "pages")) == 2
    job.refresh_from_db()
    assert job.pages_done == 1


def test_finish_succeeds_or_fails_with_pages_failed(user):
    ok, _ = create(user)
    services.job_claim(job_id=ok.pk, worker_id="w")
    services.job_record_page(job_id=ok.pk, worker_id="w", record=page_record(1))
    finished = services.job_finish(job_id=ok.pk, worker_id="w")
    assert finished.status == Job.Status.SUCCEEDED and finished.finished_at is not None
    assert finished.timings == {"ocr": 0.5, "render": 0.1}

    bad, _ = create(user, three_page_pdf())
    services.job_claim(job_id=bad.pk, worker_id="w")
    services.job_record_page(job_id=bad.pk, worker_id="w", record=page_record(1))
    services.job_record_page(job_id=bad.pk, worker_id="w", record=failed_record(2))
    services.job_record_page(job_id=bad.pk, worker_id="w", record=page_record(3))
    failed = services.job_finish(job_id=bad.pk, worker_id="w")
    assert failed.status == Job.Status.FAILED and failed.error_code == "pages_failed"
    assert "(2)" in failed.error_detail and "recognition_failed" in failed.error_detail


def test_release_hands_the_job_to_any_worker_without_an_attempt(user):
    job, _ = create(user, three_page_pdf())
    services.job_claim(job_id=job.pk, worker_id="w1")
    services.job_record_page(job_id=job.pk, worker_id="w1", record=page_record(1))

    assert services.job_release(job_id=job.pk, worker_id="w1")
    job.refresh_from_db()
    assert job.status == Job.Status.RUNNING and job.heartbeat_at is None
    assert job.queue_task_id in queued_task_ids()

    resumed = services.job_claim(job_id=job.pk, worker_id="w2")
    assert resumed.worker_id == "w2" and resumed.attempts == 1


# --- cancel / retry / delete -------------------------------------------------

def test_cancel_stops_the_worker_at_the_next_page(user):
    job, _ = create(user, three_page_pdf())
    services.job_claim(job_id=job.pk, worker_id="w")
    services.job_record_page(job_id=job.pk, worker_id="w", record=page_record(1))

    canceled = services.job_cancel(job=job, by=TESTER)
    assert canceled.status == Job.Status.CANCELED
    assert services.job_heartbeat(job_id=job.pk, worker_id="w") is False
    assert services.job_record_page(job_id=job.pk, worker_id="w", record=page_record(2)) is False
    assert services.job_finish(job_id=job.pk, worker_id="w") is None
    assert list(job.pages.values_list("page_number", flat=True)) == [1]
    with pytest.raises(JobStateError):
        services.job_cancel(job=job, by=TESTER)


def test_retry_redoes_only_failed_pages(user):
    job, _ = create(user, three_page_pdf())
    services.job_claim(job_id=job.pk, worker_id="w")
    services.job_record_page(job_id=job.pk, worker_id="w", record=page_record(1))
    services.job_record_page(job_id=job.pk, worker_id="w", record=failed_record(2))
    services.job_record_page(job_id=job.pk, worker_id="w", record=page_record(3))
    services.job_finish(job_id=job.pk, worker_id="w")
    kept = {p.page_number: p.updated_at for p in job.pages.all() if p.status == "succeeded"}

    retried = services.job_retry(job=job, by=TESTER)
    assert retried.status == Job.Status.QUEUED and retried.error_code == "" and retried.attempts == 0
    assert retried.pages_done == 2 and retried.queue_task_id in queued_task_ids()
    assert {p.page_number: p.updated_at for p in job.pages.all()} == kept

    services.job_claim(job_id=job.pk, worker_id="w2")
    services.job_record_page(job_id=job.pk, worker_id="w2", record=page_record(2))
    assert services.job_finish(job_id=job.pk, worker_id="w2").status == Job.Status.SUCCEEDED
    with pytest.raises(JobStateError):
        services.job_retry(job=job, by=TESTER)


def test_delete_removes_rows_and_files(user, media_root, django_capture_on_commit_callbacks):
    job, _ = create(user)
    services.job_claim(job_id=job.pk, worker_id="w")
    services.job_record_page(job_id=job.pk, worker_id="w", record=page_record(1))
    assert len(files_under(media_root)) == 3  # upload, page JPEG, thumbnail

    with django_capture_on_commit_callbacks(execute=True):
        services.job_delete(job=job, by=TESTER)
    assert not Job.objects.exists() and not Document.objects.exists() and not PageResult.objects.exists()
    assert files_under(media_root) == []
    assert not (media_root / "pages" / str(job.pk)).exists()


# --- recovery ---------------------------------------------------------------

def test_requeue_stale_finds_lost_entries_and_dead_workers(user, settings):
    long_ago = timezone.now() - timedelta(seconds=settings.OCR_LEASE_SECONDS * 10)
    waiting, _ = create(user, pages="1")  # queued with its entry: left alone
    lost, _ = create(user, lang="fr")  # queued, entry lost
    OrmQ.objects.filter(key="cpu").exclude(pk=OrmQ.objects.order_by("pk").first().pk).delete()
    dead, _ = create(user, lang="de")  # running, worker gone
    services.job_claim(job_id=dead.pk, worker_id="w")
    # The dead worker had dequeued its entry: the ORM broker keeps it locked until `retry`.
    in_flight = next(e for e in OrmQ.objects.all() if e.task_id() == dead.queue_task_id)
    OrmQ.objects.filter(pk=in_flight.pk).update(lock=timezone.now() + timedelta(seconds=settings.Q_RETRY))
    exhausted = JobFactory(owner=user, status=Job.Status.RUNNING, heartbeat_at=long_ago, attempts=3,
                           max_attempts=3, worker_id="w")
    Job.objects.filter(pk__in=[waiting.pk, lost.pk, dead.pk]).update(enqueued_at=long_ago)
    Job.objects.filter(pk=dead.pk).update(heartbeat_at=long_ago)

    assert services.job_requeue_stale() == 2
    for job in (waiting, lost, dead, exhausted):
        job.refresh_from_db()
    pending = queued_task_ids()
    assert waiting.queue_task_id in pending and lost.queue_task_id in pending and dead.queue_task_id in pending
    assert exhausted.status == Job.Status.FAILED and exhausted.error_code == "worker_lost"
    assert services.job_requeue_stale() == 0  # their new entries are waiting now
