"""The ``ocr-client`` command line against the real stack: a folder submitted, killed, resumed; the other commands."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.client.conftest import page_png
from tests.e2e.conftest import free_port

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db]  # django_db: see conftest

OCR_CLIENT = str(Path(sys.executable).parent / "ocr-client")  # the installed console script


def ocr_client(env: dict, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([OCR_CLIENT, *args], env=env, capture_output=True, text=True, timeout=timeout)


def test_a_folder_killed_mid_run_and_run_again_is_done_once_per_file(live, alice, tmp_path):
    folder, out = tmp_path / "scans", tmp_path / "out"
    folder.mkdir()
    names = [f"folder-{n}.png" for n in range(1, 6)]
    for n, name in enumerate(names, start=1):
        (folder / name).write_bytes(page_png(f"Folder page number {n}"))
    command = [OCR_CLIENT, "submit", str(folder), "--pipeline", "ocr", "--lang", "en", "--wait",
               "--format", "md,txt", "-o", str(out), "-j", "3"]
    state = out / ".ocr-client-state.json"

    first = subprocess.Popen(command, env=live.env(live.alice), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while not (state.exists() and json.loads(state.read_text())["files"]):  # a job was made for one file at least
        assert first.poll() is None and time.monotonic() < deadline, first.stdout.read().decode()
        time.sleep(0.05)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    assert len(list(out.glob("*.txt"))) < 5, "the run ended before it was killed"
    made_before_the_kill = len(json.loads(state.read_text())["files"])

    second = subprocess.run(command, env=live.env(live.alice), capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "5 of 5 files done" in second.stdout
    # Files whose jobs the killed run made were not submitted again: the state or the server's dedup said so.
    assert second.stdout.count("earlier") >= made_before_the_kill, second.stdout

    jobs = [job for job in alice.jobs() if job.document["name"] in names]
    assert sorted(job.document["name"] for job in jobs) == names  # five jobs on the server, one per file
    assert {job.status for job in jobs} == {"succeeded"}
    for n, name in enumerate(names, start=1):
        text = (out / name.replace(".png", ".txt")).read_text().lower()
        assert f"number {n}" in text, text
        assert (out / name.replace(".png", ".md")).read_text().strip()

    third = ocr_client(live.env(live.alice), *command[1:])  # everything done: nothing is asked of the server
    assert third.returncode == 0 and third.stdout.count("done in an earlier run") == 5, third.stdout


def test_the_other_commands(live, alice, tmp_path):
    job = alice.submit(page_png("Commands of the line"), "commands.png", pipeline="ocr").wait(timeout=180)
    env = live.env(live.alice)

    status = ocr_client(env, "status", job.id, "--wait")
    assert status.returncode == 0 and f"{job.id} succeeded 1/1 pages commands.png" in status.stdout, status
    result = ocr_client(env, "result", job.id)
    assert result.returncode == 0 and "commands of the line" in result.stdout.lower()
    as_json = json.loads(ocr_client(env, "result", job.id, "--json").stdout)
    assert as_json["pages"][0]["lines"] and as_json["schema_version"].startswith("1.")
    exported = ocr_client(env, "export", job.id, "txt", "-o", str(tmp_path / "c.txt"))
    assert exported.returncode == 0 and "commands of the line" in (tmp_path / "c.txt").read_text().lower()
    found = ocr_client(env, "search", "commands", "--job", job.id)
    assert found.returncode == 0 and f"{job.id} p1 p1-l" in found.stdout and "/jobs/" in found.stdout, found
    finished = ocr_client(env, "cancel", job.id)
    assert finished.returncode == 1 and "invalid_state" in finished.stderr

    # Another user's token: the job does not exist for them.
    for command in (("status", job.id), ("result", job.id), ("export", job.id, "txt")):
        refused = ocr_client(live.env(live.bob), *command)
        assert refused.returncode == 1 and "not_found" in refused.stderr, refused
        assert "commands of the line" not in refused.stdout.lower()


def test_clear_failures_with_their_exit_status(live, tmp_path):
    (tmp_path / "notes.txt").write_text("plain text, not a document")
    refused = ocr_client(live.env(live.alice), "submit", str(tmp_path / "notes.txt"), "-o", str(tmp_path / "o"))
    assert refused.returncode == 1 and "unsupported_file_type" in refused.stdout, refused

    bad_token = ocr_client(live.env(live.alice, OCR_TOKEN="not-a-token"), "status", "x")
    assert bad_token.returncode == 3 and "OCR_TOKEN" in bad_token.stderr and "401" in bad_token.stderr, bad_token

    gone = ocr_client(live.env(live.alice, OCR_URL=f"http://127.0.0.1:{free_port()}"), "status", "x", timeout=120)
    assert gone.returncode == 4 and "OCR_URL" in gone.stderr, gone

    unset = {k: v for k, v in live.env(live.alice).items() if k not in ("OCR_URL", "OCR_TOKEN")}
    missing = ocr_client(unset, "status", "x")
    assert missing.returncode == 2 and "OCR_URL and OCR_TOKEN" in missing.stderr

    config = tmp_path / "config.toml"
    config.write_text(f'url = "{live.url}"\ntoken = "{live.bob.token}"\n')
    from_file = ocr_client({**unset, "OCR_CONFIG": str(config)}, "search", "anything")
    assert from_file.returncode == 1 and not from_file.stderr  # bob's results: no hits, but the settings were read
