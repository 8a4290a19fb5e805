"""Accuracy against other OCR engines on real pages whose own PDF text layer is the ground truth.

    .venv/bin/python bench/compare.py [--cache DIR] [--only NAME ...] [--zoom 1.39] [--det-char-px 0]

Pages: the real-page corpus (``tests/ocr_engine/data/corpus``, see ``bench/build_corpus.py``), the
two Debian Reference pages of the orientation tests, and the typeset two-column paper from the
test samples, clean and as a noisy, skewed scan, and a
two-column page cut by a full-width table with its caption. Readers: our engine (``ocr`` and ``structure``
pipelines, as ``python -m ocr_engine --format text`` prints a page), plain PaddleOCR (the ``ocr``
pipeline's own lines in PaddleOCR's top-to-bottom order: same models, no layout work), RapidOCR
(its defaults) and Tesseract (``tesseract`` CLI with the page's language, if installed).
Reported per page and overall (mean over pages): character error rate (CER, reading order
counts), word error rate (WER) and bag-of-words F1 (order ignored).

``--cache DIR`` keeps every reader's raw output there, so a change to normalization or reading
order is re-measured in seconds (our pipelines are re-normalized from the cached PaddleOCR output).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pypdfium2  # noqa: E402
from PIL import Image  # noqa: E402
from rapidfuzz.distance import Levenshtein  # noqa: E402

from ocr_engine import pipelines  # noqa: E402
from ocr_engine.config import EngineConfig  # noqa: E402
from ocr_engine.metrics import cer  # noqa: E402
from ocr_engine.textfix import text_fixer  # noqa: E402
from tests.ocr_engine import samples, scans  # noqa: E402

DATA = ROOT / "tests" / "ocr_engine" / "data"
TESSERACT_LANGS = {"en": "eng", "de": "deu", "fr": "fra", "es": "spa", "nl": "nld"}


def wer(reference: str, hypothesis: str) -> float:
    ref, hyp = reference.split(), hypothesis.split()
    return Levenshtein.distance(ref, hyp) / max(len(ref), 1)


def bag_f1(reference: str, hypothesis: str) -> float:
    ref, hyp = Counter(reference.split()), Counter(hypothesis.split())
    common = sum((ref & hyp).values())
    if not common:
        return 0.0
    precision, recall = common / sum(hyp.values()), common / sum(ref.values())
    return 2 * precision * recall / (precision + recall)


def corpus_pages():
    """(name, language, RGB image, ground truth) for every page of the comparison."""
    entries = json.loads((DATA / "corpus" / "manifest.json").read_text())
    for entry in entries:
        stem = DATA / "corpus" / entry["name"]
        yield entry["name"], entry["lang"], Image.open(f"{stem}.png").convert("RGB"), Path(f"{stem}.txt").read_text()
    for stem, lang in (("debian-reference-en-p108", "en"), ("debian-reference-de-p79", "de")):
        path = DATA / "pages" / stem
        yield stem, lang, Image.open(f"{path}.png").convert("RGB"), Path(f"{path}.txt").read_text()
    pdf = pypdfium2.PdfDocument(samples.paper_pdf())
    image = pdf[0].render(scale=2).to_pil().convert("RGB")
    truth = pdf[0].get_textpage().get_text_range().replace("\r", "").replace("\ufffe", "")
    yield "paper-two-columns", "en", image, truth
    yield "paper-scanned", "en", scans.scanned(image), truth
    pdf = pypdfium2.PdfDocument(samples.paper_with_table_pdf())
    yield "paper-full-width-table", "en", pdf[0].render(scale=2).to_pil().convert("RGB"), \
        pdf[0].get_textpage().get_text_range().replace("\r", "")


class Cache:
    def __init__(self, folder: Path | None):
        self.folder = folder
        if folder:
            folder.mkdir(parents=True, exist_ok=True)

    def get(self, key: str, make):
        path = self.folder / f"{key}.json" if self.folder else None
        if path and path.is_file():
            return json.loads(path.read_text())
        value = make()
        if path:
            path.write_text(json.dumps(value))
        return value


def zoomed(image: Image.Image, zoom: float) -> Image.Image:
    return image if zoom == 1.0 else image.resize((round(image.width * zoom), round(image.height * zoom)),
                                                  Image.Resampling.BICUBIC)


def our_reader(pipeline: str, config: EngineConfig, cache: Cache):
    """Our pipeline: PaddleOCR's raw output (cached), then our normalization as the engine runs it."""
    engine = None

    def raw_of(image):
        nonlocal engine
        if engine is None:
            from ocr_engine.engine import Engine

            engine = Engine(config.with_(pipeline=pipeline))
        out = engine.process_image(image, page_number=1)
        return {"raw": out.raw, "width": out.image.width, "height": out.image.height}

    def read(name, lang, image):
        cached = cache.get(f"{name}.{pipeline}", lambda: raw_of(image))
        normalizer = pipelines.get(pipeline).normalize  # the pipeline's own, as the engine runs it
        # The page as the engine read it (a deskewed scan is another size: no space check then).
        same = (cached["width"], cached["height"]) == image.size
        gray = np.asarray(image.convert("L")) if same else None
        return normalizer(cached["raw"], page_number=1, width=cached["width"], height=cached["height"], scale=1.0,
                          dpi=None, fix=text_fixer(lang), gray=gray), cached["raw"]

    return read


