"""Small builders shared by platform tests: real files and real schema pages, no engine."""

from __future__ import annotations

import contextlib
import http.server
import socket
import threading
import time

from PIL import Image

from jobs.page_images import encode_page
from jobs.services.audit import Actor
from ocr_engine.schema import Line, Page, Region
from tests.ocr_engine import samples

TESTER = Actor("test")  # who a test that calls a lifecycle service directly acts as


def small_png() -> bytes:
    """A short text page at 50 DPI: a valid upload in a few KB."""
    return samples.encode(samples.text_page(dpi=50).image, "PNG")


def three_page_pdf() -> bytes:
    return samples.report_pdf(pages=3, dpi=40).data


def schema_page(number: int, texts=("Hello world", "Second line"), confidence: float = 0.9) -> Page:
    """A normalized page as the engine returns it: one region holding ``texts`` as lines."""
    region = Region(id=f"p{number}-r1", type="text", label="text", order=1, bbox=[0, 0, 100, 40],
                    polygon=[[0, 0], [100, 0], [100, 40], [0, 40]], confidence=0.95, text="\n".join(texts))
    lines = [
        Line(id=f"p{number}-l{i}", region_id=region.id, order=i, polygon=[[0, 20 * i], [100, 20 * i],
             [100, 20 * i + 18], [0, 20 * i + 18]], bbox=[0, 20 * i, 100, 20 * i + 18], text=text,
             confidence=confidence)
        for i, text in enumerate(texts, start=1)
    ]
    return Page(page_number=number, width=100, height=40, scale=1.0, dpi=None, regions=[region], lines=lines,
                text="\n".join(texts), markdown="\n".join(texts))


def page_record(number: int, **kwargs):
    from jobs.services import PageRecord

    jpeg, thumbnail = encode_page(Image.new("RGB", (100, 40), "white"), thumbnail_size=16)
    return PageRecord(page_number=number, page=schema_page(number, **kwargs), raw={"rec_texts": ["Hello"]},
                      timings={"ocr": 0.5, "render": 0.1}, image_jpeg=jpeg, thumbnail=thumbnail)


def failed_record(number: int):
    from jobs.services import PageRecord

    return PageRecord(page_number=number, error_code="recognition_failed", error_detail="boom")


def corrected_job(owner, pages: int):
    """A finished job of ``pages`` pages (helpers' 100x40 pages) whose first line a reviewer retyped on each."""
    from jobs import services
    from jobs.services.review import line_correct
    from tests.jobs.factories import JobFactory

    job = JobFactory(owner=owner, page_numbers=list(range(1, pages + 1)), pages_total=pages)
    services.job_claim(job_id=job.pk, worker_id="w")
    for number in range(1, pages + 1):
        services.job_record_page(job_id=job.pk, worker_id="w", record=page_record(number))
    job = services.job_finish(job_id=job.pk, worker_id="w")
    for page in job.pages.all():
        line_correct(page=page, line_id=f"p{page.page_number}-l1", text=f"Hello, page {page.page_number}", user=owner)
    return job


class Site:
    """A local HTTP server standing in for a remote site. ``handle(request)`` answers each GET; without
    one it serves ``routes[path] = (status, body)`` or ``(status, body, delay_seconds)``, 404 elsewhere.
    ``hits`` records the paths asked for."""

    def __init__(self, handle=None):
        self.routes: dict[str, tuple] = {}
        hits = self.hits = []
        handle = handle or self._serve_routes

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                hits.append(self.path)
                handle(self)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def _serve_routes(self, request) -> None:
        status, body, *delay = self.routes.get(request.path, (404, b"not here"))
        time.sleep(delay[0] if delay else 0)
        request.send_response(status)
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    def close(self) -> None:
        self.server.shutdown()


@contextlib.contextmanager
def silent_dns(monkeypatch):
    """A DNS server that never answers (the one outside party these tests cannot run): every look-up of a
    name waits until the block ends, then fails as a resolver that gave up does."""
    answer = threading.Event()

    def silent(host, *args, **kwargs):
        answer.wait(30)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", silent)
    try:
        yield
    finally:
        answer.set()

