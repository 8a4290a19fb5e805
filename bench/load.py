"""Throughput under load: our API (``make run``) and, optionally, PaddleX's own serving, same pages.

    make run                                   # in another shell; it prints an API token
    .venv/bin/python bench/load.py --token <API token>
    .venv/bin/python bench/load.py --token ... --peer http://127.0.0.1:8080   # + `paddlex --serve`
    .venv/bin/python bench/load.py --token ... --clients 1 4 --pages 20 --dpi 200 --pdf-pages 10
    .venv/bin/python bench/load.py --token ... --clients --pdf-pages 0 --burst 20 --no-bare
    .venv/bin/python bench/load.py --token ... --page-set corpus --corpus-root x   # x: as for build_corpus.py

Two page sets (``--page-set``, both by default), each through every scenario below, labelled with
its name:

* ``synthetic``: the pages ``tests/ocr_engine/samples.py`` draws (a report with a table, two
  columns, prose; A4) in turn, each with its number drawn in a corner.
* ``corpus``: real pages, which nothing was tuned on: the real-page corpus's
  (``bench/build_corpus.py``: pages of Debian documentation PDFs) rendered from their PDFs at
  ``--dpi``, in 16 grey levels as the corpus is; where a run needs more, the page after each of
  them in its PDF, then the one after that, and so on, leaving out pages with under ``MIN_WORDS``
  words of text (blank, a title alone). Ours never gets a page twice in a run; the client counts
  take the pages in turn, so that each gets corpus pages and their neighbours alike. A text chunk
  in each PNG (the pixels left alone) makes every file distinct from one run to the next. The PDFs
  are those of the packages ``bench/build_corpus.py`` names, unpacked under ``--corpus-root``.

Scenarios, one after the other (never at the same time). Each client count runs against ours and
then against the peer on the same files, before the next count: the shared VMs this was measured
on changed speed by up to a fifth within a run, and measuring all of ours before all of the peer's
let that drift decide the ratio. A table of the ratios (ours ÷ peer, ours ÷ the bare PaddleOCR
loop) for each page set ends the report.

* ``N clients``: ``--pages`` pages as separate PNG files, taken from one shared queue by
  N client threads; each submits a page, waits for its job to end (``GET
  /jobs/{id}?wait=50``, answered when the job ends) and reads ``GET …/result``.
  The peer answers ``POST /ocr`` synchronously.
* ``PDF``: one ``--pdf-pages`` PDF of further pages as one job (ours only: the peer serves images).
* ``bursts`` (``--burst N``): ``--bursts`` rounds of N submits sent at the same instant, each
  on its client's open connection, while the worker OCRs a 10-page PDF (ours only): the
  submit request's latency when it cannot hide behind other clients' waits.
* ``bare``: after the servers are measured, in this process on the first client count's pages:
  ``Engine.process_image`` (our engine without the platform around it) and a
  plain ``PaddleOCR(...).predict`` loop (PaddleOCR's own defaults, the same det/rec models, document preprocessing off). With ``--workers`` > 1 and a PDF, also
  the hardware's ceiling for that PDF: our engine alone in one process, then in
  ``--workers`` processes sharing its pages.

For each it prints pages per minute, job latency p50/p95 (ours also the submit request's own
p50/p95: with more pages than clients, most submits arrive while the worker is OCRing and the
other clients wait for their jobs), errors, CPU seconds per
page of the server's processes (web and worker cluster apart), their summed peak
RSS, and their peak PSS (what the tree really holds: django-q2 forks its
processes, and RSS counts the pages they share once in each). Server processes are found by their command line, with
every process they start: ours are ``uvicorn`` or ``ocrsite.asgi`` (web: uvicorn's ``--workers``
are spawned with another command line) and ``qcluster`` (cluster, with the worker processes it
forks); the peer's is ``paddlex``. Every file is distinct, so no deduplication shortens the work.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import base64  # noqa: E402
import io  # noqa: E402
import itertools  # noqa: E402
import os  # noqa: E402
import queue  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

from PIL import Image, ImageDraw  # noqa: E402
from PIL.PngImagePlugin import PngInfo  # noqa: E402

from bench import build_corpus  # noqa: E402
from bench.client import Client, multipart  # noqa: E402
from bench.system import percentile  # noqa: E402
from tests.ocr_engine import samples  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
PSS_EVERY = 8  # RSS samples (0.25 s apart) per PSS sample
ROLES = {"web": ("uvicorn", "ocrsite.asgi"), "cluster": ("qcluster",), "peer": ("paddlex",)}
MIN_WORDS = 20  # a corpus PDF's page with fewer words in its text layer is not a page of text
WIDTH = 40  # of a report line's label


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
                        "(the server's API_THROTTLE_SUBMIT, 200/min by default, counts them all)")
    parser.add_argument("--no-bare", action="store_true")
    parser.add_argument("--page-set", choices=("synthetic", "corpus", "both"), default="both",
                        help="drawn pages, real pages of the corpus's PDFs (see the docstring), or both")
    parser.add_argument("--corpus-root", type=Path, default=Path("/"),
                        help="where bench/build_corpus.py's packages were unpacked")
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


class SyntheticPages:
    """The drawn pages of the module's docstring."""

    name = "synthetic"

    def __init__(self, dpi: int):
        self.dpi = dpi

    def scenarios(self, count: int, tags: list[str]) -> list[list[bytes]]:
        return [pages(count, self.dpi, tag) for tag in tags]

    def pdf(self, count: int) -> bytes:
        return samples.report_pdf(pages=count, dpi=self.dpi).data


