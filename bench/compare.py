"""Accuracy against other OCR engines on PDF pages whose own text layer is the ground truth.

    .venv/bin/python bench/compare.py [PDF:PAGE ...]

Defaults: pages of the Debian manuals found on this machine (libtasn1, shared-mime-info) and
the typeset two-column paper from the test samples, clean and as a noisy, skewed scan. Each page
is rendered at 144 DPI and read by our engine (``ocr`` and ``structure``), RapidOCR (its
defaults) and Tesseract (``tesseract`` CLI, if installed). Reported: character error rate (CER,
reading order included) and bag-of-words F1 (order-free), against the PDF's text layer.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pypdfium2  # noqa: E402

from ocr_engine.config import EngineConfig  # noqa: E402
from ocr_engine.engine import Engine  # noqa: E402
from tests.ocr_engine import samples  # noqa: E402

DEFAULT_PAGES = [
    "/usr/share/doc/libtasn1-doc/libtasn1.pdf:5", "/usr/share/doc/libtasn1-doc/libtasn1.pdf:13",
    "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf:4",
    "/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf:9",
]


def bag_f1(reference: str, hypothesis: str) -> float:
    ref, hyp = Counter(reference.split()), Counter(hypothesis.split())
    common = sum((ref & hyp).values())
    if not common:
        return 0.0
    precision, recall = common / sum(hyp.values()), common / sum(ref.values())
    return 2 * precision * recall / (precision + recall)


def pages_to_test(specs: list[str]):
    for spec in specs:
        path, number = spec.rsplit(":", 1)
        if Path(path).is_file():
            page = pypdfium2.PdfDocument(path)[int(number) - 1]
            yield f"{Path(path).stem}:{number}", page.render(scale=2).to_pil().convert("RGB"), _truth(page)
    pdf = pypdfium2.PdfDocument(samples.paper_pdf())
    image = pdf[0].render(scale=2).to_pil().convert("RGB")
    yield "paper (two columns)", image, _truth(pdf[0])
    yield "paper, scanned", samples.scanned(image), _truth(pdf[0])


def _truth(page) -> str:
    return page.get_textpage().get_text_range().replace("\r", "").replace("\ufffe", "")


def readers(models_dir: Path):
    for pipeline in ("ocr", "structure"):
        engine = Engine(EngineConfig(pipeline=pipeline, models_dir=models_dir))
        yield f"ours:{pipeline}", lambda im, e=engine: "\n".join(
            ln.text for ln in e.process_page(im, page_number=1).page.lines)
    try:
        from rapidocr import RapidOCR

        rapid = RapidOCR()
        yield "rapidocr", lambda im: "\n".join(rapid(im).txts or ())
    except ImportError:
        pass
    if shutil.which("tesseract"):
        def tesseract(im):
            buf = io.BytesIO()
            im.save(buf, format="PNG")
            return subprocess.run(["tesseract", "stdin", "stdout", "-l", "eng"], input=buf.getvalue(),
                                  capture_output=True, check=True).stdout.decode()
        yield "tesseract", tesseract


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pages", nargs="*", default=DEFAULT_PAGES, help="PDF:PAGE (1-based)")
    args = parser.parse_args()
    models_dir = Path(os.environ.get("OCR_MODELS_DIR", ROOT / "models"))
    pages = list(pages_to_test(args.pages))
    print(f"{'page':34} {'reader':16} {'CER':>7} {'bag F1':>7}")
    totals: dict[str, list[tuple[float, float]]] = {}
    for name, read in readers(models_dir):
        for label, image, truth in pages:
            text = read(image)
            cer, f1 = samples.cer(truth, text), bag_f1(truth, text)
            totals.setdefault(name, []).append((cer, f1))
            print(f"{label:34} {name:16} {cer:>7.2%} {f1:>7.3f}", flush=True)
    print("\nmean over pages")
    for name, scores in totals.items():
        print(f"{name:16} CER {sum(c for c, _ in scores) / len(scores):>7.2%}   bag F1 {sum(f for _, f in scores) / len(scores):.3f}")


if __name__ == "__main__":
    main()
