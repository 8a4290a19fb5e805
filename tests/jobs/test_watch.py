"""The watched folder's service (jobs.services.watch) on the real database, without the engine.

The worker's part is played with real service calls (``run_pages``); time is a clock the test
moves, so that "stable for the settle interval" costs no waiting. A restart is a new ``Settling``
(what a new process starts with) on the rows a killed watcher left.
"""

from __future__ import annotations

import contextlib
import io
import threading
import time

import pypdf
import pytest
from django.core.management import CommandError, call_command

from jobs.models import Job, WatchedFile
from jobs.options import JobOptions
from django.db import connection

from jobs.services.watch import Settling, WatchMemory, WatchOptions, watch_run, watch_step
from tests.jobs.helpers import failed_record, page_record, small_png
from tests.jobs.test_api import run_pages

pytestmark = pytest.mark.django_db

SETTLE = 2.0


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def folders(tmp_path):
    (tmp_path / "in").mkdir()
    return tmp_path / "in", tmp_path / "out"


@pytest.fixture
def watch(folders, user):
    """pass_(after=seconds): one pass of the watcher, ``after`` seconds after the previous one."""
    folder, out = folders
    options = WatchOptions(folder=folder, out=out, owner=user, formats=("txt", "pdf"),
                           job_options=JobOptions(pipeline="ocr"),
                           settle_seconds=SETTLE)
    clock = Clock()
    memory = WatchMemory(Settling(SETTLE, clock=clock))

    def pass_(after: float = 0.0, restarted: bool = False):
        nonlocal memory
        if restarted:
            memory = WatchMemory(Settling(SETTLE, clock=clock))
        clock.now += after
        watch_step(options, memory)

    return pass_


def dropped(folder, name="scan.png", data=None):
    path = folder / name
    path.write_bytes(data or small_png())
    return path


def submitted(watch, folder, name="scan.png") -> Job:
    """Drop a file and let it settle: the job the watcher submitted for it."""
    dropped(folder, name)
    watch()
    watch(after=SETTLE)
    return WatchedFile.objects.get(name=name, state=WatchedFile.State.SUBMITTED).job


