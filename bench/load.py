"""Throughput under load: our API (``make run``) and, optionally, PaddleX's own serving, same pages.

    make run                                   # in another shell; it prints an API token
    .venv/bin/python bench/load.py --token <API token>
    .venv/bin/python bench/load.py --token ... --peer http://127.0.0.1:8080   # + `paddlex --serve`
    .venv/bin/python bench/load.py --token ... --clients 1 4 --pages 20 --dpi 200 --pdf-pages 10
    .venv/bin/python bench/load.py --token ... --clients --pdf-pages 0 --burst 20 --no-bare

Scenarios, one after the other (never at the same time). Each client count runs against ours and
then against the peer, before the next count: the shared VMs this was measured on changed speed by
up to a fifth within a run, and measuring all of ours before all of the peer's let that drift
decide the ratio. The ratios (ours ÷ peer, ours ÷ the bare PaddleOCR loop) are printed as well.

* ``N clients``: the pages as separate PNG files, taken from one shared queue by
  N client threads; each submits a page, waits for its job to end (``GET
  /jobs/{id}?wait=50``, answered when the job ends) and reads ``GET …/result``.
  The peer answers ``POST /ocr`` synchronously.
* ``PDF``: one ``--pdf-pages`` PDF as one job (ours only: the peer serves images).
* ``bursts`` (``--burst N``): ``--bursts`` rounds of N submits sent at the same instant, each
  on its client's open connection, while the worker OCRs a 10-page PDF (ours only): the
  submit request's latency when it cannot hide behind other clients' waits.
* ``bare``: after the servers are measured, in this process on the same pages:
  ``Engine.process_image`` (our engine without the platform around it) and a
  plain ``PaddleOCR(...).predict`` loop (PaddleOCR's own defaults, onnxruntime's spinning
  threads included, the same det/rec models, document preprocessing off). With ``--workers`` > 1 and a PDF, also
  the hardware's ceiling for that PDF: our engine alone in one process, then in
  ``--workers`` processes sharing its pages.

For each it prints pages per minute, job latency p50/p95 (ours also the submit request's own
p50/p95: with more pages than clients, most submits arrive while the worker is OCRing and the
other clients wait for their jobs), errors, CPU seconds per
page of the server's processes (web and worker cluster apart), their summed peak
RSS, and their peak PSS (what the tree really holds: django-q2 forks its
processes, and RSS counts the pages they share once in each). Server processes are found by their command line: ours are
``ocrsite.server``/``daphne`` (web) and ``qcluster`` (cluster, with the worker
processes it forks); the peer's is ``paddlex``. Every page is distinct (a
numbered title), so no deduplication shortens the work.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import base64  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import queue  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

from PIL import Image, ImageDraw  # noqa: E402

from bench.client import Client, multipart  # noqa: E402
from bench.system import percentile  # noqa: E402
from tests.ocr_engine import samples  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
PSS_EVERY = 8  # RSS samples (0.25 s apart) per PSS sample
ROLES = {"web": ("ocrsite.server", "daphne"), "cluster": ("qcluster",), "peer": ("paddlex",)}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--token", default=os.environ.get("OCR_API_TOKEN"), help="API token (or $OCR_API_TOKEN)")
    parser.add_argument("--peer", help="PaddleX serving base URL (`paddlex --serve --pipeline OCR`)")
    parser.add_argument("--clients", type=int, nargs="*", default=[1, 4], help="none: the PDF only")
    parser.add_argument("--pages", type=int, default=20, help="distinct pages per client scenario")
    parser.add_argument("--pdf-pages", type=int, default=10)
    parser.add_argument("--dpi", type=int, default=200)
    parser.add_argument("--pipeline", default="ocr")
    parser.add_argument("--lang", default="en")
    parser.add_argument("--threads", type=int, default=2, help="engine threads of the bare loop (OCR_CPU_THREADS)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes of the server (Q_WORKERS)")
    parser.add_argument("--burst", type=int, default=0, help="clients of the submit bursts (0: none)")
    parser.add_argument("--bursts", type=int, default=3, help="rounds of --burst submits sent at one instant "
                        "(the server's API_THROTTLE_SUBMIT, 120/min by default, counts them all)")
    parser.add_argument("--no-bare", action="store_true")
    args = parser.parse_args()
    if not args.token:
        parser.error("--token is required (make run prints one)")
    return args


def pages(count: int, dpi: int, tag: str) -> list[bytes]:
    makers = (samples.report_page, samples.two_column_page, lambda dpi: samples.text_page(dpi=dpi))
    out = []
    for n in range(count):
        image = makers[n % len(makers)](dpi=dpi).image
        # A page number in the corner makes every file distinct.
        ImageDraw.Draw(image).text((40, image.height - 60), f"{tag} page {n} {time.time_ns()}", fill=0)
        out.append(samples.encode(image, "PNG"))
    return out


# --- the server's processes -------------------------------------------------------------------

def role_pids() -> dict[str, list[int]]:
    found: dict[str, list[int]] = {role: [] for role in ROLES}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if cmdline.startswith(("/bin/sh", "/bin/bash", "sh ", "bash ")) or "bench/load.py" in cmdline:
            continue  # make's shell names both commands; it does none of the work
        for role, needles in ROLES.items():
            if any(n in cmdline for n in needles):
                found[role].append(int(entry))
    return found


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def _kib(path: str, key: str) -> float:
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def rss_mib(pid: int) -> float:
    return _kib(f"/proc/{pid}/status", "VmRSS:")


def pss_mib(pid: int) -> float:
    """Proportional set size: pages shared by forked processes counted once in all, not in each."""
    return _kib(f"/proc/{pid}/smaps_rollup", "Pss:")


@dataclass
class Meter:
    """CPU seconds and summed peak RSS of each role's processes while a scenario runs."""

    roles: tuple[str, ...]
    cpu: dict[str, float] = field(default_factory=dict)
    peak_rss: dict[str, float] = field(default_factory=dict)
    peak_pss: float = 0.0  # all roles together

    def __enter__(self) -> Meter:
        self._pids = {r: p for r, p in role_pids().items() if r in self.roles}
        self._cpu0 = {r: {p: cpu_seconds(p) for p in pids} for r, pids in self._pids.items()}
        self.peak_rss = {r: 0.0 for r in self.roles}
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()
        return self

    def _sample(self) -> None:
        samples = 0
        while not self._stop.wait(0.25):
            found = role_pids()  # django-q2 may recycle workers: look again each time
            for role in self.roles:
                self._pids[role] = sorted(set(self._pids[role]) | set(found[role]))
                self.peak_rss[role] = max(self.peak_rss[role], sum(rss_mib(p) for p in found[role]))
            # PSS walks every page table of the processes: at 4 Hz that took a fifth of a core from
            # the server being measured, so it is sampled every 2 s (it moves slowly).
            if samples % PSS_EVERY == 0:
                self.peak_pss = max(self.peak_pss, sum(pss_mib(p) for pids in self._pids.values() for p in pids))
            samples += 1

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._sampler.join()
        self.cpu = {r: sum(cpu_seconds(p) - self._cpu0[r].get(p, 0.0) for p in pids)
                    for r, pids in self._pids.items()}


