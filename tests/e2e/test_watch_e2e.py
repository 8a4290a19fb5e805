"""End to end: ``manage.py ocr_watch`` as its own process, a real qcluster and the real engine, PostgreSQL.

The watcher is SIGKILLed twice in the middle of a batch, once while it submits the files and once
while it exports them, and started again each time (polling the folder, as on a network share, the
last time): every file is OCRed by one job and exported once, and a file still being written is left
alone until it is whole.
"""

from __future__ import annotations

import os
import signal
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


def test_a_watcher_killed_mid_batch_and_restarted_exports_every_file_once(qcluster, settings, tmp_path,
                                                                         django_user_model):
    django_user_model.objects.create_user(username="scanner", password="pw")
    folder, out = tmp_path / "in", tmp_path / "out"
    folder.mkdir()
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ocrsite.settings.test", "DATABASE_URL": database_url(),
           "MEDIA_ROOT": str(settings.MEDIA_ROOT), "OCR_MODELS_DIR": str(settings.OCR_MODELS_DIR)}
    command = [sys.executable, "manage.py", "ocr_watch", str(folder), "--out", str(out), "--user", "scanner",
               "--format", "txt", "--settle-seconds", str(SETTLE_SECONDS)]
    logs = []

    def start_watcher(*options: str) -> subprocess.Popen:
        logs.append(tmp_path / f"watch-{len(logs)}.log")
        with logs[-1].open("wb") as log:
            return subprocess.Popen([*command, *options], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)

    def kill(watcher: subprocess.Popen) -> None:
        os.killpg(watcher.pid, signal.SIGKILL)
        watcher.wait(timeout=10)

    qcluster()
    watcher = start_watcher()
    try:
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

        watcher = start_watcher("--poll")
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
    finally:
        if watcher.poll() is None:
            os.killpg(watcher.pid, signal.SIGKILL)
        watcher.wait(timeout=10)
        for log in logs:
            print(f"--- {log.name} ---\n" + log.read_text(errors="replace")[-3000:])

    names = [word.lower() for word in (*WORDS, SLOW_WORD)]
    assert exported(out) == sorted(f"{name}.txt" for name in names)  # no second copy, no part left
    for word in (*WORDS, SLOW_WORD):
        assert word.lower() in (out / f"{word.lower()}.txt").read_text().lower()
    assert sorted(p.name for p in (folder / "done").iterdir()) == sorted(f"{name}.png" for name in names)
    assert Job.objects.count() == len(names) and not Job.objects.exclude(status=Job.Status.SUCCEEDED).exists()
    rows = WatchedFile.objects.all()
    assert sorted(row.name for row in rows) == sorted(f"{name}.png" for name in names)
    assert {row.state for row in rows} == {WatchedFile.State.DONE}
    assert rows.get(name=slow.name).size_bytes == len(data)
