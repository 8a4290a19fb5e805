"""Platform benchmark: the API and the worker cluster against the bare engine on the same pages.

Prints three figures:

1. submit latency (p50 / p95) of ``POST /api/v1/jobs`` with 20 concurrent
   clients (threads, each its own keep-alive connection, ``bench/client.py``,
   bodies encoded before the clock starts), every upload a distinct small PNG
   so no dedup hit short-cuts the work; the jobs are canceled right away;
2. time from submit to first page start with an idle, warm worker
   (``created_at`` -> ``started_at`` as the server recorded them, and to the
   first finished page);
3. pages per minute through the whole system (submit -> succeeded, as the client
   sees it) against the bare engine loop (render + ``Engine.process_page``) on
   the same pages in this process, and their ratio (target >= 0.95).

How to run (a web server and exactly one worker cluster, nothing else busy)::

    make run                                    # or: .venv/bin/uvicorn ocrsite.asgi:application --port 8000
                                                #  +  .venv/bin/python manage.py qcluster
    .venv/bin/python bench/system.py --url http://127.0.0.1:8000 --token <API token>
    .venv/bin/python bench/system.py ... --pipeline structure --pages 6 --dpi 150

The bare loop uses the same EngineConfig as a worker (``--threads`` must match
the worker's OCR_CPU_THREADS, default 2), and runs after the system measurement,
never at the same time. Sample pages come from ``tests/ocr_engine/samples.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import random  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from datetime import datetime  # noqa: E402

from bench.client import Client, multipart  # noqa: E402
from tests.ocr_engine import samples  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--token", default=os.environ.get("OCR_API_TOKEN"), help="API token (or $OCR_API_TOKEN)")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--submits", type=int, default=5, help="submissions per client")
    parser.add_argument("--pipeline", default="ocr")
    parser.add_argument("--lang", default="en")
    parser.add_argument("--pages", type=int, default=6, help="pages of the throughput document")
    parser.add_argument("--dpi", type=int, default=100, help="resolution of the sample page images")
    parser.add_argument("--threads", type=int, default=2, help="engine threads (the worker's OCR_CPU_THREADS)")
    parser.add_argument("--models-dir", type=Path, default=Path(os.environ.get("OCR_MODELS_DIR", ROOT / "models")))
    args = parser.parse_args()
    if not args.token:
        parser.error("--token is required (make run prints one; or manage.py drf_create_token USER)")
    return args


class Api:
    def __init__(self, url: str, token: str):
        self.url = url.rstrip("/") + "/api/v1"
        self.headers = {"Authorization": f"Token {token}"}

    def connection(self) -> Client:
        return Client(self.url, self.headers)

    @staticmethod
    def form(data: bytes, name: str, **options) -> tuple[bytes, dict]:
        """A submission's body, encoded before it is sent (and timed)."""
        return multipart({"file": (name, data), **options})

    @staticmethod
    def send(connection: Client, form: tuple[bytes, dict]) -> dict:
        response = connection.request("POST", "/jobs", *form)
        if response.status != 202:
            raise SystemExit(f"submit answered HTTP {response.status}: {response.text()}")
        return response.json()

    def submit(self, connection: Client, data: bytes, name: str, **options) -> dict:
        return self.send(connection, self.form(data, name, **options))

    @staticmethod
    def wait(connection: Client, job_id: str, until, poll: float = 0.05) -> dict:
        while True:
            job = connection.get(f"/jobs/{job_id}").json()
            if until(job):
                return job
            if job["status"] in ("failed", "canceled"):
                raise SystemExit(f"job {job_id} ended {job['status']}: {job['error']}")
            time.sleep(poll)


def unique_png(seed: int) -> bytes:
    """A 64x64 PNG that differs from every other one (distinct sha256: no dedup)."""
    from PIL import Image

    rng = random.Random(seed)
    image = Image.new("RGB", (64, 64), "white")
    image.putpixel((rng.randrange(64), rng.randrange(64)), (rng.randrange(256),) * 3)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile; NaN when nothing was measured (every request failed)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