# --- clients --------------------------------------------------------------------------------

@dataclass
class Outcome:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    submits: list[float] = field(default_factory=list)  # ours: the submit request alone
    later_submits: list[float] = field(default_factory=list)  # ... after each client's first (all at once)
    pages: int = 0
    seconds: float = 0.0


def run_clients(work: list[bytes], clients: int, new_client, handle) -> Outcome:
    todo: queue.Queue = queue.Queue()
    for index, data in enumerate(work):
        todo.put((index, data))
    outcome, lock = Outcome(), threading.Lock()

    def client() -> None:
        connection, first = new_client(), True
        while True:
            try:
                index, data = todo.get_nowait()
            except queue.Empty:
                return
            t0 = time.perf_counter()
            submits: list[float] = []
            try:
                pages_read = handle(connection, index, data, submits)
                error = None
            except Exception as exc:  # noqa: BLE001 - every failure is a counted error
                pages_read, error = 0, f"{type(exc).__name__}: {exc}"[:200]
            with lock:
                outcome.latencies.append(time.perf_counter() - t0)
                outcome.submits += submits
                if not first:
                    outcome.later_submits += submits
                first = False
                outcome.pages += pages_read
                if error:
                    outcome.errors.append(error)
        connection.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    t0 = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    outcome.seconds = time.perf_counter() - t0
    return outcome