class CorpusPages:
    """The real pages of the module's docstring, from the corpus's PDFs under ``root``."""

    name = "corpus"

    def __init__(self, root: Path, dpi: int):
        paths = {pdf: build_corpus.pdf_path(root, pdf) for _, _, pdf, _, _ in build_corpus.PAGES}
        missing = sorted(str(path) for path in paths.values() if not path.exists())
        if missing:
            raise SystemExit(f"--page-set corpus: no {', '.join(missing)}; unpack the packages that "
                             "bench/build_corpus.py names and pass --corpus-root (or --page-set synthetic)")
        self.dpi, self.docs = dpi, {pdf: build_corpus.open_pdf(path) for pdf, path in paths.items()}
        self._walk = self._pages()

    def _pages(self):
        """(corpus page index, step, PDF page): each corpus page, then the page after each, ..."""
        taken = set()
        for step in itertools.count():
            ahead = [(k, pdf, number + step) for k, (_, _, pdf, number, _) in enumerate(build_corpus.PAGES)
                     if number + step <= len(self.docs[pdf])]
            if not ahead:
                raise SystemExit("--page-set corpus: the corpus's PDFs have no more pages")
            for k, pdf, number in ahead:
                page = self.docs[pdf][number - 1]
                if (pdf, number) not in taken and len(build_corpus.page_text(page).split()) >= MIN_WORDS:
                    yield k, step, page
                taken.add((pdf, number))

    def _image(self, page) -> Image.Image:
        return build_corpus.render(page, self.dpi / 72).convert("L")

    def scenarios(self, count: int, tags: list[str]) -> list[list[bytes]]:
        shares: list[list] = [[] for _ in tags]
        while any(len(share) < count for share in shares):
            k, step, page = next(self._walk)
            share = shares[(k + step) % len(tags)]
            if len(share) < count:
                share.append(page)
        out = []
        for tag, share in zip(tags, shares):
            out.append([])
            for n, page in enumerate(share):
                stamp = PngInfo()  # the same pixels, a distinct file
                stamp.add_text("Comment", f"{tag} page {n} {time.time_ns()}")
                out[-1].append(samples.encode(self._image(page), "PNG", pnginfo=stamp))
        return out

    def pdf(self, count: int) -> bytes:
        return samples.pdf_from_images([self._image(next(self._walk)[2]) for _ in range(count)], self.dpi)


# --- the server's processes -------------------------------------------------------------------

