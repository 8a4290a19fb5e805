"""Engine throughput and memory, against the bare PaddleOCR call on the same pages.

    .venv/bin/python bench/engine.py                 # ocr + structure at 144 and 200 DPI
    .venv/bin/python bench/engine.py --flat-memory 200   # + a 200-page PDF, RSS every 25 pages
    .venv/bin/python bench/engine.py --orientation --pipelines ocr   # turned/skewed real pages only

For each pipeline and resolution one engine is built; every page is then run
through the bare pipeline call (``pipeline.predict`` on the BGR array, results
materialised as JSON, which is what any caller must do) and through
``Engine.process_image`` (conversion + PaddleOCR + normalization), alternating so
machine noise hits both alike. The engine's overhead is the difference.

``--orientation`` instead reads real pages (tests/ocr_engine/data/pages) upright,
turned and skewed, with ``orientation="auto"`` and ``"none"`` alternating: CER
against the page's own text per variant, and the share of the page's time the
orientation step (classifier + skew estimate + turn/deskew) takes.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ocr_engine.config import EngineConfig  # noqa: E402
from ocr_engine.engine import Engine  # noqa: E402
from ocr_engine.metrics import cer  # noqa: E402
from ocr_engine.pipelines.paddle import bgr_array  # noqa: E402
from tests.ocr_engine import samples, scans  # noqa: E402


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_pages(dpi: int):
    pages = [samples.report_page(dpi=dpi).image, samples.two_column_page(dpi=dpi).image, samples.text_page(dpi=dpi).image]
    return [p.convert("RGB") for p in pages]


def run(pipeline: str, dpi: int, models_dir: Path | None, rounds: int) -> dict:
    engine = Engine(EngineConfig(pipeline=pipeline, models_dir=models_dir))
    images = bench_pages(dpi)
    bare_times, engine_times = [], []
    engine.process_image(images[0], page_number=1)  # warm-up: first call allocates arenas
    for _ in range(rounds):
        for n, image in enumerate(images, 1):
            t = time.perf_counter()
            engine.pipeline.run(engine._built, engine.config, bgr_array(image))
            bare_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            engine.process_image(image, page_number=n, scale=dpi / 72)
            engine_times.append(time.perf_counter() - t)
    bare, eng = sum(bare_times), sum(engine_times)
    return {
        "pipeline": pipeline, "dpi": dpi, "pages": len(engine_times),
        "bare_ppm": 60 * len(bare_times) / bare, "engine_ppm": 60 * len(engine_times) / eng,
        "overhead_pct": 100 * (eng - bare) / bare,
        "median_page_s": statistics.median(engine_times), "load_s": engine.load_seconds,
    }


def flat_memory(n_pages: int, models_dir: Path | None) -> None:
    from ocr_engine.inputs import open_document

    pdf = samples.pdf_from_images([samples.text_page(dpi=100).image] * n_pages, dpi=100)
    engine = Engine(EngineConfig(pipeline="ocr", models_dir=models_dir, scale=1.0))
    print(f"\n{n_pages}-page PDF, ocr pipeline, scale 1.0: RSS (MiB) by page")
    started = time.perf_counter()
    with open_document(pdf) as doc:
        for out in engine.process_document(doc):
            n = out.page.page_number
            if n == 1 or n % 25 == 0:
                print(f"  page {n:4d}: RSS {rss_mib():7.1f}   elapsed {time.perf_counter() - started:6.1f} s", flush=True)
    print(f"  peak RSS {peak_rss_mib():.1f} MiB")


def orientation_cost(pipeline: str, models_dir: Path | None, rounds: int) -> None:
    engine = Engine(EngineConfig(pipeline=pipeline, models_dir=models_dir))
    modes = {"auto": engine, "none": engine.with_options(orientation="none")}
    variants = {"upright": (lambda im: im, 0, 0.0), **scans.SCAN_VARIANTS}
    engine.process_image(scans.real_page(scans.REAL_PAGES[0])[0], page_number=1)  # warm-up
    print(f"\n{pipeline}: {'page':26} {'variant':11} {'rot':>4} {'skew':>5} {'CER auto':>9} {'CER none':>9}"
          f" {'auto s':>7} {'none s':>7} {'orient s':>8} {'orient %':>8}")
    # The fair baseline of "auto" on a turned or skewed page is "none" on the upright
    # page (same text to read); "none" on the turned page reads little and is faster.
    shares, auto_total, baseline_total = [], 0.0, 0.0
    for name in scans.REAL_PAGES:
        upright, truth = scans.real_page(name)
        baseline = None
        for variant, (make, _, _) in variants.items():
            image = make(upright)
            outs, best = {}, {"auto": float("inf"), "none": float("inf")}
            # Fastest of ``rounds`` runs, the two modes alternating and swapping who goes
            # first: the first call on a new image size is slower (onnxruntime's arenas grow).
            for r in range(rounds):
                for mode in (("auto", "none") if r % 2 == 0 else ("none", "auto")):
                    t = time.perf_counter()
                    outs[mode] = modes[mode].process_image(image, page_number=1, scale=scans.REAL_PAGE_DPI / 72,
                                                          dpi=scans.REAL_PAGE_DPI)
                    best[mode] = min(best[mode], time.perf_counter() - t)
            auto = outs["auto"]
            share = 100 * auto.timings["orientation"] / best["auto"]
            shares.append(share)
            baseline = best["none"] if baseline is None else baseline  # variants start with "upright"
            auto_total, baseline_total = auto_total + best["auto"], baseline_total + baseline
            print(f"{'':{len(pipeline) + 2}}{name:26} {variant:11} {auto.page.rotation:>4} {auto.page.skew:>5.1f}"
                  f" {cer(truth, auto.page.text):>9.4f} {cer(truth, outs['none'].page.text):>9.4f}"
                  f" {best['auto']:>7.2f} {best['none']:>7.2f} {auto.timings['orientation']:>8.3f} {share:>7.1f}%",
                  flush=True)
    print(f"{'':{len(pipeline) + 2}}orientation step: median {statistics.median(shares):.1f}% of a page's time,"
          f" max {max(shares):.1f}%; auto on every variant vs none on the upright page:"
          f" {100 * (auto_total / baseline_total - 1):+.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="passes over the 3 test pages")
    parser.add_argument("--pipelines", default="ocr,structure")
    parser.add_argument("--dpi", default="144,200")
    parser.add_argument("--flat-memory", type=int, default=0, metavar="PAGES")
    parser.add_argument("--orientation", action="store_true", help="only the turned/skewed real-page run")
    args = parser.parse_args()
    models_dir = Path(os.environ.get("OCR_MODELS_DIR", ROOT / "models"))
    print(f"cpu cores: {os.cpu_count()}, models: {models_dir}")
    if args.orientation:
        for pipeline in args.pipelines.split(","):
            orientation_cost(pipeline, models_dir, args.rounds)
        return
    print(f"{'pipeline':10} {'dpi':>4} {'pages':>5} {'bare p/min':>10} {'engine p/min':>12} {'overhead':>9} {'median s':>9} {'load s':>7}")
    for pipeline in args.pipelines.split(","):
        for dpi in (int(d) for d in args.dpi.split(",")):
            r = run(pipeline, dpi, models_dir, args.rounds)
            print(f"{r['pipeline']:10} {r['dpi']:>4} {r['pages']:>5} {r['bare_ppm']:>10.1f} {r['engine_ppm']:>12.1f}"
                  f" {r['overhead_pct']:>8.1f}% {r['median_page_s']:>9.2f} {r['load_s']:>7.1f}", flush=True)
    print(f"peak RSS {peak_rss_mib():.1f} MiB")
    if args.flat_memory:
        flat_memory(args.flat_memory, models_dir)


if __name__ == "__main__":
    main()