def ours(args, api: str, headers: dict):
    def handle(client: Client, index: int, data: bytes, submits: list, name: str = "page.png") -> int:
        # The multipart body is the client's work: encoded before the clock starts, so that the
        # submit's latency is the server's (20 client threads encoding share one interpreter lock).
        form = multipart({"file": (name, data), "pipeline": args.pipeline, "lang": args.lang})
        t0 = time.perf_counter()
        submitted = client.request("POST", "/jobs", *form)
        submits.append(time.perf_counter() - t0)
        if submitted.status != 202:
            raise RuntimeError(f"HTTP {submitted.status} on submit: {submitted.text()}")
        job_id = submitted.json()["id"]
        while True:  # one held request per job, not a poll loop (GET /jobs/{id}?wait=)
            job = client.get(f"/jobs/{job_id}?wait=50").json()
            if job["status"] in ("succeeded", "failed", "canceled"):
                break
        if job["status"] != "succeeded":
            raise RuntimeError(f"job {job['status']}: {job['error']}")
        result = client.get(f"/jobs/{job_id}/result")
        if result.status != 200:
            raise RuntimeError(f"HTTP {result.status} on the result: {result.text()}")
        return job["progress"]["pages_done"]

    return (lambda: Client(api, headers)), handle


def peer(args):
    def handle(client: Client, index: int, data: bytes, submits: list) -> int:
        response = client.post("/ocr", json_body={"file": base64.b64encode(data).decode(), "fileType": 1})
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}: {response.text()}")
        return 1

    return (lambda: Client(args.peer)), handle


