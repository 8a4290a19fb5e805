"""Born-digital PDF pages: text layer (``text_layer=auto``) against OCR of the same page (``text_layer=ocr``).

    .venv/bin/python bench/textlayer.py            # the real pages in tests/ocr_engine/data/born_digital
    .venv/bin/python bench/textlayer.py --repeat 3

For each pipeline one engine is built; each page is rendered once and then read
through ``Engine.process_page`` with the text layer and with OCR, alternating so
machine noise hits both alike. Times are per page, render excluded (both paths
render the page once, for the review UI and the searchable PDF). Also prints the
CER of both readings against ``pdftotext -layout``'s words stored beside each page.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ocr_engine.config import EngineConfig  # noqa: E402
from ocr_engine.engine import Engine  # noqa: E402
from ocr_engine.inputs import open_document  # noqa: E402
from ocr_engine.metrics import cer  # noqa: E402

PAGES = sorted((ROOT / "tests" / "ocr_engine" / "data" / "born_digital").glob("*.pdf"))


def words(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def layout_text(page) -> str:
    rows = sorted(page.lines, key=lambda ln: (round((ln.bbox[1] + ln.bbox[3]) / 2 / (8 * page.scale)), ln.bbox[0]))
    return " ".join(ln.text for ln in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--pipelines", default="ocr,structure")
    args = parser.parse_args()
    models = ROOT / "models"
    print(f"{'pipeline':<10} {'page':<36} {'text layer s':>12} {'OCR s':>8} {'speed-up':>9} {'CER pdf':>8} {'CER ocr':>8}")
    for pipeline in args.pipelines.split(","):
        engine = Engine(EngineConfig(pipeline=pipeline, models_dir=models if models.is_dir() else None))
        ocr = engine.with_options(text_layer="ocr")
        speedups = []
        for path in PAGES:
            reference = words(path.with_suffix(".txt").read_text())
            with open_document(path.read_bytes()) as doc:
                times = {"pdf": [], "ocr": []}
                pages = {}
                for _ in range(args.repeat):
                    for name, eng in (("pdf", engine), ("ocr", ocr)):
                        started = time.perf_counter()  # the whole page step, rendering included
                        out = eng.process_page(doc, 1)
                        out.image.close()
                        pages[name] = out.page
                        times[name].append(time.perf_counter() - started)
            assert pages["pdf"].text_source == "pdf", (path.name, pages["pdf"].text_layer_rejected)
            pdf_s, ocr_s = statistics.median(times["pdf"]), statistics.median(times["ocr"])
            speedups.append(ocr_s / pdf_s)
            print(f"{pipeline:<10} {path.stem:<36} {pdf_s:>12.3f} {ocr_s:>8.2f} {ocr_s / pdf_s:>8.0f}x "
                  f"{cer(reference, words(layout_text(pages['pdf']))):>8.4f} "
                  f"{cer(reference, words(layout_text(pages['ocr']))):>8.4f}", flush=True)
        print(f"{pipeline:<10} {'median speed-up':<36} {statistics.median(speedups):>31.0f}x", flush=True)


if __name__ == "__main__":
    main()
