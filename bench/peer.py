"""PaddleX's own serving of the same OCR models, the peer that ``bench/load.py --peer`` measures.

    make peer                       # builds .venv-peer once, then serves on 127.0.0.1:8080

Writes a PaddleX ``OCR`` pipeline config that points at the offline pack's
PP-OCRv6 small detector and recogniser (the models our ``ocr`` pipeline uses)
with PaddleX's own defaults for everything else, document preprocessing and
text-line orientation off as in ours, and no result images (``Serving: visualize: False``:
PaddleX's default draws and returns two JPEGs a page, which took two to four times as long as
reading a real page; a client after the text turns it off), and runs ``paddlex --serve`` on
onnxruntime. Run it with the peer venv's Python: ``paddlex[serving]`` and its
dependencies (FastAPI, uvicorn, a pinned OpenCV) stay out of the product's venv.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

CONFIG = """\
pipeline_name: OCR
text_type: general
use_doc_preprocessor: False
use_textline_orientation: False
SubModules:
  TextDetection:
    module_name: text_detection
    model_name: PP-OCRv6_small_det
    model_dir: {models}/PP-OCRv6_small_det
    limit_side_len: 64
    limit_type: min
    max_side_limit: 4000
    thresh: 0.3
    box_thresh: 0.6
    unclip_ratio: 1.5
  TextRecognition:
    module_name: text_recognition
    model_name: PP-OCRv6_small_rec
    model_dir: {models}/PP-OCRv6_small_rec
    batch_size: 6
    score_thresh: 0.0
Serving:
  visualize: False
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", type=Path, default=Path(os.environ.get("OCR_MODELS_DIR", "models")))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8080)
    args = parser.parse_args()
    models = args.models.resolve()
    if not (models / "PP-OCRv6_small_det").is_dir():
        sys.exit(f"No offline model pack at {models} (make models).")
    config = Path(tempfile.mkdtemp(prefix="paddlex-peer-")) / "OCR.yaml"
    config.write_text(CONFIG.format(models=models))
    paddlex = Path(sys.executable).with_name("paddlex")
    os.environ.setdefault("PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK", "True")
    os.execv(paddlex, [str(paddlex), "--serve", "--pipeline", str(config), "--engine", "onnxruntime",
                       "--device", "cpu", "--host", args.host, "--port", str(args.port)])


if __name__ == "__main__":
    main()
