"""Pages per minute through the watched folder (``manage.py ocr_watch``) against the same pages through the API.

    .venv/bin/python bench/watch.py                          # a scratch embedded site of its own, 100 files
    .venv/bin/python bench/watch.py --files 20 --rounds 2
    make run                                                 # or against a running site, from its environment:
    .venv/bin/python bench/watch.py --url http://127.0.0.1:8000 --token <API token> --user admin

Both ways get ``--files`` distinct one-page PNGs (``tests/ocr_engine/samples.py``'s text page, its title
numbered: no deduplication shortens the work) and end with each page's ``txt`` export in hand, on the
same worker cluster:

* ``API``: one client submits every file (``POST /api/v1/jobs``, one keep-alive connection), then, in
  the same order, waits for each job (``GET /jobs/{id}?wait=50``) and downloads ``export.txt``.
* ``watcher``: a running ``ocr_watch`` (started, and its Django loaded, before the clock) on a fresh
  folder; the files are written into it, the clock stops once every ``<name>.txt`` is in the output
  folder and every original has moved to ``done/``. Its figure includes the settle interval
  (``--settle-seconds``, the command's default 2 s) once per batch.

Without ``--token`` the bench starts what ``make run`` gives with no DATABASE_URL (SQLite, the ORM broker,
one worker, two web processes: ``tests/e2e/conftest.embedded_default``) in a temporary folder; with it,
the watcher runs with this shell's environment, which must name the running site's database and media.
One warm-up job loads the worker's models first. ``--rounds`` alternates which way goes first. It prints
pages/min of each with the one-minute load average after it (the bench shares its cores with whatever
else runs), the watcher's ratio to the API (target: within 10 %), and the watcher process's own CPU
seconds per page.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import argparse  # noqa: E402
import contextlib  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from datetime import datetime, timezone  # noqa: E402

from bench.client import Client, multipart  # noqa: E402
from tests.ocr_engine import samples  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=1, help="API and watcher once each per round, alternating")
    parser.add_argument("--dpi", type=int, default=100, help="resolution of the A4 sample pages")
    parser.add_argument("--pipeline", default="ocr")
    parser.add_argument("--settle-seconds", type=float, default=2.0)
    parser.add_argument("--url", help="a running site (with --token); default: a scratch embedded site")
    parser.add_argument("--token", default=os.environ.get("OCR_API_TOKEN"), help="API token (or $OCR_API_TOKEN)")
    parser.add_argument("--user", default="admin", help="the watcher's user: the token's owner")
    return parser.parse_args()


def pages(run: str, count: int, dpi: int) -> list[tuple[str, bytes]]:
    return [(f"{run}-{n:03d}.png", samples.encode(samples.text_page(title=f"Watched page {run} {n}", dpi=dpi).image,
                                                  "PNG")) for n in range(count)]


def through_api(api: Client, files: list[tuple[str, bytes]], pipeline: str) -> float:
    forms = [multipart({"file": (name, data), "pipeline": pipeline}) for name, data in files]
    t0 = time.perf_counter()
    ids = []
    for form in forms:
        reply = api.request("POST", "/jobs", *form)
        assert reply.status == 202, reply.text()
        ids.append(reply.json()["id"])
    for job_id in ids:
        while (job := api.get(f"/jobs/{job_id}?wait=50").json())["status"] in ("queued", "running"):
            pass
        assert job["status"] == "succeeded", job
        assert api.get(f"/jobs/{job_id}/export.txt").status == 200
    return time.perf_counter() - t0


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process and its waited-for children, from /proc (clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def through_watcher(manage: list[str], env: dict, user: str, files: list[tuple[str, bytes]], args,
                    scratch: Path) -> tuple[float, float]:
    """(wall seconds, the watcher's CPU seconds) for ``files`` dropped into a fresh watched folder."""
    folder, out, log = scratch / "in", scratch / "out", scratch / "watch.log"
    folder.mkdir()
    with log.open("wb") as fh:
        watcher = subprocess.Popen([*manage, "ocr_watch", str(folder), "--out", str(out), "--user", user,
                                    "--format", "txt", "--pipeline", args.pipeline,
                                    "--settle-seconds", str(args.settle_seconds)],
                                   cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(lambda: b"Watching" in log.read_bytes(), watcher, log, 120)
        cpu_before = cpu_seconds(watcher.pid)
        t0 = time.perf_counter()
        for name, data in files:
            (folder / name).write_bytes(data)
        wait_for(lambda: len(list(out.glob("*.txt"))) == len(files) and not any(folder.glob("*.png")),
                 watcher, log, 3600)
        return time.perf_counter() - t0, cpu_seconds(watcher.pid) - cpu_before
    finally:
        os.killpg(watcher.pid, signal.SIGTERM)
        watcher.wait(timeout=30)


def wait_for(condition, process: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if process.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the watcher stopped or took too long:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.05)


@contextlib.contextmanager
def site(args, scratch: Path):
    """(API base URL, token, manage.py command, its environment) of the site measured."""
    if args.token:
        yield (args.url or "http://127.0.0.1:8000"), args.token, [sys.executable, "manage.py"], dict(os.environ)
        return
    from tests.e2e.conftest import embedded_default

    # A scratch site on the loopback address: /metrics may stay open, and the submit rate limit
    # (120 at once) must not turn a 100-file batch of the API way into 429s on a second round.
    os.environ.setdefault("METRICS_PUBLIC", "true")
    os.environ.setdefault("API_THROTTLE_SUBMIT", "100000/min")
    with embedded_default(scratch) as running:
        yield running


def main() -> None:
    args = parse_args()
    started = datetime.now(timezone.utc)
    with tempfile.TemporaryDirectory(prefix="bench-watch-") as tmp, site(args, Path(tmp)) as (base, token, manage, env):
        api = Client(base + "/api/v1", {"Authorization": f"Token {token}"})
        through_api(api, pages("warm", 1, args.dpi), args.pipeline)  # the worker loads its models
        results = []
        for round_ in range(args.rounds):
            run = f"r{round_}-{time.time_ns() % 10**6}"
            api_files, watch_files = pages(f"{run}a", args.files, args.dpi), pages(f"{run}w", args.files, args.dpi)
            measured = {}
            for way in (("api", "watcher") if round_ % 2 == 0 else ("watcher", "api")):
                if way == "api":
                    measured[way] = (through_api(api, api_files, args.pipeline), None)
                else:
                    scratch = Path(tmp) / f"watch-{round_}"
                    scratch.mkdir()
                    measured[way] = through_watcher(manage, env, args.user, watch_files, args, scratch)
                measured[f"{way} load"] = os.getloadavg()[0]  # the benches share their cores with anything else
            results.append(measured)

    print(f"{started:%Y-%m-%d %H:%M} UTC, {platform.node()}, {os.cpu_count()} CPUs; {args.files} one-page PNGs "
          f"({args.dpi} DPI A4) per way, pipeline "
          f"{args.pipeline}, settle {args.settle_seconds:g} s, {'scratch embedded site' if not args.token else base}")
    print("| round | API pages/min (load after) | watcher pages/min (load after) | watcher ÷ API "
          "| watcher CPU s/page |")
    print("|---|---|---|---|---|")
    for index, measured in enumerate(results, start=1):
        api_ppm = args.files / measured["api"][0] * 60
        watch_seconds, watch_cpu = measured["watcher"]
        watch_ppm = args.files / watch_seconds * 60
        print(f"| {index} | {api_ppm:.1f} ({measured['api load']:.1f}) | {watch_ppm:.1f} "
              f"({measured['watcher load']:.1f}) | {watch_ppm / api_ppm:.2f} | "
              f"{watch_cpu / args.files:.3f} |")


if __name__ == "__main__":
    main()