def submit_bursts(args, api: str, headers: dict) -> None:
    """``--bursts`` rounds of ``--burst`` submits sent at the same instant, each on its client's open
    connection, while the worker OCRs a 10-page PDF submitted first; the jobs are canceled after."""
    clients = [Client(api, headers) for _ in range(args.burst)]
    for client in clients:  # open each connection before the clock starts
        if client.get("/pipelines").status != 200:
            raise SystemExit("GET /pipelines did not answer 200")
    first = clients[0]
    busy = first.post("/jobs", {"file": ("busy.pdf", samples.report_pdf(pages=10, dpi=args.dpi).data),
                                "pipeline": args.pipeline}).json()["id"]
    while first.get(f"/jobs/{busy}").json()["status"] != "running":
        time.sleep(0.05)
    latencies: list[float] = []
    job_ids, errors = [busy], []
    with Meter(("web", "cluster")) as meter:
        for round_number in range(args.bursts):
            forms = [multipart({"file": ("page.png", data), "pipeline": args.pipeline})
                     for data in pages(args.burst, args.dpi, f"burst{round_number}")]
            start, lock = threading.Barrier(args.burst), threading.Lock()

            def send(client: Client, form: tuple[bytes, dict]) -> None:
                start.wait()
                t0 = time.perf_counter()
                response = client.request("POST", "/jobs", *form)
                with lock:
                    latencies.append(time.perf_counter() - t0)
                    if response.status == 202:
                        job_ids.append(response.json()["id"])
                    else:
                        errors.append(f"HTTP {response.status}: {response.text()}")

            threads = [threading.Thread(target=send, args=pair) for pair in zip(clients, forms)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            time.sleep(1)
    for job_id in job_ids:
        first.request("POST", f"/jobs/{job_id}/cancel")
    web_ms = meter.cpu["web"] / max(1, len(latencies)) * 1000
    print(f"{f'submit bursts of {args.burst}':<28} {len(latencies)} submits while OCR runs: "
          f"p50 {percentile(latencies, 0.5) * 1000:.0f} ms, p95 {percentile(latencies, 0.95) * 1000:.0f} ms, "
          f"max {max(latencies) * 1000:.0f} ms  errors {len(errors)}  web CPU {web_ms:.1f} ms/submit", flush=True)
    for error in sorted(set(errors))[:5]:
        print(f"    error: {error}")


def report(label: str, outcome: Outcome, meter: Meter | None) -> float:
    """Print one scenario's line; return its pages per minute."""
    ppm = outcome.pages / outcome.seconds * 60 if outcome.seconds else 0.0
    line = (f"{label:<28} {ppm:6.1f} pages/min  p50 {percentile(outcome.latencies, 0.5):6.2f} s  "
            f"p95 {percentile(outcome.latencies, 0.95):6.2f} s  errors {len(outcome.errors)}/{len(outcome.latencies)}")
    if meter is not None and outcome.pages:
        cpu = "  ".join(f"{role} {meter.cpu[role] / outcome.pages:.2f}" for role in meter.roles)
        total = sum(meter.cpu.values()) / outcome.pages
        rss = sum(meter.peak_rss.values()) / 1024
        line += f"  CPU s/page {total:.2f} ({cpu})  peak RSS {rss:.2f} GB, PSS {meter.peak_pss / 1024:.2f} GB"
    if outcome.submits:
        line += (f"  submit p50 {percentile(outcome.submits, 0.5) * 1000:.0f} ms, "
                 f"p95 {percentile(outcome.submits, 0.95) * 1000:.0f} ms")
    if outcome.later_submits:  # the clients' first submits arrive together, before any OCR runs
        line += (f" (after each client's first: p50 {percentile(outcome.later_submits, 0.5) * 1000:.0f} ms, "
                 f"p95 {percentile(outcome.later_submits, 0.95) * 1000:.0f} ms)")
    print(line, flush=True)
    for error in sorted(set(outcome.errors))[:5]:
        print(f"    error: {error}")
    return ppm


def bare_config(args, threads: int):
    from ocr_engine.config import EngineConfig
    from ocr_engine.models import is_pack

    models = Path(os.environ.get("OCR_MODELS_DIR", ROOT / "models"))
    return EngineConfig(pipeline=args.pipeline, lang=args.lang, models_dir=models if is_pack(models) else None,
                        cpu_threads=threads)


def bare(args, work: list[bytes]) -> float | None:
    """Our engine, then (``ocr`` pipeline) PaddleOCR's own loop, in this process; PaddleOCR's pages/min."""
    from ocr_engine.engine import Engine
    from ocr_engine.pipelines import get as get_pipeline
    from ocr_engine.pipelines.paddle import bgr_array, prepare_process

    config = bare_config(args, args.threads)
    engine = Engine(config)
    bare_loop("bare engine loop", work, lambda image: engine.process_image(image, page_number=1))
    if args.pipeline == "ocr":
        from paddleocr import PaddleOCR

        # onnxruntime's own default lets idle threads spin; ours does not (EngineConfig.spin_wait).
        paddleocr = PaddleOCR(**get_pipeline("ocr").model_args(config), **prepare_process(config.with_(spin_wait=True)))
        return bare_loop("bare PaddleOCR loop", work, lambda image: [r.json for r in paddleocr.predict(
            bgr_array(image))])
    return None


def bare_pdf(args, pdf: bytes) -> None:
    """The hardware's own ceiling for one PDF on --workers processes: our engine alone (one
    thread each, no platform), the PDF's pages read by one process, then split among
    --workers processes started together. Cores that slow each other (shared caches, SMT
    siblings behind a VM's vCPUs) show here as a ratio above 1/workers."""
    import multiprocessing

    def read_share(share: int, shares: int, ready, start, done) -> None:
        from ocr_engine.engine import Engine
        from ocr_engine.inputs import open_document

        engine = Engine(bare_config(args, 1))
        with open_document(pdf) as doc:
            engine.process_page(doc, 1)  # warm
            ready.wait()
            start.wait()
            for number in range(1 + share, doc.page_count + 1, shares):
                engine.process_page(doc, number)
        done.put(time.perf_counter())

    fork = multiprocessing.get_context("fork")
    seconds = {}
    for shares in (1, args.workers):
        ready, start, done = fork.Barrier(shares + 1), fork.Event(), fork.Queue()
        procs = [fork.Process(target=read_share, args=(i, shares, ready, start, done)) for i in range(shares)]
        for proc in procs:
            proc.start()
        ready.wait()
        t0 = time.perf_counter()
        start.set()
        seconds[shares] = max(done.get() for _ in procs) - t0
        for proc in procs:
            proc.join()
    print(f"{'bare engine, ' + str(args.pdf_pages) + '-page PDF':<30} 1 process {seconds[1]:.1f} s, "
          f"{args.workers} processes {seconds[args.workers]:.1f} s: "
          f"{seconds[args.workers] / seconds[1]:.2f}x (the hardware's ceiling for --workers)", flush=True)


def bare_loop(name: str, work: list[bytes], read) -> float:
    read(Image.open(io.BytesIO(work[0])).convert("RGB"))  # warm
    cpu0, outcome = time.process_time(), Outcome()
    t0 = time.perf_counter()
    for data in work:
        t1 = time.perf_counter()
        read(Image.open(io.BytesIO(data)).convert("RGB"))
        outcome.latencies.append(time.perf_counter() - t1)
        outcome.pages += 1
    outcome.seconds = time.perf_counter() - t0
    ppm = report(name, outcome, None)
    print(f"{'':<28} CPU s/page {(time.process_time() - cpu0) / outcome.pages:.2f}  "
          f"RSS {rss_mib(os.getpid()) / 1024:.2f} GB")
    return ppm


def main() -> None:
    args = parse_args()
    pdf = samples.report_pdf(pages=args.pdf_pages, dpi=args.dpi).data if args.pdf_pages else b""
    api, headers = args.url.rstrip("/") + "/api/v1", {"Authorization": f"Token {args.token}"}
    print(f"{args.pages} pages at {args.dpi} DPI per scenario, pipeline {args.pipeline}; "
          f"{os.cpu_count()} CPUs; {time.strftime('%Y-%m-%d %H:%M %Z')}")
    # Warm the worker's engine so model loading is not counted.
    # One warm-up page per worker process (--workers), so every worker has loaded its models.
    run_clients(pages(args.workers, args.dpi, "warm"), args.workers, *ours(args, api, headers))
    if args.peer:
        run_clients(pages(1, args.dpi, "warm"), 1, *peer(args))
    ours_ppm = {}
    for clients in args.clients:
        work = pages(args.pages, args.dpi, f"c{clients}")
        with Meter(("web", "cluster")) as meter:
            outcome = run_clients(work, clients, *ours(args, api, headers))
        ours_ppm[clients] = report(f"ours, {clients} client(s)", outcome, meter)
        if args.peer:
            work = pages(args.pages, args.dpi, f"peer{clients}")
            with Meter(("peer",)) as meter:
                outcome = run_clients(work, clients, *peer(args))
            peer_ppm = report(f"PaddleX serving, {clients} client(s)", outcome, meter)
            print(f"{'':<28} ours ÷ PaddleX serving at {clients} client(s): "
                  f"{ours_ppm[clients] / peer_ppm if peer_ppm else float('nan'):.2f}×", flush=True)
    if args.burst:
        submit_bursts(args, api, headers)
    if args.pdf_pages:
        with Meter(("web", "cluster")) as meter:
            new_client, handle = ours(args, api, headers)
            outcome = run_clients([pdf], 1, new_client,
                                  lambda client, i, d, submits: handle(client, i, d, submits, name="report.pdf"))
        report(f"ours, {args.pdf_pages}-page PDF", outcome, meter)
    if not args.no_bare:
        if args.clients:
            bare_ppm = bare(args, pages(args.pages, args.dpi, "bare"))
            if bare_ppm:
                clients = args.clients[0]
                print(f"{'':<28} ours ({clients} client(s)) ÷ bare PaddleOCR loop: "
                      f"{ours_ppm[clients] / bare_ppm:.2f}×", flush=True)
        if args.pdf_pages and args.workers > 1:
            bare_pdf(args, pdf)


if __name__ == "__main__":
    main()