def role_pids() -> dict[str, list[int]]:
    """Each role's processes: those whose command line names it, and every process they started."""
    parent, role_of = {}, {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            parent[int(entry)] = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        if cmdline.startswith(("/bin/sh", "/bin/bash", "sh ", "bash ")) or "bench/load.py" in cmdline:
            continue  # make's shell names both commands; it does none of the work
        role_of[int(entry)] = next((role for role, needles in ROLES.items() if any(n in cmdline for n in needles)),
                                   None)
    found: dict[str, list[int]] = {role: [] for role in ROLES}
    for pid in parent:
        ancestor = pid  # the nearest process, itself or above, that names a role
        while ancestor in parent and role_of.get(ancestor) is None:
            ancestor = parent[ancestor]
        if role_of.get(ancestor):
            found[role_of[ancestor]].append(pid)
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
    print(f"{f'submit bursts of {args.burst}':<{WIDTH}} {len(latencies)} submits while OCR runs: "
          f"p50 {percentile(latencies, 0.5) * 1000:.0f} ms, p95 {percentile(latencies, 0.95) * 1000:.0f} ms, "
          f"max {max(latencies) * 1000:.0f} ms  errors {len(errors)}  web CPU {web_ms:.1f} ms/submit", flush=True)
    for error in sorted(set(errors))[:5]:
        print(f"    error: {error}")


def report(label: str, outcome: Outcome, meter: Meter | None) -> float:
    """Print one scenario's line; return its pages per minute."""
    ppm = outcome.pages / outcome.seconds * 60 if outcome.seconds else 0.0
    line = (f"{label:<{WIDTH}} {ppm:6.1f} pages/min  p50 {percentile(outcome.latencies, 0.5):6.2f} s  "
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


def bare(args, works: dict[str, list[bytes]]) -> dict[str, float]:
    """Our engine, then (``ocr`` pipeline) PaddleOCR's own loop, in this process, on each page set's
    pages; PaddleOCR's pages/min by page set."""
    from ocr_engine.engine import Engine
    from ocr_engine.pipelines import get as get_pipeline
    from ocr_engine.pipelines.paddle import bgr_array, prepare_process

    config = bare_config(args, args.threads)
    engine = Engine(config)
    for name, work in works.items():
        bare_loop(f"{name}: bare engine loop", work, lambda image: engine.process_image(image, page_number=1))
    if args.pipeline != "ocr":
        return {}
    from paddleocr import PaddleOCR

    paddleocr = PaddleOCR(**get_pipeline("ocr").model_args(config), **prepare_process(config))
    return {name: bare_loop(f"{name}: bare PaddleOCR loop", work,
                            lambda image: [r.json for r in paddleocr.predict(bgr_array(image))])
            for name, work in works.items()}


def bare_pdf(args, name: str, pdf: bytes) -> None:
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
    print(f"{f'{name}: bare engine, {args.pdf_pages}-page PDF':<{WIDTH}} 1 process {seconds[1]:.1f} s, "
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
    print(f"{'':<{WIDTH}} CPU s/page {(time.process_time() - cpu0) / outcome.pages:.2f}  "
          f"RSS {rss_mib(os.getpid()) / 1024:.2f} GB")
    return ppm


def print_ratios(ratios: dict[tuple[str, str], float], names: list[str]) -> None:
    """``ratios[row, page set]`` as a table, a column per page set."""
    if not ratios:
        return
    print(f"{'ratios':<{WIDTH}}" + "".join(f"{name:>11}" for name in names))
    for row in dict.fromkeys(row for row, _ in ratios):
        print(f"{row:<{WIDTH}}" + "".join(f"{ratios[row, name]:>10.2f}×" if (row, name) in ratios else " " * 11
                                          for name in names), flush=True)


def main() -> None:
    args = parse_args()
    page_sets = [SyntheticPages(args.dpi)] if args.page_set != "corpus" else []
    if args.page_set != "synthetic":
        page_sets.append(CorpusPages(args.corpus_root, args.dpi))  # missing PDFs stop the run here
    api, headers = args.url.rstrip("/") + "/api/v1", {"Authorization": f"Token {args.token}"}
    print(f"{args.pages} pages at {args.dpi} DPI per scenario, pipeline {args.pipeline}, page sets "
          f"{', '.join(page_set.name for page_set in page_sets)}; {os.cpu_count()} CPUs; "
          f"{time.strftime('%Y-%m-%d %H:%M %Z')}")
    # Warm the worker's engine so model loading is not counted.
    # One warm-up page per worker process (--workers), so every worker has loaded its models.
    run_clients(pages(args.workers, args.dpi, "warm"), args.workers, *ours(args, api, headers))
    if args.peer:
        run_clients(pages(1, args.dpi, "warm"), 1, *peer(args))
    ratios: dict[tuple[str, str], float] = {}  # (what, page set) -> ratio
    ours_ppm: dict[tuple[str, int], float] = {}
    bare_work: dict[str, list[bytes]] = {}  # the first client count's pages of each set
    pdfs: dict[str, bytes] = {}
    for page_set in page_sets:
        name = page_set.name
        works = page_set.scenarios(args.pages, [f"c{clients}" for clients in args.clients]) if args.clients else []
        for clients, work in zip(args.clients, works):
            with Meter(("web", "cluster")) as meter:
                outcome = run_clients(work, clients, *ours(args, api, headers))
            ours_ppm[name, clients] = report(f"{name}: ours, {clients} client(s)", outcome, meter)
            if args.peer:  # the same files: the peer keeps nothing between requests
                with Meter(("peer",)) as meter:
                    outcome = run_clients(work, clients, *peer(args))
                peer_ppm = report(f"{name}: PaddleX serving, {clients} client(s)", outcome, meter)
                ratios[f"ours ÷ PaddleX serving, {clients} client(s)", name] = (
                    ours_ppm[name, clients] / peer_ppm if peer_ppm else float("nan"))
        if works:
            bare_work[name] = works[0]
        if args.pdf_pages:
            pdfs[name] = page_set.pdf(args.pdf_pages)
            with Meter(("web", "cluster")) as meter:
                new_client, handle = ours(args, api, headers)
                outcome = run_clients([pdfs[name]], 1, new_client,
                                      lambda client, i, d, submits: handle(client, i, d, submits, name="report.pdf"))
            report(f"{name}: ours, {args.pdf_pages}-page PDF", outcome, meter)
    if args.burst:
        submit_bursts(args, api, headers)
    if not args.no_bare:
        if bare_work:
            clients = args.clients[0]
            for name, bare_ppm in bare(args, bare_work).items():
                ratios[f"ours ({clients} client(s)) ÷ bare PaddleOCR loop", name] = ours_ppm[name, clients] / bare_ppm
        if args.workers > 1:
            for name, pdf in pdfs.items():
                bare_pdf(args, name, pdf)
    print_ratios(ratios, [page_set.name for page_set in page_sets])


if __name__ == "__main__":
    main()