def submit_latency(api: Api, args) -> None:
    latencies: list[float] = []
    lock = threading.Lock()
    start = threading.Barrier(args.clients)
    run_id = time.time_ns()

    def client(index: int) -> None:
        connection = api.connection()
        forms = [api.form(unique_png(run_id + index * 1000 + n), f"bench-{index}-{n}.png",
                          pipeline=args.pipeline, lang=args.lang) for n in range(args.submits)]
        start.wait()
        for form in forms:
            t0 = time.perf_counter()
            job = api.send(connection, form)
            elapsed = time.perf_counter() - t0
            # Cancel at once (not timed) so the worker stays idle for the next measurements.
            connection.request("POST", f"/jobs/{job['id']}/cancel")
            with lock:
                latencies.append(elapsed)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
    wall = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - wall
    print(f"submit latency, {args.clients} concurrent clients, {len(latencies)} submits: "
          f"p50 {percentile(latencies, 0.5) * 1000:.0f} ms, p95 {percentile(latencies, 0.95) * 1000:.0f} ms "
          f"(all done in {wall:.1f} s, cancels included)")


def first_page_start(api: Api, args) -> None:
    connection = api.connection()
    data = samples.encode(samples.text_page(f"Timing page {time.time_ns()}", dpi=args.dpi).image, "PNG")
    # Warm the worker (engine loaded) with the same options, then measure on a fresh file.
    warm = api.submit(connection, samples.encode(samples.text_page("Warm-up page", dpi=args.dpi).image, "PNG"),
                      "warm.png", pipeline=args.pipeline, lang=args.lang)
    api.wait(connection, warm["id"], lambda j: j["status"] == "succeeded")
    t0 = time.perf_counter()
    job = api.submit(connection, data, "first.png", pipeline=args.pipeline, lang=args.lang)
    started = api.wait(connection, job["id"], lambda j: j["started_at"] is not None)
    seen_started = time.perf_counter() - t0
    done = api.wait(connection, job["id"], lambda j: j["progress"]["pages_done"] >= 1)
    seen_done = time.perf_counter() - t0
    server = (datetime.fromisoformat(started["started_at"]) - datetime.fromisoformat(started["created_at"]))
    print(f"submit -> first page start (idle warm worker): {server.total_seconds() * 1000:.0f} ms by server "
          f"clocks, {seen_started * 1000:.0f} ms seen by the client; first page done after {seen_done:.2f} s "
          f"(status {done['status']})")


def throughput(api: Api, args) -> None:
    document = samples.report_pdf(pages=args.pages, dpi=args.dpi)
    connection = api.connection()
    t0 = time.perf_counter()
    job = api.submit(connection, document.data, "throughput.pdf", pipeline=args.pipeline, lang=args.lang)
    finished = api.wait(connection, job["id"], lambda j: j["status"] == "succeeded", poll=0.1)
    system_seconds = time.perf_counter() - t0
    system_ppm = args.pages / system_seconds * 60

    from ocr_engine.config import EngineConfig
    from ocr_engine.engine import Engine
    from ocr_engine.inputs import open_document

    models_dir = args.models_dir if (args.models_dir / "manifest.json").is_file() else None
    engine = Engine(EngineConfig(pipeline=args.pipeline, lang=args.lang, models_dir=models_dir,
                                 cpu_threads=args.threads))
    with open_document(document.data) as doc:
        t1 = time.perf_counter()
        for number in range(1, doc.page_count + 1):
            engine.process_page(doc, number).image.close()
        bare_seconds = time.perf_counter() - t1
    bare_ppm = args.pages / bare_seconds * 60
    print(f"throughput, {args.pages} pages, pipeline {args.pipeline}: system {system_ppm:.1f} pages/min "
          f"({system_seconds:.1f} s submit -> succeeded; worker stages {finished['timings']}), "
          f"bare engine {bare_ppm:.1f} pages/min ({bare_seconds:.1f} s); ratio {system_ppm / bare_ppm:.2f}")


def main() -> None:
    args = parse_args()
    api = Api(args.url, args.token)
    submit_latency(api, args)
    first_page_start(api, args)
    throughput(api, args)


if __name__ == "__main__":
    main()
