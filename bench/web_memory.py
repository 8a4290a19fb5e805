"""How much memory the web process takes for ``file_url`` submits and for the training-set ZIP.

    .venv/bin/python bench/web_memory.py                       # this checkout
    .venv/bin/python bench/web_memory.py --root /tmp/old-tree  # another tree of the code (say, `git archive`)

Starts the web server as `make run` does (``uvicorn ocrsite.asgi:application --workers 2``, the
embedded SQLite default, or ``--database-url``) on a scratch database and media folder in a temporary
directory, and reads the resident memory (VmRSS) of the server and its worker processes every 20 ms.
Each figure is the peak during one load less the total just before it, after a warm-up of the same
requests on other data (the first requests of a process import code: OpenCV for the crops).

1. ``--submits`` concurrent ``POST /api/v1/jobs`` with a ``file_url`` naming a local server that sends
   a ``--file-mb`` MB file slowly (``OCR_ALLOW_PRIVATE_URLS=true`` lets the server reach it). No worker
   cluster runs: whatever is downloaded here is downloaded by the web process.
2. ``GET /api/v1/training-set`` for a user with ``--pages`` corrected pages (A4 at 200 DPI, five
   retyped lines each), made through the services beforehand.
"""

from __future__ import annotations

import argparse
import http.client
import http.server
import io
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE_SIZE = (1654, 2339)  # A4 at 200 DPI
LINES_PER_PAGE = 5
PAGES_PER_JOB = 30
SAMPLE_SECONDS = 0.02


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the tree of the code to serve")
    parser.add_argument("--submits", type=int, default=30)
    parser.add_argument("--file-mb", type=float, default=25)
    parser.add_argument("--file-seconds", type=float, default=10, help="how long the file server takes per file")
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2, help="uvicorn --workers (make run: WEB_CONCURRENCY=2)")
    parser.add_argument("--database-url", default="", help="default: SQLite in the scratch folder")
    return parser.parse_args()


def site_environment(args, scratch: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if k != "REDIS_URL"},  # the embedded default: no Redis
        "DJANGO_SETTINGS_MODULE": "ocrsite.settings.base",
        "DATABASE_URL": args.database_url or f"sqlite:///{scratch / 'db.sqlite3'}",
        "MEDIA_ROOT": str(scratch / "media"),
        "SECRET_KEY": secrets.token_urlsafe(40),
        "ALLOWED_HOSTS": "127.0.0.1",
        "OCR_ALLOW_PRIVATE_URLS": "true",
        "API_THROTTLE_SUBMIT": "1000000/min",
        "API_THROTTLE_USER": "1000000/min",
        "OCR_QUOTA_PAGES_PER_DAY": "0",
        "DB_POOL_SIZE": "8",  # as make run sets it
        "LOG_LEVEL": "WARNING",
    }


# --- data -----------------------------------------------------------------------


def prepare(root: Path, pages: int) -> tuple[str, str]:
    """Migrate the scratch database; return the API tokens of a user with ``pages`` corrected pages and of another."""
    sys.path.insert(0, str(root))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    call_command("migrate", verbosity=0)
    users = get_user_model().objects
    reviewer, warm = users.create_user("bench-reviewer"), users.create_user("bench-warm-up")
    record_pages = page_records()
    for first in range(1, pages + 1, PAGES_PER_JOB):
        corrected_job(reviewer, record_pages, min(PAGES_PER_JOB, pages - first + 1))
    corrected_job(warm, record_pages, 2)
    return Token.objects.create(user=reviewer).key, Token.objects.create(user=warm).key


