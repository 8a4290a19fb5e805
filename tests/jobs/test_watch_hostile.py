"""The watched folder against whoever may write to it: real links, FIFOs and odd names in real folders.

Every test keeps a folder outside the watched ones with a secret file in it, which the planted links
point at: it must end as it began (nothing written, moved or created there), and the watcher must go
on with the other files.
"""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from jobs.models import Job, WatchedFile
from jobs.options import JobOptions
from jobs.services.watch import WatchOptions, file_submit, name_problems
from jobs.services.watch_files import Refused, folder_files, opened_dir
from tests.jobs.helpers import page_record, small_png
from tests.jobs.test_api import run_pages
from tests.jobs.test_watch import (  # noqa: F401 - fixtures
    SETTLE, dropped, folders, running_watcher, submitted, watch,
)

pytestmark = pytest.mark.django_db

SECRET = b"the watcher's own secret\n"


@pytest.fixture
def outside(tmp_path):
    """A folder the watcher must never touch, with a secret file: what the planted links point at."""
    place = tmp_path / "outside"
    place.mkdir()
    (place / "secret").write_bytes(SECRET)
    return place


def untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["secret"]
    assert (outside / "secret").read_bytes() == SECRET


def link(path: Path, target: Path) -> None:
    """Put a symbolic link to ``target`` in place of whatever ``path`` is."""
    if path.is_dir() and not path.is_symlink():
        path.rmdir()
    path.unlink(missing_ok=True)
    path.symlink_to(target)


