"""Where one page's time goes, and what each engine setting buys, on drawn and real pages.

    .venv/bin/python bench/page_profile.py --profile                # the split, one thread
    .venv/bin/python bench/page_profile.py --configs base inference=openvino   # settings, alternating
    .venv/bin/python bench/page_profile.py --processes 2:cpu_threads=1 1:cpu_threads=2   # workers x threads

Two page sets at 200 DPI: ``synthetic`` (bench/load.py's drawn pages: a report, two columns, a
text page) and ``corpus`` (the real-page corpus, tests/ocr_engine/data/corpus, 144-DPI images
enlarged to 200 DPI as ``bench/compare.py --zoom 1.39`` does).

``--profile`` runs ``Engine.process_image`` under cProfile with one thread and splits each page's
time into detection and recognition (the model runs and PaddleX's pre- and post-processing around
each), the rest of the PaddleOCR call, the engine's own steps, and idle (wall less process CPU
time). cProfile slows Python code more than the models: the shares are the figure, not the seconds.

``--configs`` builds one engine per named configuration (``base`` is EngineConfig's defaults for
the ``ocr`` pipeline; ``field=value`` changes one field) and reads every page with each in turn,
page by page, so that another process's load hits them alike: pages per minute, CPU seconds per
page (this process's CPU time, all threads) and bag-of-words F1 against the page's text.
``--processes`` does the same with N engine processes sharing the pages, as N workers would.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from PIL import Image  # noqa: E402

from bench.compare import bag_f1, zoomed  # noqa: E402
from ocr_engine.config import EngineConfig  # noqa: E402
from ocr_engine.engine import Engine  # noqa: E402
from tests.ocr_engine import samples  # noqa: E402

CORPUS = ROOT / "tests" / "ocr_engine" / "data" / "corpus"
CORPUS_ZOOM = 200 / 144


def synthetic_pages(count: int) -> list[tuple[str, Image.Image, str]]:
    makers = (samples.report_page, samples.two_column_page, lambda dpi: samples.text_page(dpi=dpi))
    out = []
    for n in range(count):
        page = makers[n % len(makers)](dpi=200)
        out.append((f"synthetic-{n}", page.image.convert("RGB"), page.text))
    return out


def corpus_pages(count: int) -> list[tuple[str, Image.Image, str]]:
    stems = sorted(p.with_suffix("") for p in CORPUS.glob("*.png"))[:count]
    return [(s.name, zoomed(Image.open(f"{s}.png").convert("RGB"), CORPUS_ZOOM), Path(f"{s}.txt").read_text())
            for s in stems]


def _frames(stats: pstats.Stats, path_part: str, name: str):
    return [key for key in stats.stats if path_part in key[0] and key[2] == name]


def _cumulative(stats: pstats.Stats, path_part: str, name: str) -> float:
    return sum(stats.stats[key][3] for key in _frames(stats, path_part, name))


def _called_from(stats: pstats.Stats, callee: tuple[str, str], caller: tuple[str, str]) -> float:
    """Cumulative time of ``callee`` frames when called from ``caller`` frames."""
    total = 0.0
    callers = _frames(stats, *caller)
    for key in _frames(stats, *callee):
        for who, timing in stats.stats[key][4].items():
            if who in callers:
                total += timing[3]
    return total


RUNNER = ("onnxruntime_runner.py", "__call__")
DET, REC = ("text_detection/predictor.py", "process"), ("text_recognition/predictor.py", "process")


def profile(name: str, pages, engine: Engine) -> None:
    engine.process_image(pages[0][1], page_number=1)  # warm-up: arenas
    parts = dict.fromkeys(("det model", "det pre/post", "rec model", "rec pre/post", "PaddleX rest",
                           "ours", "idle"), 0.0)
    wall_total = cpu_total = 0.0
    for _, image, _ in pages:
        profiler = cProfile.Profile()
        wall, cpu = time.perf_counter(), time.process_time()
        profiler.enable()
        engine.process_image(image, page_number=1)
        profiler.disable()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        stats = pstats.Stats(profiler)
        det, rec = _cumulative(stats, *DET), _cumulative(stats, *REC)
        det_model, rec_model = _called_from(stats, RUNNER, DET), _called_from(stats, RUNNER, REC)
        predict = _cumulative(stats, "paddleocr/_pipelines/ocr.py", "predict")
        total = stats.total_tt
        parts["det model"] += det_model
        parts["det pre/post"] += det - det_model
        parts["rec model"] += rec_model
        parts["rec pre/post"] += rec - rec_model
        parts["PaddleX rest"] += predict - det - rec
        parts["ours"] += total - predict
        parts["idle"] += max(0.0, wall - cpu)
        wall_total += wall
        cpu_total += cpu
    profiled = sum(parts.values())
    print(f"\n{name}: {len(pages)} pages, {wall_total / len(pages):.2f} s wall, {cpu_total / len(pages):.2f} CPU s "
          "a page under cProfile")
    for part, seconds in parts.items():
        print(f"  {part:14s} {seconds / len(pages):6.3f} s  {100 * seconds / profiled:5.1f} %")


def config_of(spec: str, models_dir: Path) -> EngineConfig:
    config = EngineConfig(pipeline="ocr", models_dir=models_dir)
    if spec == "base":
        return config
    changes = {}
    for item in spec.split(","):
        key, value = item.split("=", 1)
        current = getattr(config, key)
        changes[key] = (value if isinstance(current, str) else None if value == "None"
                        else type(current)(value) if current is not None else int(value))
    return config.with_(**changes)


def compare(name: str, pages, engines: dict[str, Engine], rounds: int) -> None:
    totals = {spec: [0.0, 0.0, 0.0] for spec in engines}  # wall, cpu, f1
    for spec, engine in engines.items():
        engine.process_image(pages[0][1], page_number=1)  # warm-up: arenas
    for _ in range(rounds):
        for _, image, truth in pages:
            for spec, engine in engines.items():
                wall, cpu = time.perf_counter(), time.process_time()
                out = engine.process_image(image, page_number=1)
                totals[spec][0] += time.perf_counter() - wall
                totals[spec][1] += time.process_time() - cpu
                totals[spec][2] += bag_f1(truth, out.page.text)
    count = len(pages) * rounds
    for spec, (wall, cpu, f1) in totals.items():
        print(f"{name:9s} {spec:40s} {60 * count / wall:6.1f} pages/min  {cpu / count:5.2f} CPU s/page  "
              f"F1 {f1 / count:.4f}")


def _read_share(spec: str, models: str, share: list, barrier, results) -> None:
    engine = Engine(config_of(spec, Path(models)))
    engine.process_image(share[0][1], page_number=1)  # warm-up: arenas
    barrier.wait()
    cpu, f1 = time.process_time(), 0.0
    for _, image, truth in share:
        f1 += bag_f1(truth, engine.process_image(image, page_number=1).page.text)
    results.put((time.perf_counter(), time.process_time() - cpu, f1))


def parallel(name: str, pages, spec: str, processes: int, models: Path) -> None:
    """``processes`` engines of ``spec``, each in a process of its own, reading the pages in turn between them."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(processes + 1), context.Queue()
    workers = [context.Process(target=_read_share, args=(spec, str(models), pages[k::processes], barrier, results))
               for k in range(processes)]
    for worker in workers:
        worker.start()
    barrier.wait()
    started = time.perf_counter()
    done = [results.get() for _ in workers]
    for worker in workers:
        worker.join()
    wall, cpu, f1 = max(d[0] for d in done) - started, sum(d[1] for d in done), sum(d[2] for d in done)
    print(f"{name:9s} {processes} x {spec:36s} {60 * len(pages) / wall:6.1f} pages/min  "
          f"{cpu / len(pages):5.2f} CPU s/page  F1 {f1 / len(pages):.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--configs", nargs="*", default=[])
    parser.add_argument("--processes", nargs="*", default=[],
                        help="N:spec: N processes each with an engine of spec, sharing the pages (alternating)")
    parser.add_argument("--pages", type=int, default=6, help="pages per set")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--page-set", choices=("synthetic", "corpus", "both"), default="both")
    parser.add_argument("--models", type=Path, default=Path(os.environ.get("OCR_MODELS_DIR", "models")))
    args = parser.parse_args()
    sets = {name: make(args.pages) for name, make in (("synthetic", synthetic_pages), ("corpus", corpus_pages))
            if args.page_set in (name, "both")}
    if args.profile:
        engine = Engine(EngineConfig(pipeline="ocr", models_dir=args.models, cpu_threads=1))
        for name, pages in sets.items():
            profile(name, pages, engine)
        del engine
    if args.configs:
        engines = {spec: Engine(config_of(spec, args.models)) for spec in args.configs}
        for name, pages in sets.items():
            compare(name, pages, engines, args.rounds)
    for _ in range(args.rounds if args.processes else 0):
        for name, pages in sets.items():
            for item in args.processes:
                count, spec = item.split(":", 1)
                parallel(name, pages, spec, int(count), args.models)
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
