"""The worker task with the real engine and models: idempotent, resumable, time-boxed."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db.models.signals import post_save
from django_q.models import OrmQ
from PIL import Image

from jobs.options import JobOptions
from jobs import progress, services, tasks
from jobs.models import Job, PageClaim, PageResult
from tests.jobs.helpers import TESTER
from tests.ocr_engine import bad_files, samples

pytestmark = [pytest.mark.django_db, pytest.mark.models]


def text_png() -> bytes:
    return samples.encode(samples.text_page(dpi=100).image, "PNG")


class Listener:
    """Joins a job's group on the real channel layer and collects what the worker publishes."""

    def __init__(self, job_id):
        self.layer = get_channel_layer()
        self.channel = async_to_sync(self.layer.new_channel)()
        async_to_sync(self.layer.group_add)(progress.job_group(job_id), self.channel)

    def events(self) -> list[dict]:
        async def drain():
            out = []
            while True:
                try:
                    out.append(await asyncio.wait_for(self.layer.receive(self.channel), 0.2))
                except asyncio.TimeoutError:
                    return out

        return async_to_sync(drain)()


def test_task_run_twice_makes_each_page_and_event_once(user, settings, django_capture_on_commit_callbacks):
    job, _ = services.job_create(owner=user, file=text_png(), filename="bridges.png",
                                 options=JobOptions(pipeline="ocr"))
    listener = Listener(job.pk)

    with django_capture_on_commit_callbacks(execute=True):
        tasks.process_job(str(job.pk))
    first = PageResult.objects.get(job=job)
    with django_capture_on_commit_callbacks(execute=True):
        tasks.process_job(str(job.pk))  # at-least-once delivery: the same task again

    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED and job.pages_done == 1 and job.attempts == 1
    page = PageResult.objects.get(job=job)
    assert (page.pk, page.updated_at) == (first.pk, first.updated_at)
    assert "bridges" in page.normalized["text"].lower()
    region_ids = {r["id"] for r in page.normalized["regions"]}
    assert page.line_count > 3 and all(line["region_id"] in region_ids for line in page.normalized["lines"])
    assert page.image.open("rb").read(2) == b"\xff\xd8"
    with Image.open(page.image.open("rb")) as full, Image.open(page.thumbnail.open("rb")) as thumbnail:
        assert full.size == (page.width, page.height) and thumbnail.format == "WEBP"
        assert max(thumbnail.size) == settings.OCR_THUMBNAIL_SIZE  # fits the box, keeps the page's shape
        assert thumbnail.width / thumbnail.height == pytest.approx(full.width / full.height, rel=0.01)
    assert set(job.timings) >= {"render", "ocr"} and job.engine["pipeline"] == "ocr"

    events = listener.events()
    assert [e["event"] for e in events] == ["started", "page_done", "succeeded"]
    assert events[1]["page_number"] == 1 and events[1]["line_count"] == page.line_count
    assert events[-1]["job"]["status"] == "succeeded" and events[-1]["job"]["pages_done"] == 1


def test_budget_spent_hands_over_page_by_page(user, settings, django_capture_on_commit_callbacks):
    settings.OCR_TASK_BUDGET_SECONDS = 0  # every slice does one page, then queues its continuation
    job, _ = services.job_create(owner=user, file=samples.report_pdf(pages=3, dpi=50).data, filename="r.pdf",
                                 options=JobOptions(pipeline="ocr"))
    OrmQ.objects.all().delete()

    tasks.process_job(str(job.pk))
    job.refresh_from_db()
    assert job.status == Job.Status.RUNNING and job.pages_done == 1 and job.heartbeat_at is None
    assert [e.task_id() for e in OrmQ.objects.all()] == [job.queue_task_id]

    with django_capture_on_commit_callbacks(execute=True):
        tasks.process_job(str(job.pk))
        tasks.process_job(str(job.pk))
    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED and job.pages_done == 3 and job.attempts == 1
    assert list(job.pages.values_list("page_number", "status")) == [(n, "succeeded") for n in (1, 2, 3)]


def test_next_page_is_read_while_the_page_before_is_stored(user, django_capture_on_commit_callbacks):
    job, _ = services.job_create(owner=user, file=samples.report_pdf(pages=3, dpi=50).data, filename="r.pdf",
                                 options=JobOptions(pipeline="ocr"))
    claimed_when_stored = {}

    def stored(sender, instance, **kwargs):
        claimed_when_stored[instance.page_number] = list(
            PageClaim.objects.filter(job_id=instance.job_id).values_list("page_number", flat=True))

    post_save.connect(stored, sender=PageResult)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            tasks.process_job(str(job.pk))
    finally:
        post_save.disconnect(stored, sender=PageResult)

    job.refresh_from_db()
    assert job.status == Job.Status.SUCCEEDED and job.pages_done == 3
    # Each page is stored while the next one, already claimed, is being read.
    assert claimed_when_stored == {1: [2], 2: [3], 3: []}


def test_deadline_fails_the_job_with_timeout(user, settings, django_capture_on_commit_callbacks):
    settings.OCR_JOB_TIMEOUT_BASE_SECONDS = 0
    settings.OCR_JOB_TIMEOUT_PER_PAGE_SECONDS = 0
    job, _ = services.job_create(owner=user, file=text_png(), filename="late.png", options=JobOptions(pipeline="ocr"))

    with django_capture_on_commit_callbacks(execute=True):
        tasks.process_job(str(job.pk))

    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.error_code == "timeout"
    assert not job.pages.exists()


def test_canceled_or_deleted_jobs_are_skipped(user):
    job, _ = services.job_create(owner=user, file=text_png(), filename="x.png", options=JobOptions(pipeline="ocr"))
    services.job_cancel(job=job, by=TESTER)
    tasks.process_job(str(job.pk))
    tasks.process_job("00000000-0000-0000-0000-000000000000")

    job.refresh_from_db()
    assert job.status == Job.Status.CANCELED and not job.pages.exists() and job.attempts == 0


def test_an_image_cut_off_after_its_header_is_accepted_and_its_job_fails_with_corrupt_file(
        user, django_capture_on_commit_callbacks):
    # The web process checks headers only (issue 12: submissions stay fast); decoding is the worker's.
    job, _ = services.job_create(owner=user, file=bad_files.truncated(text_png(), keep=0.6), filename="cut.png",
                                 options=JobOptions(pipeline="ocr"))
    listener = Listener(job.pk)
    with django_capture_on_commit_callbacks(execute=True):
        tasks.process_job(str(job.pk))

    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.error_code == "corrupt_file"
    assert "damaged or incomplete" in job.error_detail and not job.pages.exists()
    assert [e["event"] for e in listener.events()][-1] == "failed"
