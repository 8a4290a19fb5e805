"""Faults on the real stack, `make run` on PostgreSQL and Redis of their own: workers, the cluster's main
process, the database, Redis and the web killed or stopped while jobs run; every job still ends once.

The tests share one stack and run in order; each leaves it serving.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import time
from pathlib import Path

import psycopg
import pytest
import requests

from tests.e2e.conftest import background, free_port, wait_until_serving
from tests.e2e.services import PrivatePostgres, PrivateRedis
from tests.e2e.test_make_run_postgresql import TEST_ONLY
from tests.e2e.test_web_processes import cmdline
from tests.jobs.helpers import small_png
from tests.ocr_engine import samples

pytestmark = [pytest.mark.e2e]


class Stack:
    def __init__(self, base: str, token: str, log: Path, postgres: PrivatePostgres, redis: PrivateRedis,
                 media: Path):
        self.base, self.log, self.postgres, self.redis, self.media = base, log, postgres, redis, media
        self.token, self.auth = token, {"Authorization": f"Token {token}"}

    def submit(self, data: bytes, name: str) -> str:
        answer = requests.post(f"{self.base}/api/v1/jobs", headers=self.auth, files={"file": (name, data)}, timeout=60)
        assert answer.status_code == 202, answer.text
        return answer.json()["id"]

    def job(self, job_id: str, wait: float = 0) -> requests.Response:
        return requests.get(f"{self.base}/api/v1/jobs/{job_id}?wait={wait}", headers=self.auth, timeout=wait + 30)

    def ended(self, job_id: str, within: float) -> dict:
        """The job once it has ended; the web's answers may fail meanwhile (a database restart)."""
        deadline = time.monotonic() + within
        while True:
            try:
                answer = self.job(job_id, wait=min(30.0, max(1.0, deadline - time.monotonic())))
            except requests.RequestException:
                answer = None
            if answer is not None and answer.status_code == 200 and answer.json()["status"] in (
                    "succeeded", "failed", "canceled"):
                return answer.json()
            assert time.monotonic() < deadline, f"not ended within {within} s: {answer and answer.text[:300]}"
            if answer is None or answer.status_code != 200:
                time.sleep(1)

    def until(self, job_id: str, what, within: float) -> dict:
        deadline = time.monotonic() + within
        while not what(job := self.job(job_id).json()):
            assert time.monotonic() < deadline, job
            time.sleep(0.2)
        return job

    def rows(self, sql: str, *params) -> list[tuple]:
        with psycopg.connect(self.postgres.url(), autocommit=True) as db:
            return db.execute(sql, params).fetchall()

    def workers(self) -> list[int]:
        """The cluster's live worker processes (django-q2 logs each as it starts)."""
        pids = {int(pid) for pid in re.findall(r"ready for work at (\d+)", self.log.read_text(errors="replace"))}
        return sorted(pid for pid in pids if qcluster_process(pid))

    def main_process(self) -> int:
        """The qcluster process that `make run` started (its parent is the recipe's loop, not a qcluster)."""
        found = [pid for pid in all_pids() if qcluster_process(pid) and not qcluster_process(parent_of(pid))]
        assert len(found) == 1, found
        return found[0]


def all_pids() -> list[int]:
    return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]


def qcluster_process(pid: int) -> bool:
    """A process of the OCR (cpu) cluster (``python manage.py qcluster`` and what it forked), not a shell that
    names one, nor the fields stage's ``llm`` cluster that `make run` starts beside it."""
    return b"qcluster" in cmdline(pid).split(b"\0") and b"Q_CLUSTER_NAME=llm" not in environ(pid).split(b"\0")


def environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def parent_of(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return 0


def page(title: str) -> bytes:
    """A one-page PNG of its own: the server would answer a repeated upload with the earlier job."""
    return samples.encode(samples.text_page(title=title, dpi=60).image, "PNG")


def pdf(pages: int) -> bytes:
    return samples.report_pdf(pages=pages, dpi=100).data


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("faults")
    postgres, redis = PrivatePostgres(), PrivateRedis()
    env = {name: value for name, value in os.environ.items() if name not in TEST_ONLY}
    env.update(DATABASE_URL=postgres.url(), REDIS_URL=redis.url(), MEDIA_ROOT=str(tmp / "media"),
               SECRET_KEY_FILE=str(tmp / "secret_key"), OCR_CLUSTER_ALIVE_FILE=str(tmp / "cluster.alive"))
    port, log = free_port(), tmp / "make-run.log"
    try:
        with background(["make", "--no-print-directory", "run", f"PORT={port}"], env, log) as make:
            base = f"http://127.0.0.1:{port}"
            wait_until_serving(f"{base}/healthz", make, log, timeout=240)
            token = re.search(r"API token: (\w+)", log.read_text()).group(1)
            stack = Stack(base, token, log, postgres, redis, tmp / "media")
            stack.ended(stack.submit(small_png(), "warm.png"), within=180)  # the worker has loaded its models
            yield stack
            os.killpg(make.pid, signal.SIGINT)
            make.wait(timeout=60)
    finally:
        redis.close()
        postgres.close()


def test_a_worker_killed_while_idle_does_not_stop_the_cluster(stack):
    """django-q2 issue #23: the idle worker held the task queue's lock; its cluster took no task again."""
    (worker,) = stack.workers()
    time.sleep(2)  # past the end of its last task (a job ends before its task does): waiting for the next
    os.kill(worker, signal.SIGKILL)
    time.sleep(1)
    started = time.monotonic()
    job = stack.ended(stack.submit(page("After the idle kill"), "after-kill.png"),
                      within=60)
    assert job["status"] == "succeeded", job
    assert time.monotonic() - started < 60
    assert "starting it again" in stack.log.read_text(errors="replace")  # the cluster ended itself and was restarted


@pytest.mark.parametrize("role", ["pushing tasks", "monitoring"])
def test_the_pusher_or_monitor_killed_the_next_task_starts_within_30_s(stack, role):
    """django-q2 starts another in its place; neither held the task queue's lock while it waited."""
    pids = [int(pid) for pid in re.findall(rf"{role} at (\d+)", stack.log.read_text(errors="replace"))]
    (pid,) = [pid for pid in pids if qcluster_process(pid)]
    os.kill(pid, signal.SIGKILL)
    time.sleep(1)
    job_id = stack.submit(page(f"After the {role} kill"), f"{role}.png")
    stack.until(job_id, lambda job: job["status"] != "queued", within=30)
    assert stack.ended(job_id, within=120)["status"] == "succeeded"


def test_a_worker_killed_mid_pdf_hands_its_job_on_within_a_minute(stack):
    job_id = stack.submit(pdf(10), "ten.pdf")
    stack.until(job_id, lambda job: job["progress"]["pages_done"] >= 2, within=120)
    ((holder,),) = stack.rows("SELECT worker_id FROM jobs_job WHERE id = %s", job_id)
    host, pid = holder.rsplit(":", 1)
    assert host == socket.gethostname()
    done_before = dict(stack.rows("SELECT page_number, worker_id FROM jobs_pageresult WHERE job_id = %s", job_id))
    os.kill(int(pid), signal.SIGKILL)
    killed = time.monotonic()
    stack.until(job_id, lambda job: job["progress"]["pages_done"] > len(done_before), within=60)
    job = stack.ended(job_id, within=120 - (time.monotonic() - killed))
    assert job["status"] == "succeeded", job
    pages = stack.rows("SELECT page_number, worker_id FROM jobs_pageresult WHERE job_id = %s", job_id)
    assert sorted(number for number, _ in pages) == list(range(1, 11))  # every page, once
    assert {number: worker for number, worker in pages if number in done_before} == done_before  # none redone


def test_the_clusters_main_process_killed_is_started_again_without_its_old_workers(stack):
    main = stack.main_process()
    old = [pid for pid in all_pids() if qcluster_process(pid) and pid != main]
    os.kill(main, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while any(qcluster_process(pid) for pid in old):  # each dies with its parent: no second cluster
        assert time.monotonic() < deadline, [pid for pid in old if qcluster_process(pid)]
        time.sleep(0.2)
    job = stack.ended(stack.submit(page("After the main kill"), "after-main.png"),
                      within=120)
    assert job["status"] == "succeeded", job
    assert stack.main_process() != main


def test_redis_stopped_mid_job_the_api_answers_and_the_job_succeeds(stack):
    job_id = stack.submit(pdf(6), "six.pdf")
    stack.until(job_id, lambda job: job["progress"]["pages_done"] >= 1, within=120)
    stack.redis.stop()
    try:
        for _ in range(5):
            answer = stack.job(job_id)
            assert answer.status_code == 200, answer.text
            time.sleep(0.5)
        other = stack.submit(page("During the Redis outage"), "during-outage.png")
    finally:
        stack.redis.start()
    assert stack.ended(job_id, within=180)["status"] == "succeeded"
    assert stack.ended(other, within=120)["status"] == "succeeded"


def test_postgresql_restarted_mid_job_the_job_succeeds_with_every_page_once(stack):
    job_id = stack.submit(pdf(6), "six-again.pdf")
    stack.until(job_id, lambda job: job["progress"]["pages_done"] >= 1, within=120)
    stack.postgres.restart()
    job = stack.ended(job_id, within=180)  # the web's own answers fail while the database is down
    assert job["status"] == "succeeded", job
    pages = stack.rows("SELECT page_number FROM jobs_pageresult WHERE job_id = %s", job_id)
    assert sorted(number for (number,) in pages) == list(range(1, 7))


def test_the_web_killed_mid_upload_leaves_no_job_document_or_file(stack):
    (jobs_before,), = stack.rows("SELECT count(*) FROM jobs_job")
    host, port = stack.base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        body = b"x" * (8 * 1024 * 1024)
        boundary = "fault"
        head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.pdf\"\r\n"
                "Content-Type: application/pdf\r\n\r\n").encode()
        sock.sendall((f"POST /api/v1/jobs HTTP/1.1\r\nHost: {host}\r\nAuthorization: Token {stack.token}\r\n"
                      f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
                      f"Content-Length: {len(head) + 2 * len(body)}\r\n\r\n").encode() + head + body)
        time.sleep(1)  # the web process is reading the body
        web = [pid for pid in all_pids() if b"multiprocessing.spawn" in cmdline(pid)
               and b"uvicorn" in cmdline(parent_of(pid))]
        assert web, "no web server process found"
        for pid in web:
            os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while not serving(stack.base):  # uvicorn starts others in their place
        assert time.monotonic() < deadline
        time.sleep(0.5)
    assert stack.rows("SELECT count(*) FROM jobs_job") == [(jobs_before,)]
    assert stack.rows("SELECT count(*) FROM jobs_document WHERE original_name = 'big.pdf'") == [(0,)]
    left = [path for path in stack.media.rglob("*") if path.is_file() and "big" in path.name]
    assert not left


def serving(base: str) -> bool:
    try:
        return requests.get(f"{base}/healthz", timeout=5).status_code == 200
    except requests.RequestException:
        return False