def page_records():
    """A function of the page number giving a PageRecord: a full page, encoded once."""
    from django.conf import settings
    from PIL import Image, ImageDraw

    from jobs.page_images import encode_page
    from jobs.services import PageRecord
    from ocr_engine.schema import Line, Page, Region

    image = Image.new("RGB", PAGE_SIZE, "white")
    draw = ImageDraw.Draw(image)
    boxes = [(150, 200 + 120 * i, 1500, 260 + 120 * i) for i in range(LINES_PER_PAGE)]
    for x0, y0, x1, y1 in boxes:
        for x in range(x0, x1, 24):
            draw.rectangle((x, y0 + 10, x + 14, y1 - 10), fill="black")  # glyph-like blocks
    jpeg, thumbnail = encode_page(image, thumbnail_size=settings.OCR_THUMBNAIL_SIZE)

    def record(number: int):
        lines = [Line(id=f"p{number}-l{i}", region_id=f"p{number}-r1", order=i,
                      polygon=[[x0, y0], [x1, y0], [x1, y1], [x0, y1]], bbox=[x0, y0, x1, y1],
                      text=f"engine line {i}", confidence=0.7)
                 for i, (x0, y0, x1, y1) in enumerate(boxes, start=1)]
        region = Region(id=f"p{number}-r1", type="text", label="text", order=1, bbox=[0, 0, *PAGE_SIZE],
                        polygon=[[0, 0], [PAGE_SIZE[0], 0], list(PAGE_SIZE), [0, PAGE_SIZE[1]]], confidence=0.9,
                        text="\n".join(line.text for line in lines))
        page = Page(page_number=number, width=PAGE_SIZE[0], height=PAGE_SIZE[1], scale=1.0, dpi=200.0,
                    regions=[region], lines=lines, text=region.text, markdown=region.text)
        return PageRecord(page_number=number, page=page, raw={}, timings={"ocr": 1.0}, image_jpeg=jpeg,
                          thumbnail=thumbnail)

    return record


def corrected_job(owner, record, pages: int) -> None:
    """A finished job of ``pages`` pages with every line of every page retyped by its owner."""
    from jobs import services
    from jobs.models import Document, Job
    from jobs.services.review import line_correct

    document = Document.objects.create(owner=owner, file="documents/bench.pdf", original_name="bench.pdf",
                                       sha256=secrets.token_hex(32), media_type="application/pdf",
                                       size_bytes=1, page_count=pages)
    job = Job.objects.create(owner=owner, document=document, pipeline="ocr", lang="en", cluster="cpu",
                             page_numbers=list(range(1, pages + 1)), pages_total=pages,
                             dedup_key=secrets.token_hex(32))
    services.job_claim(job_id=job.pk, worker_id="bench")
    for number in range(1, pages + 1):
        services.job_record_page(job_id=job.pk, worker_id="bench", record=record(number))
    services.job_finish(job_id=job.pk, worker_id="bench")
    for page in job.pages.all():
        for i in range(1, LINES_PER_PAGE + 1):
            line_correct(page=page, line_id=f"p{page.page_number}-l{i}", text=f"corrected line {i}", user=owner)


# --- the slow file server ---------------------------------------------------------


def slow_file_server(size_bytes: int, seconds: float) -> tuple[http.server.ThreadingHTTPServer, list[str]]:
    """Serves a valid PNG padded to ``size_bytes`` (readers stop at its end) in ``seconds``, for any path."""
    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (200, 100), "white").save(png, "PNG")
    body = png.getvalue() + os.urandom(size_bytes - len(png.getvalue()))
    chunk = 256 * 1024
    pause = seconds / (len(body) / chunk)
    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "image/png")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            try:
                for start in range(0, len(body), chunk):
                    self.wfile.write(body[start:start + chunk])
                    time.sleep(pause)
            except OSError:
                pass  # the client gave up

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, hits


# --- the web server and its memory --------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_web(root: Path, env: dict[str, str], port: int, workers: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "ocrsite.asgi:application", "--host", "127.0.0.1", "--port", str(port),
         "--workers", str(workers), "--no-proxy-headers", "--ws-max-size", "4096", "--log-level", "warning"],
        cwd=root, env=env, start_new_session=True)


