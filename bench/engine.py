"""Engine throughput and memory, against the bare PaddleOCR call on the same pages.

    .venv/bin/python bench/engine.py                 # ocr + structure at 144 and 200 DPI
    .venv/bin/python bench/engine.py --flat-memory 200   # + a 200-page PDF, RSS every 25 pages

For each pipeline and resolution one engine is built; every page is then run
through the bare pipeline call (``pipeline.predict`` on the BGR array, results
materialised as JSON, which is what any caller must do) and through
``Engine.process_page`` (conversion + PaddleOCR + normalization), alternating so
machine noise hits both alike. The engine's overhead is the difference.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ocr_engine import pipelines  # noqa: E402
from ocr_engine.config import EngineConfig  # noqa: E402
from ocr_engine.engine import Engine  # noqa: E402
from tests.ocr_engine import samples  # noqa: E402


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
    engine.process_page(images[0], page_number=1)  # warm-up: first call allocates arenas
    for _ in range(rounds):
        for n, image in enumerate(images, 1):
            t = time.perf_counter()
            bgr = np.ascontiguousarray(np.asarray(image)[:, :, ::-1])
            pipelines.run_page(engine._pipeline, engine.config, bgr)
            bare_times.append(time.perf_counter() - t)
            t = time.perf_counter()
            engine.process_page(image, page_number=n, scale=dpi / 72)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="passes over the 3 test pages")
    parser.add_argument("--pipelines", default="ocr,structure")
    parser.add_argument("--dpi", default="144,200")
    parser.add_argument("--flat-memory", type=int, default=0, metavar="PAGES")
    args = parser.parse_args()
    models_dir = Path(os.environ.get("OCR_MODELS_DIR", ROOT / "models"))
    print(f"cpu cores: {os.cpu_count()}, models: {models_dir}")
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