def readers(config: EngineConfig, cache: Cache):
    ocr, structure = our_reader("ocr", config, cache), our_reader("structure", config, cache)
    yield "ours:structure", lambda name, lang, im: structure(name, lang, im)[0].text
    yield "ours:ocr", lambda name, lang, im: ocr(name, lang, im)[0].text
    # Same det/rec models, lines in PaddleOCR's own order: what the layout work adds or loses.
    yield "paddleocr-lines", lambda name, lang, im: "\n".join(ocr(name, lang, im)[1].get("rec_texts") or ())
    try:
        from rapidocr import RapidOCR

        rapid = None

        def rapidocr(name, lang, im):
            nonlocal rapid
            rapid = rapid or RapidOCR()
            return cache.get(f"{name}.rapidocr", lambda: "\n".join(rapid(im).txts or ()))

        yield "rapidocr", rapidocr
    except ImportError:
        pass
    if shutil.which("tesseract"):
        def tesseract(name, lang, im):
            def run():
                buf = io.BytesIO()
                im.save(buf, format="PNG")
                return subprocess.run(["tesseract", "stdin", "stdout", "-l", TESSERACT_LANGS.get(lang, "eng")],
                                      input=buf.getvalue(), capture_output=True, check=True).stdout.decode()
            return cache.get(f"{name}.tesseract", run)

        yield "tesseract", tesseract


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cache", type=Path, help="folder for raw outputs (re-measure normalization in seconds)")
    parser.add_argument("--only", nargs="*", help="page names to run (default: all)")
    parser.add_argument("--show", help="print this reader's text for the --only pages")
    parser.add_argument("--zoom", type=float, default=1.0,
                        help="enlarge every page by this factor, as if scanned finer (1.39: 144 -> 200 DPI)")
    parser.add_argument("--det-char-px", type=int, default=EngineConfig.det_char_px,
                        help="our engine's detector sizing (EngineConfig.det_char_px); 0: the page's full size")
    args = parser.parse_args()
    models_dir = Path(os.environ.get("OCR_MODELS_DIR", ROOT / "models"))
    pages = [(name, lang, zoomed(image, args.zoom), truth) for name, lang, image, truth in corpus_pages()
             if not args.only or name in args.only]
    cache = Cache(args.cache)
    print(f"{'page':26} {'reader':16} {'CER':>7} {'WER':>7} {'bag F1':>7}")
    totals: dict[str, list[tuple[float, float, float]]] = {}
    for reader, read in readers(EngineConfig(models_dir=models_dir, det_char_px=args.det_char_px or None), cache):
        for name, lang, image, truth in pages:
            text = read(name, lang, image)
            if reader == args.show:
                print(text)
            scores = cer(truth, text), wer(truth, text), bag_f1(truth, text)
            totals.setdefault(reader, []).append(scores)
            print(f"{name:26} {reader:16} {scores[0]:>7.2%} {scores[1]:>7.2%} {scores[2]:>7.3f}", flush=True)
    print(f"\nmean over {len(pages)} pages")
    for reader, scores in totals.items():
        cer_mean, wer_mean, f1_mean = (sum(s[k] for s in scores) / len(scores) for k in range(3))
        print(f"{reader:16} CER {cer_mean:>7.2%}   WER {wer_mean:>7.2%}   bag F1 {f1_mean:.3f}")


if __name__ == "__main__":
    main()
