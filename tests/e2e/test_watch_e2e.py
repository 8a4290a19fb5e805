"""End to end: ``manage.py ocr_watch`` as its own process, a real qcluster and the real engine, PostgreSQL.

A watcher killed mid-batch: it is SIGKILLed twice in the middle of a batch, once while it submits the files and once
while it exports them, and started again each time (polling the folder, as on a network share, the
last time): every file is OCRed by one job and exported once, and a file still being written is left
alone until it is whole.

A watcher under attack by whoever may write to its folder: links planted in place of done/ and failed/
(before the start, and while it runs), a link to a file outside and a FIFO among the inputs, a file
swapped for a link while it settles, a name that is not UTF-8 (which ends watchfiles' own watch), two
files with one stem: nothing outside the two folders changes, the watcher keeps running, and every
good file is exported once.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from jobs.models import Job, WatchedFile
from tests.e2e.workers import REPO, database_url
from tests.ocr_engine import samples

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db(transaction=True)]

WORDS = ("Alder", "Birch", "Cedar", "Maple", "Rowan", "Willow")
SLOW_WORD = "Hazel"
SETTLE_SECONDS = 1.0


def page_png(word: str) -> bytes:
    page = samples.text_page(title=f"Watched {word}", paragraphs=(f"The {word} grows near the river.",),
                             dpi=100, size_in=(4.0, 1.5))
    return samples.encode(page.image, "PNG")


def exported(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir()) if out.exists() else []


def wait_until(condition, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def start_watcher(settings, tmp_path, django_user_model):
    """start(*options): ``ocr_watch IN_DIR --out OUT_DIR`` (``tmp_path``/in and /out) as user ``scanner``, in a
    process group of its own, its output in ``logs``; each is killed and its log printed at the end."""
    django_user_model.objects.create_user(username="scanner", password="pw")
    (tmp_path / "in").mkdir()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ocrsite.settings.test", "DATABASE_URL": database_url(),
           "MEDIA_ROOT": str(settings.MEDIA_ROOT), "OCR_MODELS_DIR": str(settings.OCR_MODELS_DIR)}
    command = [sys.executable, "manage.py", "ocr_watch", str(tmp_path / "in"), "--out", str(tmp_path / "out"),
               "--user", "scanner", "--format", "txt", "--settle-seconds", str(SETTLE_SECONDS)]
    logs, started = [], []

    def start(*options: str) -> subprocess.Popen:
        logs.append(tmp_path / f"watch-{len(logs)}.log")
        with logs[-1].open("wb") as log:
            started.append(subprocess.Popen([*command, *options], cwd=REPO, env=env, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True))
        return started[-1]

    start.logs = logs
    yield start
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    for log in logs:
        print(f"--- {log.name} ---\n" + log.read_text(errors="replace")[-3000:])


def kill(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


def test_a_watcher_killed_mid_batch_and_restarted_exports_every_file_once(qcluster, start_watcher, tmp_path):
    folder, out = tmp_path / "in", tmp_path / "out"
    qcluster()
    watcher = start_watcher()
    for word in WORDS:
        (folder / f"{word.lower()}.png").write_bytes(page_png(word))
    wait_until(lambda: WatchedFile.objects.filter(state=WatchedFile.State.SUBMITTED).exists(), 60,
               "the first submission")
    kill(watcher)  # most likely among the submissions (a few ms each)
    print("submitted at the first kill:", WatchedFile.objects.filter(state=WatchedFile.State.SUBMITTED).count())

    watcher = start_watcher()
    wait_until(lambda: exported(out), 180, "the first export")
    kill(watcher)
    at_kill = exported(out)
    assert 1 <= len(at_kill) < len(WORDS), at_kill  # killed mid-batch

    start_watcher("--poll")
    slow = folder / f"{SLOW_WORD.lower()}.png"
    data = page_png(SLOW_WORD)
    with slow.open("wb") as fh:  # written in chunks, with pauses shorter than the settle interval
        for start in range(0, len(data), len(data) // 6 + 1):
            fh.write(data[start:start + len(data) // 6 + 1])
            fh.flush()
            time.sleep(SETTLE_SECONDS / 2)
            assert not WatchedFile.objects.filter(name=slow.name).exists()
    wait_until(lambda: len(exported(out)) == len(WORDS) + 1, 180, "every export")
    wait_until(lambda: not any(folder.glob("*.png")), 30, "the originals to move to done/")

    names = [word.lower() for word in (*WORDS, SLOW_WORD)]
    assert exported(out) == sorted(f"{name}.png.txt" for name in names)  # no second copy, no part left
    for word in (*WORDS, SLOW_WORD):
        assert word.lower() in (out / f"{word.lower()}.png.txt").read_text().lower()
    assert sorted(p.name for p in (folder / "done").iterdir()) == sorted(f"{name}.png" for name in names)
    assert Job.objects.count() == len(names) and not Job.objects.exclude(status=Job.Status.SUCCEEDED).exists()
    rows = WatchedFile.objects.all()
    assert sorted(row.name for row in rows) == sorted(f"{name}.png" for name in names)
    assert {row.state for row in rows} == {WatchedFile.State.DONE}
    assert rows.get(name=slow.name).size_bytes == len(data)


SECRET = b"the watcher's own secret\n"


def test_a_watcher_under_attack_touches_nothing_outside_and_exports_every_good_file_once(qcluster, start_watcher,
                                                                                       settings, tmp_path):
    folder, out, outside = tmp_path / "in", tmp_path / "out", tmp_path / "outside"
    (outside / "trap").mkdir(parents=True)
    (outside / "secret").write_bytes(SECRET)
    media = Path(settings.MEDIA_ROOT)

    def elsewhere() -> list[str]:
        """What there is beside the two folders (the jobs' media and the logs left out)."""
        return sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*")
                      if not any(p.is_relative_to(mine) for mine in (folder, out, media)) and p.suffix != ".log")

    before = elsewhere()

    (folder / "done").symlink_to(outside / "trap")
    refused = start_watcher()
    assert refused.wait(timeout=60) != 0
    assert "is a symbolic link" in start_watcher.logs[-1].read_text()
    (folder / "done").unlink()

    qcluster()
    watcher = start_watcher()
    wait_until(lambda: (folder / "failed").is_dir(), 60, "the watcher to make done/ and failed/")
    for name in ("failed", "done"):  # planted while it runs, before any file came
        (folder / name).rmdir()
        (folder / name).symlink_to(outside / "trap")
    (folder / "secret.png").symlink_to(outside / "secret")
    os.mkfifo(folder / "pipe.png")
    (folder / "notes.png").write_bytes(b"not an image")  # refused as an upload: for failed/
    Path(os.fsdecode(bytes(folder) + b"/bad\xff.png")).write_bytes(page_png("Aspen"))
    (folder / "page.png").write_bytes(page_png("Poplar"))
    (folder / "page.jpeg").write_bytes(samples.encode(samples.text_page(
        title="Watched Spruce", paragraphs=("The Spruce grows near the river.",), dpi=100,
        size_in=(4.0, 1.5)).image, "JPEG"))
    (folder / "swap.png").write_bytes(page_png("Larch"))
    (folder / "swap.png").unlink()  # replaced by a link while it settles
    (folder / "swap.png").symlink_to(outside / "secret")
    (folder / "after.png").write_bytes(page_png("Linden"))

    wait_until(lambda: len(exported(out)) == 3, 180, "the three good files' exports")
    log = start_watcher.logs[-1]
    wait_until(lambda: "refused: done/ is not a folder" in log.read_text(), 30, "the refusal of done/")
    wait_until(lambda: "refused: failed/ is not a folder" in log.read_text(), 30, "the refusal of failed/")
    # Whether watchfiles itself meets the bad name depends on how its events batch up with the
    # others' here; its fallback is tested alone (test_watch_hostile). What counts is below.
    assert (folder / "page.png").exists() and (folder / "notes.png").exists()  # they stay
    assert sorted(str(p.relative_to(tmp_path)) for p in outside.rglob("*")) == ["outside/secret", "outside/trap"]

    for name in ("failed", "done"):  # the operator removes the links: the watcher makes its folders again
        (folder / name).unlink()
    wait_until(lambda: sorted(os.listdir(folder)) == ["done", "failed", "pipe.png", "secret.png", "swap.png"], 30,
               "every file to be moved")
    assert watcher.poll() is None  # still running

    assert exported(out) == ["after.png.txt", "page.jpeg.txt", "page.png.txt"]
    for name, word in (("after.png", "linden"), ("page.png", "poplar"), ("page.jpeg", "spruce")):
        assert word in (out / f"{name}.txt").read_text().lower()
    assert sorted(os.listdir(folder / "done")) == ["after.png", "page.jpeg", "page.png"]
    assert sorted(os.listdir(bytes(folder / "failed"))) == [b"bad\xff.png", b"bad\xff.png.error.txt", b"notes.png",
                                                            b"notes.png.error.txt"]
    assert (folder / "failed" / os.fsdecode(b"bad\xff.png.error.txt")).read_text().startswith("file_name_not_utf8:")
    assert stat.S_ISFIFO((folder / "pipe.png").lstat().st_mode) and (folder / "secret.png").is_symlink()
    assert (outside / "secret").read_bytes() == SECRET and not any((outside / "trap").iterdir())
    assert elsewhere() == before  # nothing new outside the two folders
    assert Job.objects.filter(status=Job.Status.SUCCEEDED).count() == 3 and Job.objects.count() == 3
