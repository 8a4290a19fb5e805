"""Several web server processes (uvicorn's ``--workers``) on the embedded default: one socket, one rate
limit, one signal to stop them, a dead one replaced.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

from tests.e2e.conftest import REPO, background, free_port, processes_in_group, uvicorn_command, wait_until_serving

pytestmark = [pytest.mark.e2e]


def embedded_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "CHANNEL_LAYER_PREFIX", "Q_BROKER")}
    env.update({
        "DJANGO_SETTINGS_MODULE": "ocrsite.settings.base",
        "SECRET_KEY": "embedded-e2e-only",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "MEDIA_ROOT": str(tmp_path / "media"),
        "CACHE_DIR": str(tmp_path / "cache"),  # not a folder in /dev/shm per test run
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        **extra,
    })
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO, env=env, check=True)
    return env


def server(port: int, workers: int = 2) -> list[str]:
    return uvicorn_command(port, "--workers", str(workers))


def children_of(pid: int) -> list[int]:
    """The web server processes started by ``pid`` (not multiprocessing's helpers, such as its resource tracker)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"resource_tracker" not in cmdline(int(entry)):
                found.append(int(entry))
    return found


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


@contextlib.contextmanager
def two_web_processes(tmp_path: Path):
    """The server with two worker processes, serving: yields (parent process, base URL, port, the two servers)."""
    env = embedded_env(tmp_path)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with background(server(port), env, tmp_path / "web.log") as process:
        wait_until_serving(base + "/healthz", process, tmp_path / "web.log")
        deadline = time.monotonic() + 60
        while len(workers := children_of(process.pid)) != 2:
            assert time.monotonic() < deadline, f"server processes: {workers}"
            time.sleep(0.1)
        yield process, base, port, workers


def test_processes_share_one_socket_and_stop_together(tmp_path):
    with two_web_processes(tmp_path) as (process, base, port, workers):
        before = {pid: cpu_ticks(pid) for pid in workers}

        def fetch(_):  # a connection of its own each: the kernel gives it to either process
            return requests.get(base + "/api/v1/pipelines", headers={"Connection": "close"}, timeout=30)

        with ThreadPoolExecutor(20) as pool:
            answers = list(pool.map(fetch, range(200)))
        assert [a.status_code for a in answers] == [401] * 200  # no credentials: refused, by either
        assert all(cpu_ticks(pid) > before[pid] for pid in workers), "one process answered everything"

        process.send_signal(signal.SIGTERM)  # the parent alone, as docker or systemd signal it
        assert process.wait(timeout=20) == 0
        deadline = time.monotonic() + 10
        while any(Path(f"/proc/{pid}").exists() for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(Path(f"/proc/{pid}").exists() for pid in workers)


def catches(pid: int, signum: int) -> bool:
    """Whether process ``pid`` has a handler for ``signum`` (its SigCgt mask in /proc)."""
    status = Path(f"/proc/{pid}/status").read_text()
    mask = int(status.split("SigCgt:", 1)[1].split()[0], 16)
    return bool(mask >> (signum - 1) & 1)


def test_an_interrupt_stops_servers_started_in_the_background(tmp_path):
    """``make run &`` from a script: every process inherits SIGINT ignored, and a SIGINT sent to the
    parent, passed on as it came, left the parent and both servers running."""
    env = embedded_env(tmp_path)
    port = free_port()
    log = tmp_path / "web.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(server(port), cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True,
                                   preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/healthz", process, log)
        deadline = time.monotonic() + 60
        while not (len(workers := children_of(process.pid)) == 2
                   and all(catches(pid, signal.SIGTERM) for pid in workers)):  # both servers run
            assert time.monotonic() < deadline, "a server never started"
            time.sleep(0.1)
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
        assert not any(Path(f"/proc/{pid}").exists() for pid in workers)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def test_ctrl_c_stops_make_run_and_its_worker_cleanly(tmp_path):
    """A terminal's Ctrl-C sends SIGINT to ``make run``'s whole process group. Its recipe's trap ran
    ``kill 0``, which signalled the recipe's shell too and re-entered the trap until the shell crashed
    (``make: *** [run] Segmentation fault``), and the worker cluster ended without its orderly stop."""
    env = embedded_env(tmp_path)
    port = free_port()
    log = tmp_path / "make-run.log"
    with background(["make", "--no-print-directory", "run", f"PORT={port}", "WEB_CONCURRENCY=2"], env, log) as make:
        wait_until_serving(f"http://127.0.0.1:{port}/healthz", make, log, timeout=180)
        deadline = time.monotonic() + 120
        # Both web processes listen and both clusters' workers have started: OCR's and the fields stage's.
        while not (log.read_text(errors="replace").count("Application startup complete.") == 2
                   and "[cpu] running." in log.read_text(errors="replace")
                   and "[llm] running." in log.read_text(errors="replace")):
            assert time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.3)
        os.killpg(make.pid, signal.SIGINT)
        make.wait(timeout=60)
        output = log.read_text(errors="replace")
        # django-q2's last line of an orderly stop, of each cluster (once or, when the recipe's TERM
        # reaches a cluster already stopping on the terminal's SIGINT, twice).
        clusters = re.findall(r"Q Cluster (\S+) \[(?:cpu|llm)\] running\.", output)
        assert len(clusters) == 2 and all(f"Q Cluster {name} has stopped." in output for name in clusters), output
        assert "make: ***" not in output, output  # the recipe ended with 0, not a crash or an error
        deadline = time.monotonic() + 20
        while processes_in_group(make.pid):
            assert time.monotonic() < deadline, f"still running: {processes_in_group(make.pid)}"
            time.sleep(0.2)


def test_a_killed_server_process_is_replaced_and_the_others_keep_serving(tmp_path):
    """The out-of-memory killer's kill -9 of one web process: uvicorn starts another in its place."""
    with two_web_processes(tmp_path) as (process, base, port, workers):
        os.kill(workers[0], signal.SIGKILL)
        deadline = time.monotonic() + 60
        while not (len(now := children_of(process.pid)) == 2 and workers[0] not in now):
            assert time.monotonic() < deadline, f"server processes: {now}"
            time.sleep(0.2)
        assert all(requests.get(base + "/healthz", headers={"Connection": "close"}, timeout=30).status_code == 200
                   for _ in range(20))


def test_the_anonymous_rate_limit_counts_across_web_processes(tmp_path):
    """Two servers on one database: a client cannot double its allowance by switching between them."""
    env = embedded_env(tmp_path, API_THROTTLE_ANON="20/min")
    ports = [free_port(), free_port()]
    with background(server(ports[0], workers=1), env, tmp_path / "web0.log") as first, \
            background(server(ports[1], workers=1), env, tmp_path / "web1.log") as second:
        for port, process, log in ((ports[0], first, "web0.log"), (ports[1], second, "web1.log")):
            wait_until_serving(f"http://127.0.0.1:{port}/healthz", process, tmp_path / log)
        statuses = [requests.get(f"http://127.0.0.1:{ports[n % 2]}/api/v1/jobs", timeout=30).status_code
                    for n in range(30)]
    assert statuses.count(401) == 20 and statuses.count(429) == 10
