"""Re-read latency: one redrawn box read by the recognition model a warm worker holds.

    .venv/bin/python bench/reread.py [--rounds 3]

Runs the engine once on the sample text page (to get real line boxes), then re-reads
every line box with ``ocr_engine.reread.LineReader`` as the worker task does
(``jobs.reread.reread_box``: crop deskewed along the box, recognise). Prints the reader's
load time (paid once per worker process) and per-box latency once warm. The queue hop
(web -> django-q2 -> worker -> result row) adds ~0.2 s at Q_POLL=0.2; the end-to-end
figure is printed by tests/e2e/test_reread_e2e.py (-s).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ocr_engine.config import EngineConfig  # noqa: E402
from ocr_engine.engine import Engine  # noqa: E402
from ocr_engine.reread import LineReader  # noqa: E402
from tests.ocr_engine import samples  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", type=Path, default=ROOT / "models")
    args = parser.parse_args()
    config = EngineConfig(pipeline="ocr", lang="en", models_dir=args.models)
    image = samples.text_page(dpi=150).image.convert("RGB")
    lines = Engine(config).process_image(image, page_number=1).page.lines

    started = time.perf_counter()
    reader = LineReader(config)
    load = time.perf_counter() - started
    reader.read(image, lines[0].polygon)  # warm-up: first inference allocates
    seconds, same = [], 0
    for _ in range(args.rounds):
        for line in lines:
            started = time.perf_counter()
            text, _ = reader.read(image, line.polygon)
            seconds.append(time.perf_counter() - started)
            same += text == line.text
    print(f"reader load: {load:.2f} s (once per worker process)")
    print(f"re-read of {len(lines)} line boxes x {args.rounds}: median {statistics.median(seconds) * 1000:.0f} ms, "
          f"max {max(seconds) * 1000:.0f} ms; same text as the engine: {same}/{len(seconds)}")


if __name__ == "__main__":
    main()
