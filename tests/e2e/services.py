"""Private PostgreSQL and Redis servers for tests that stop or restart them: the machine's own are never touched."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import psycopg
import redis

from tests.e2e.conftest import free_port


def _as_postgres(args: list[str]) -> list[str]:
    # PostgreSQL's programs refuse to run as root.
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


class PrivatePostgres:
    """A PostgreSQL server of its own in a temporary folder, on a free port; ``restart()`` as an outage does."""

    def __init__(self):
        self.folder = Path(tempfile.mkdtemp(prefix="ocr-test-pg-"))
        self.folder.chmod(0o755)
        self.data, self.port = self.folder / "data", free_port()
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres")
        subprocess.run(_as_postgres(["initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres"]),
                       check=True, capture_output=True)
        self.start()
        with psycopg.connect(self.url("postgres"), autocommit=True) as db:
            db.execute('CREATE DATABASE "ocr"')

    def url(self, name: str = "ocr") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def start(self) -> None:
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1"
        subprocess.run(_as_postgres(["pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"),
                                     "-w", "start"]), check=True, capture_output=True)

    def stop(self) -> None:
        subprocess.run(_as_postgres(["pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop"]),
                       check=True, capture_output=True)

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)


class PrivateRedis:
    """A redis-server of its own on a free port, keeping nothing on disk; ``stop()`` and ``start()`` it at will."""

    def __init__(self):
        self.port, self.process = free_port(), None
        self.start()

    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(["redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
                                         "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(redis.ConnectionError):
                if redis.Redis(port=self.port, socket_timeout=1).ping():
                    return
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.1)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)

    def close(self) -> None:
        if self.process.poll() is None:
            self.stop()