def wait_until(condition, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def names(folder: Path) -> list[bytes]:
    """What a folder holds, as the bytes of each name."""
    return sorted(os.listdir(bytes(folder)))


@pytest.mark.parametrize("subfolder", ["done", "failed"])
@pytest.mark.parametrize("planted", ["link", "file"])
def test_the_watcher_does_not_start_where_done_or_failed_is_a_link_or_a_file(folders, user, outside, subfolder,
                                                                          planted):
    folder, out = folders
    dropped(folder, "notes.png", b"not an image")
    if planted == "link":
        link(folder / subfolder, outside)
    else:
        (folder / subfolder).write_bytes(b"a file, not a folder")
    expected = "is a symbolic link" if planted == "link" else "is not a folder"
    with pytest.raises(CommandError, match=f"{subfolder} {expected}"):
        call_command("ocr_watch", str(folder), "--out", str(out), "--user", user.username)
    untouched(outside)
    assert (folder / "notes.png").exists() and not WatchedFile.objects.exists()


def test_a_link_planted_in_place_of_done_while_running_is_refused_logged_once_and_the_file_stays(
        watch, folders, outside, caplog):
    folder, out = folders
    job = submitted(watch, folder)
    link(folder / "done", outside)
    run_pages(job, [page_record(1, texts=("Exported anyway",))])
    with caplog.at_level(logging.WARNING, logger="jobs.services.watch"):
        watch()
        watch()
    assert "Exported anyway" in (out / "scan.png.txt").read_text()
    assert (folder / "scan.png").exists() and WatchedFile.objects.get().state == WatchedFile.State.EXPORTED
    untouched(outside)
    refusals = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(refusals) == 1 and "done/ is not a folder" in refusals[0]

    (folder / "done").unlink()  # the operator removes the link: the next pass makes done/ again
    watch()
    assert (folder / "done" / "scan.png").exists() and WatchedFile.objects.get().state == WatchedFile.State.DONE
    untouched(outside)


def test_a_link_planted_in_place_of_failed_while_running_is_refused_and_the_files_stay(watch, folders, outside,
                                                                                     caplog):
    folder, _ = folders
    dropped(folder, "notes.png", b"not an image")
    dropped(folder, "memo.png", b"not an image either")
    (folder / "failed").mkdir()
    link(folder / "failed", outside)
    with caplog.at_level(logging.WARNING, logger="jobs.services.watch"):
        watch()
        watch(after=SETTLE)
        watch()
    untouched(outside)
    rows = WatchedFile.objects.all()
    assert {row.error_code for row in rows} == {"unsupported_file_type"}
    assert {row.state for row in rows} == {WatchedFile.State.SEEN}
    assert (folder / "notes.png").exists() and (folder / "memo.png").exists()
    assert sum("failed/ is not a folder" in r.getMessage() for r in caplog.records) == 1  # two files, three passes

    (folder / "failed").unlink()
    watch()
    assert names(folder / "failed") == [b"memo.png", b"memo.png.error.txt", b"notes.png", b"notes.png.error.txt"]
    untouched(outside)


def test_links_planted_under_the_names_of_exports_and_error_files_are_replaced_not_written_through(
        watch, folders, outside):
    folder, out = folders
    out.mkdir()
    (folder / "failed").mkdir()
    link(out / "scan.png.txt", outside / "secret")
    link(folder / "failed" / "notes.png.error.txt", outside / "secret")
    dropped(folder, "notes.png", b"not an image")
    job = submitted(watch, folder)
    run_pages(job, [page_record(1, texts=("Own file",))])
    watch()
    untouched(outside)
    assert not (out / "scan.png.txt").is_symlink() and "Own file" in (out / "scan.png.txt").read_text()
    error = folder / "failed" / "notes.png.error.txt"
    assert not error.is_symlink() and error.read_text().startswith("unsupported_file_type: ")


def test_a_file_swapped_for_a_link_or_a_fifo_after_the_listing_is_refused_without_reading_it(
        folders, user, outside):
    folder, out = folders
    options = WatchOptions(folder=folder, out=out, owner=user, formats=("txt",), job_options=JobOptions(pipeline="ocr"))
    dropped(folder, "scan.png")
    dropped(folder, "pipe.png")
    with opened_dir(folder) as folder_fd:
        listed = folder_files(folder_fd)
        link(folder / "scan.png", outside / "secret")  # after the listing, before the read
        (folder / "pipe.png").unlink()
        os.mkfifo(folder / "pipe.png")  # no writer: an open that waited for one would hang here
        for name in ("scan.png", "pipe.png"):
            with pytest.raises(Refused, match="no longer a regular file"):
                file_submit(options, folder_fd, name, listed[name], None)
    assert not Job.objects.exists() and not WatchedFile.objects.exists()
    untouched(outside)


def test_links_and_fifos_dropped_in_are_left_alone_and_the_good_file_beside_them_is_taken(watch, folders, outside):
    folder, _ = folders
    link(folder / "scan.png", outside / "secret")
    os.mkfifo(folder / "pipe.png")
    submitted(watch, folder, "good.png")
    assert [row.name for row in WatchedFile.objects.all()] == ["good.png"]
    assert (folder / "scan.png").is_symlink() and (folder / "pipe.png").exists()
    untouched(outside)


def test_names_the_watcher_cannot_keep_apart_go_to_failed_with_the_reason_and_the_others_go_on(watch, folders):
    folder, _ = folders
    bad = b"scan\xff.png"
    long = "l" * 242 + ".png"  # 246 bytes: its error file's name would pass 255
    Path(os.fsdecode(bytes(folder) + b"/" + bad)).write_bytes(small_png())
    dropped(folder, long)
    dropped(folder, "done", b"a file under the name of the done/ folder")
    job = submitted(watch, folder, "good.png")

    failed = names(folder / "failed")
    assert failed == sorted([bad, bad + b".error.txt", b"done", b"done.error.txt", long.encode(),
                             long[:245].encode() + b".error.txt"])
    assert (folder / "failed" / os.fsdecode(bad + b".error.txt")).read_text().startswith("file_name_not_utf8: ")
    rows = {row.name: row for row in WatchedFile.objects.filter(state=WatchedFile.State.FAILED)}
    assert {name: row.error_code for name, row in rows.items()} == {
        "scan\\xff.png": "file_name_not_utf8", long: "file_name_too_long", "done": "file_name_reserved"}

    run_pages(job, [page_record(1)])
    watch()
    assert names(folder / "done") == [b"good.png"]


def test_two_files_with_one_stem_keep_their_own_exports(watch, folders):
    folder, out = folders
    dropped(folder, "a.png", small_png())
    dropped(folder, "a.jpeg", small_png() + b"\0")  # another file (the type is read from the content)
    watch()
    watch(after=SETTLE)
    jobs = {row.name: row.job for row in WatchedFile.objects.all()}
    for name, job in jobs.items():
        run_pages(job, [page_record(1, texts=(f"Text of {name}",))])
    watch()
    assert names(out) == [b"a.jpeg.pdf", b"a.jpeg.txt", b"a.png.pdf", b"a.png.txt"]
    assert "Text of a.png" in (out / "a.png.txt").read_text()
    assert "Text of a.jpeg" in (out / "a.jpeg.txt").read_text()


def test_a_name_whose_exports_would_take_another_files_names_clashes():
    assert name_problems(["x.png", "x.png.pdfa"], taken=[], formats=("txt", "pdf")) == {}
    problems = name_problems(["x.png", "x.png.pdfa"], taken=[], formats=("pdf", "pdfa"))
    assert list(problems) == ["x.png.pdfa"] and problems["x.png.pdfa"][0] == "file_name_clash"
    problems = name_problems(["x.png.pdfa"], taken=["x.png"], formats=("pdf", "pdfa"))  # x.png in progress
    assert list(problems) == ["x.png.pdfa"]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("force_polling", [True, False], ids=["polling", "inotify"])
def test_the_running_watcher_survives_a_name_watchfiles_cannot_decode(folders, user, force_polling, caplog):
    folder, out = folders
    options = WatchOptions(folder=folder, out=out, owner=user, formats=("txt",),
                           job_options=JobOptions(pipeline="ocr"), settle_seconds=0.3)
    with running_watcher(options, force_polling=force_polling) as watcher:
        Path(os.fsdecode(bytes(folder) + b"/bad\xff.png")).write_bytes(b"x")
        os.mkdir(bytes(folder) + b"/folder\xff")  # stays: watchfiles' polling sees it too
        wait_until(lambda: "watchfiles stopped on a name that is not UTF-8" in caplog.text, "watchfiles to fail")
        dropped(folder, "notes.png", b"not an image")  # after it: still taken
        wait_until(lambda: (folder / "failed" / "notes.png.error.txt").exists(), "notes.png in failed/")
        assert (folder / "failed" / "notes.png").exists() and watcher.is_alive()
        assert b"bad\xff.png" in names(folder / "failed")
    assert not watcher.is_alive()


def test_a_file_over_the_upload_limit_goes_to_failed_unread(watch, folders, settings):
    folder, _ = folders
    settings.OCR_MAX_UPLOAD_BYTES = 100
    dropped(folder, "big.png")
    watch()
    watch(after=SETTLE)
    assert (folder / "failed" / "big.png.error.txt").read_text().startswith("file_too_large: ")
    row = WatchedFile.objects.get()
    assert row.state == WatchedFile.State.FAILED and row.sha256 == "" and not Job.objects.exists()


def test_a_hard_link_to_a_file_outside_goes_to_failed_unread(watch, folders, outside):
    folder, _ = folders
    (outside / "scan.png").write_bytes(small_png())  # a file a writer may not read, which the watcher may
    os.link(outside / "scan.png", folder / "scan.png")
    watch()
    watch(after=SETTLE)
    assert (folder / "failed" / "scan.png.error.txt").read_text().startswith("file_hard_linked: ")
    assert not Job.objects.exists() and (outside / "scan.png").read_bytes() == small_png()


def test_a_restarted_watcher_submits_a_file_it_had_only_seen(watch, folders, user):
    folder, _ = folders
    dropped(folder)
    # What a watcher killed between saving the row and committing the job leaves.
    WatchedFile.objects.create(folder=str(folder), name="scan.png", size_bytes=(folder / "scan.png").stat().st_size,
                               mtime_ns=(folder / "scan.png").stat().st_mtime_ns, sha256="0" * 64)
    watch(restarted=True)
    watch(after=SETTLE)
    row = WatchedFile.objects.get()
    assert row.state == WatchedFile.State.SUBMITTED and row.job is not None and not row.error_code
