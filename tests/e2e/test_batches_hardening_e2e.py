"""End to end: batch attacks against a running server (uvicorn), measured as an attacker would.

A bzip2 member of 785 bytes that inflates to 1 GiB, and an LZMA one, each beside a real page: answered
in seconds with ``archive_unsupported_compression``, the server's memory (its RSS) barely moved. A
200-member batch on the embedded SQLite default: meanwhile another job's pages commit and the job list
answers, each in under a second (a batch once held SQLite's one write lock for its whole length).
"""

from __future__ import annotations

import io
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import psutil
import pytest
import requests
from PIL import Image
from rest_framework.authtoken.models import Token

from tests.e2e.conftest import REPO, embedded_default
from tests.jobs.zip_samples import bzip2_gigabyte_zip, lzma_zip

pytestmark = [pytest.mark.e2e]

MEMBERS = 200
# Another job's pages, committed by the worker's own service in a process of its own (a worker's place),
# one per line read from stdin; each line out is how long that page's commit took.
PAGE_COMMITTER = """
import sys, time, django
django.setup()
from django.contrib.auth import get_user_model
from jobs import services
from jobs.options import JobOptions
from tests.jobs.helpers import page_record
from tests.ocr_engine import samples
job, _ = services.job_create(owner=get_user_model().objects.get(), file=samples.report_pdf(pages=60, dpi=50).data,
                             filename="other.pdf", options=JobOptions(pipeline="ocr"))
services.job_claim(job_id=job.pk, worker_id="committer")
print("ready", flush=True)
for line in sys.stdin:
    record = page_record(int(line))  # the engine's work, before the commit that is measured
    started = time.monotonic()
    assert services.job_record_page(job_id=job.pk, worker_id="committer", record=record)
    print(time.monotonic() - started, flush=True)
"""


def page_png(shade: int = 0) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (120, 60), (shade, shade, shade)).save(buffer, "PNG")
    return buffer.getvalue()


def server_process(base: str) -> psutil.Process:
    """The uvicorn process serving ``base`` (one process: no --workers)."""
    port = base.rsplit(":", 1)[1]
    (process,) = [p for p in psutil.process_iter(["cmdline"])
                  if "uvicorn" in " ".join(p.info["cmdline"] or []) and port in (p.info["cmdline"] or [])]
    return process


@pytest.mark.django_db(transaction=True)
def test_bzip2_and_lzma_batches_are_answered_fast_without_the_server_inflating_them(asgi_server, user):
    headers = {"Authorization": f"Token {Token.objects.create(user=user).key}"}
    server = server_process(asgi_server)

    def send(archive: bytes) -> tuple[requests.Response, float]:
        started = time.monotonic()
        answer = requests.post(f"{asgi_server}/api/v1/batches", headers=headers, timeout=60,
                               files={"file": ("scans.zip", archive, "application/zip")}, data={"pipeline": "ocr"})
        return answer, time.monotonic() - started

    warm, _ = send(zipfile_of_one_page())  # imports and first-request costs, before the baseline
    assert warm.status_code == 202, warm.text
    for shade, archive in ((1, bzip2_gigabyte_zip(page_png(1))), (2, lzma_zip(page_png(2)))):
        before = server.memory_info().rss
        answer, seconds = send(archive)
        grown = server.memory_info().rss - before
        assert answer.status_code == 202, answer.text
        body = answer.json()
        assert [(e["member"], e["code"]) for e in body["errors"]] == [("bomb.png", "archive_unsupported_compression")]
        assert [j["document"]["name"] for j in body["jobs"]] == ["page.png"]
        print(f"method {'bzip2' if shade == 1 else 'LZMA'}: {seconds:.2f} s, RSS {grown / 2**20:+.1f} MiB")
        assert seconds < 5 and grown < 50 * 2**20


def zipfile_of_one_page() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("warm.png", page_png(3))
    return buffer.getvalue()


def test_pages_commit_and_the_site_answers_while_a_200_member_batch_is_submitted_on_sqlite(tmp_path: Path):
    members = io.BytesIO()
    with zipfile.ZipFile(members, "w", zipfile.ZIP_DEFLATED) as archive:
        for n in range(MEMBERS):  # tiny, and each its own file (no dedup): bytes after the PNG's end differ
            archive.writestr(f"scan-{n:03d}.png", page_png() + f"#{n}".encode())
    with embedded_default(tmp_path, worker=False) as (base, token, _, env):
        headers = {"Authorization": f"Token {token}"}
        committer = subprocess.Popen([sys.executable, "-c", PAGE_COMMITTER], cwd=REPO, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            assert committer.stdout.readline().strip() == "ready"
            for _ in range(8):  # each web process's first request loads the views: not what is measured
                assert requests.get(f"{base}/api/v1/jobs", headers=headers, timeout=30).status_code == 200
            answers: list[requests.Response] = []
            batch = threading.Thread(target=lambda: answers.append(requests.post(
                f"{base}/api/v1/batches", headers=headers, timeout=300, data={"pipeline": "ocr"},
                files={"file": ("scans.zip", members.getvalue(), "application/zip")})))
            batch.start()
            commits, listings, page = [], [], 0
            while batch.is_alive() and page < 60:
                page += 1
                committer.stdin.write(f"{page}\n")
                committer.stdin.flush()
                commits.append(float(committer.stdout.readline()))
                started = time.monotonic()
                assert requests.get(f"{base}/api/v1/jobs", headers=headers, timeout=30).status_code == 200
                listings.append(time.monotonic() - started)
            batch.join()
        finally:
            committer.stdin.close()
            committer.wait(timeout=30)
    (answer,) = answers
    assert answer.status_code == 202, answer.text
    assert len(answer.json()["jobs"]) == MEMBERS and answer.json()["errors"] == []
    print(f"while the batch was sent: {len(commits)} page commits, slowest {max(commits):.3f} s; "
          f"{len(listings)} job lists, slowest {max(listings):.3f} s: {sorted(commits)[-5:]} {sorted(listings)[-5:]}")
    assert len(commits) >= 3, "the batch was over before the pages could be measured against it"
    assert max(commits) < 1 and max(listings) < 1