def test_a_file_is_submitted_once_its_size_and_mtime_stayed_the_same_for_the_settle_interval(watch, folders, user):
    folder, _ = folders
    growing = folder / "scan.png"
    data = small_png()
    growing.write_bytes(data[: len(data) // 2])
    (folder / ".scan.png.partial").write_bytes(data)  # a copy tool's hidden temporary file
    watch()
    watch(after=SETTLE - 0.5)
    with growing.open("ab") as fh:  # still being written
        fh.write(data[len(data) // 2:])
    watch(after=1.0)
    assert not WatchedFile.objects.exists() and not Job.objects.exists()

    watch(after=SETTLE)
    [row] = WatchedFile.objects.all()
    assert row.name == "scan.png" and row.state == WatchedFile.State.SUBMITTED and row.size_bytes == len(data)
    assert row.job.owner == user and row.job.pipeline == "ocr" and row.job.status == Job.Status.QUEUED
    assert row.job.document.sha256 == row.sha256 and row.job.document.original_name == "scan.png"


def test_a_finished_job_writes_its_exports_and_moves_the_original_to_done(watch, folders):
    folder, out = folders
    job = submitted(watch, folder, "letter.page1.png")
    watch(after=5)
    assert not out.exists() or not list(out.iterdir())  # the job has not run yet

    run_pages(job, [page_record(1, texts=("Dear watcher",))])
    watch()
    assert sorted(p.name for p in out.iterdir()) == ["letter.page1.png.pdf", "letter.page1.png.txt"]
    assert "Dear watcher" in (out / "letter.page1.png.txt").read_text()
    pdf = pypdf.PdfReader(io.BytesIO((out / "letter.page1.png.pdf").read_bytes()))
    assert "Dear watcher" in pdf.pages[0].extract_text()
    assert [p.name for p in (folder / "done").iterdir()] == ["letter.page1.png"]
    assert not (folder / "letter.page1.png").exists()
    assert WatchedFile.objects.get().state == WatchedFile.State.DONE

    watch(after=SETTLE)
    watch(after=SETTLE)
    assert Job.objects.count() == 1 and WatchedFile.objects.count() == 1


def test_a_file_refused_as_an_upload_goes_to_failed_with_the_reason_beside_it(watch, folders):
    folder, out = folders
    dropped(folder, "notes.png", b"this is not an image at all")
    watch()
    watch(after=SETTLE)
    assert sorted(p.name for p in (folder / "failed").iterdir()) == ["notes.png", "notes.png.error.txt"]
    assert (folder / "failed" / "notes.png.error.txt").read_text().startswith("unsupported_file_type: ")
    row = WatchedFile.objects.get()
    assert row.state == WatchedFile.State.FAILED and row.error_code == "unsupported_file_type" and row.job is None
    assert not Job.objects.exists() and not out.exists()


def test_a_failed_job_moves_the_original_to_failed_with_the_jobs_error(watch, folders):
    folder, out = folders
    job = submitted(watch, folder)
    run_pages(job, [failed_record(1)])
    watch()
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    error = (folder / "failed" / "scan.png.error.txt").read_text()
    assert error.startswith(f"{job.error_code}: ") and (folder / "failed" / "scan.png").exists()
    assert not out.exists()
    assert WatchedFile.objects.get().state == WatchedFile.State.FAILED


def test_a_restarted_watcher_neither_submits_again_nor_loses_a_submitted_file(watch, folders):
    folder, out = folders
    job = submitted(watch, folder)
    watch(after=SETTLE, restarted=True)
    watch(after=SETTLE)
    assert Job.objects.count() == 1  # the file is still in the folder, and known

    run_pages(job, [page_record(1, texts=("Kept across restarts",))])
    watch(restarted=True)
    assert "Kept across restarts" in (out / "scan.png.txt").read_text() and (folder / "done" / "scan.png").exists()


def test_a_watcher_killed_between_the_exports_and_the_move_finishes_the_move(watch, folders):
    folder, out = folders
    job = submitted(watch, folder)
    run_pages(job, [page_record(1)])
    # What a watcher killed right after writing the exports leaves: state exported, original in place.
    (out / "scan.png.txt").parent.mkdir(parents=True)
    (out / "scan.png.txt").write_text("written before the kill")
    WatchedFile.objects.update(state=WatchedFile.State.EXPORTED)
    watch(restarted=True)
    assert (folder / "done" / "scan.png").exists() and not (folder / "scan.png").exists()
    assert WatchedFile.objects.get().state == WatchedFile.State.DONE and Job.objects.count() == 1


def test_a_watcher_killed_while_failing_a_file_finishes_failing_it(watch, folders):
    folder, _ = folders
    dropped(folder, "notes.png", b"not an image")
    # What a watcher killed after recording the refusal, before any move, leaves.
    WatchedFile.objects.create(folder=str(folder), name="notes.png", size_bytes=12,
                               mtime_ns=(folder / "notes.png").stat().st_mtime_ns, sha256="0" * 64,
                               error_code="unsupported_file_type", error_detail="Not a supported file.")
    watch(restarted=True)
    assert (folder / "failed" / "notes.png").exists()
    assert (folder / "failed" / "notes.png.error.txt").read_text() == "unsupported_file_type: Not a supported file.\n"
    assert WatchedFile.objects.get().state == WatchedFile.State.FAILED


def test_a_file_replaced_while_its_job_ran_is_left_in_place_and_taken_as_a_new_file(watch, folders):
    folder, out = folders
    job = submitted(watch, folder)
    dropped(folder, "scan.png", small_png() + b"\0")  # another file under the same name
    run_pages(job, [page_record(1)])
    watch()
    assert (out / "scan.png.txt").exists() and (folder / "scan.png").exists()
    assert not (folder / "done" / "scan.png").exists()
    watch()
    watch(after=SETTLE)
    assert WatchedFile.objects.filter(state=WatchedFile.State.SUBMITTED).count() == 1
    assert Job.objects.count() == 2


def test_the_same_file_dropped_again_is_exported_again_from_the_same_job(watch, folders):
    folder, out = folders
    job = submitted(watch, folder)
    run_pages(job, [page_record(1, texts=("Once only",))])
    watch()
    (out / "scan.png.txt").unlink()
    dropped(folder)
    watch()
    watch(after=SETTLE)
    watch()
    assert "Once only" in (out / "scan.png.txt").read_text() and Job.objects.count() == 1  # the dedup window
    assert list(WatchedFile.objects.values_list("state", flat=True)) == ["done", "done"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("force_polling", [True, False], ids=["polling", "inotify"])
def test_the_running_watcher_takes_a_dropped_file_and_stops_when_told(folders, user, force_polling):
    folder, out = folders
    options = WatchOptions(folder=folder, out=out, owner=user, formats=("txt",),
                           job_options=JobOptions(pipeline="ocr"), settle_seconds=0.5)
    with running_watcher(options, force_polling=force_polling) as watcher:
        dropped(folder, "notes.png", b"not an image")
        deadline = time.monotonic() + 20
        while not (folder / "failed" / "notes.png.error.txt").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (folder / "failed" / "notes.png").exists()
    assert not watcher.is_alive()


@contextlib.contextmanager
def running_watcher(options: WatchOptions, *, force_polling: bool):
    """``watch_run`` in a thread of its own for the ``with`` block; told to stop and joined after it."""
    stop = threading.Event()

    def run():
        try:
            watch_run(options, force_polling=force_polling, stop=stop)
        finally:
            connection.close()  # this thread's own

    watcher = threading.Thread(target=run)
    watcher.start()
    try:
        yield watcher
    finally:
        stop.set()
        watcher.join(timeout=10)


def test_the_command_refuses_unknown_formats_and_an_out_dir_inside_the_watched_folder(folders, user):
    folder, out = folders
    with pytest.raises(CommandError, match="unsupported_option"):
        call_command("ocr_watch", str(folder), "--out", str(out), "--user", user.username, "--format", "txt,docx")
    with pytest.raises(CommandError, match="must not be inside"):
        call_command("ocr_watch", str(folder), "--out", str(folder / "out"), "--user", user.username)
    with pytest.raises(CommandError, match="No user"):
        call_command("ocr_watch", str(folder), "--out", str(out), "--user", "nobody")


def test_the_admin_lists_watched_files_read_only(watch, folders, client, django_user_model):
    folder, _ = folders
    submitted(watch, folder, "invoice.png")
    client.force_login(django_user_model.objects.create_superuser(username="root", password="pw"))
    listing = client.get("/admin/jobs/watchedfile/")
    assert listing.status_code == 200 and "invoice.png" in listing.content.decode()
    assert client.get("/admin/jobs/watchedfile/add/").status_code == 403