def tree_rss_bytes(pid: int) -> int:
    """VmRSS of ``pid`` and all its descendants."""
    total, todo = 0, [pid]
    while todo:
        current = todo.pop()
        try:
            status = Path(f"/proc/{current}/status").read_text()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        total += next((int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmRSS:")), 0)
        todo.extend(int(child) for child in children)
    return total


class PeakRss:
    """The highest tree RSS of ``pid`` while the block runs, sampled every SAMPLE_SECONDS."""

    def __init__(self, pid: int):
        self.pid = pid

    def __enter__(self):
        self.before = tree_rss_bytes(self.pid)
        self.peak = self.before
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self):
        while not self._done.wait(SAMPLE_SECONDS):
            self.peak = max(self.peak, tree_rss_bytes(self.pid))

    def __exit__(self, *exc):
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, tree_rss_bytes(self.pid))

    @property
    def rise_mb(self) -> float:
        return (self.peak - self.before) / 2**20


def call(port: int, method: str, path: str, token: str, body: dict | None = None) -> tuple[int, int, bytes]:
    """(status, body length, the body's first bytes), the body read in chunks as a client would."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    headers = {"Authorization": f"Token {token}", "Host": "127.0.0.1"}
    if body is not None:
        headers["Content-Type"] = "application/json"
    connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
    response = connection.getresponse()
    size, head = 0, b""
    while chunk := response.read(1 << 16):
        head = head or chunk[:4096]
        size += len(chunk)
    connection.close()
    return response.status, size, head


def wait_until_up(port: int, token: str, web: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if web.poll() is not None:
            raise SystemExit(f"the web server exited with {web.returncode}")
        try:
            if call(port, "GET", "/api/v1/jobs", token)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.3)
    raise SystemExit("the web server did not answer within 60 s")


def submits(port: int, token: str, file_url: str, count: int) -> tuple[list[int], float]:
    started = time.monotonic()
    with ThreadPoolExecutor(count) as pool:
        answers = list(pool.map(lambda n: call(port, "POST", "/api/v1/jobs", token, {"file_url": f"{file_url}?n={n}"}),
                                range(count)))
    return [status for status, _, _ in answers], time.monotonic() - started


def training_set(port: int, token: str) -> tuple[int, int, float]:
    started = time.monotonic()
    status, size, _ = call(port, "GET", "/api/v1/training-set", token)
    return status, size, time.monotonic() - started


def main() -> None:
    args = parse_args()
    root = args.root.resolve()
    with tempfile.TemporaryDirectory(prefix="web-memory-") as folder:
        scratch = Path(folder)
        env = site_environment(args, scratch)
        os.environ.update(env)
        made = time.monotonic()
        reviewer, warm = prepare(root, args.pages)
        print(f"{args.pages} corrected pages made in {time.monotonic() - made:.0f} s")
        files, hits = slow_file_server(int(args.file_mb * 2**20), args.file_seconds)
        file_url = f"http://127.0.0.1:{files.server_address[1]}/big.png"
        port = free_port()
        web = start_web(root, env, port, args.workers)
        try:
            wait_until_up(port, warm, web)
            # Warm-up on the other user's data, several at once so that every worker process takes some.
            submits(port, warm, file_url, 2 * args.workers)
            with ThreadPoolExecutor(2 * args.workers) as pool:
                list(pool.map(lambda _: training_set(port, warm), range(2 * args.workers)))
            hits.clear()
            time.sleep(1)

            with PeakRss(web.pid) as submitted:
                statuses, took = submits(port, reviewer, file_url, args.submits)
            print(f"{args.submits} file_url submits ({args.file_mb:g} MB over {args.file_seconds:g} s each): "
                  f"HTTP {sorted(set(statuses))} in {took:.1f} s, {len(hits)} downloads by the web process; "
                  f"RSS {submitted.before / 2**20:.0f} MB, peak +{submitted.rise_mb:.1f} MB")
            time.sleep(1)
            with PeakRss(web.pid) as zipped:
                status, size, took = training_set(port, reviewer)
            print(f"training set of {args.pages} pages: HTTP {status}, {size / 2**20:.1f} MB in {took:.1f} s; "
                  f"RSS {zipped.before / 2**20:.0f} MB, peak +{zipped.rise_mb:.1f} MB")
        finally:
            os.killpg(web.pid, signal.SIGTERM)
            web.wait(timeout=30)
            files.shutdown()


if __name__ == "__main__":
    main()
