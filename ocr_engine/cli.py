"""``python -m ocr_engine FILE``: OCR a PDF or image from the shell (``fields``: ``ocr_engine.fields.cli``).

Exit status: 0 on success, 2 for unusable input or options (the error's code and
message are printed on stderr), 3 when the engine cannot run here, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import exports
from . import pipelines
from .config import (
    BACKENDS, DEFAULT_LANG, DEFAULT_PIPELINE, DEFAULT_SCALE, ORIENTATION_MODES, TEXT_LAYER_MODES, EngineConfig,
)
from .errors import EngineUnavailable, InputError, OcrError
from .schema import DocumentResult

# The CLI says "text", the exports module and the API say "txt".
FORMAT_ALIASES = {"text": "txt", "markdown": "md", "xml": "alto"}
CLI_FORMATS = ("json", "text", "md", "hocr", "alto", "pdf", exports.PDFA_FORMAT)


def default_models_dir() -> Path | None:
    """OCR_MODELS_DIR, else ./models when it holds a pack, else None (PaddleOCR downloads)."""
    configured = os.environ.get("OCR_MODELS_DIR")
    if configured:
        return Path(configured)
    local = Path("models")
    from .models import is_pack

    return local if is_pack(local) else None


def add_engine_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that say how a file is read: shared by OCR and ``fields``."""
    parser.add_argument("--pipeline", choices=pipelines.names(), default=DEFAULT_PIPELINE)
    parser.add_argument("--lang", default=DEFAULT_LANG, help=f"PaddleOCR language code (default: {DEFAULT_LANG})")
    parser.add_argument("--text-layer", choices=TEXT_LAYER_MODES, default="auto",
                        help="auto: use a PDF page's own text layer where usable; ocr: OCR every page")
    parser.add_argument("--orientation", choices=ORIENTATION_MODES, default="auto",
                        help="auto: turn and deskew scanned pages; none: take pages as they are")
    parser.add_argument("--pages", default=None, help="page range such as 1-3,7 (default: all)")
    parser.add_argument("--scale", type=float, default=DEFAULT_SCALE, help="PDF render scale; 2 = 144 DPI")
    parser.add_argument("-o", "--output", type=Path, default=None, help="output file (default: stdout)")
    parser.add_argument("--password", default=None, help="password of an encrypted PDF")
    parser.add_argument("--backend", choices=BACKENDS, default="onnxruntime")
    parser.add_argument("--device", default="cpu", help="cpu, gpu or gpu:N")
    parser.add_argument("--models-dir", type=Path, default=None,
                        help="offline model pack (default: $OCR_MODELS_DIR or ./models)")
    parser.add_argument("--threads", type=int, default=None, help="CPU threads for inference")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m ocr_engine", description="OCR a PDF or image with PaddleOCR.")
    parser.add_argument("file", type=Path, help="PDF, PNG, JPEG, TIFF, BMP or WebP")
    parser.add_argument("--format", choices=CLI_FORMATS, default="json",
                        help="pdfa: the searchable PDF as PDF/A-2b, born-digital pages kept as they are")
    add_engine_arguments(parser)
    return parser.parse_args(argv)


def run_reporting_errors(run, args: argparse.Namespace) -> int:
    """``run(args)``, with the engine's errors printed on stderr as exit codes 2, 3 and 1 (module docstring)."""
    try:
        return run(args)
    except InputError as exc:
        print(f"error [{exc.code}]: {exc.message}", file=sys.stderr)
        return 2
    except EngineUnavailable as exc:
        print(f"error [{exc.code}]: {exc.message}", file=sys.stderr)
        return 3
    except OcrError as exc:
        print(f"error [{exc.code}]: {exc.message}", file=sys.stderr)
        return 1


def main(argv: list[str] | None = None) -> int:
    return run_reporting_errors(_run, parse_args(argv))


@contextmanager
def read_file(args: argparse.Namespace) -> Iterator[tuple[Any, EngineConfig, DocumentResult]]:
    """Read ``args.file`` with the engine as ``args`` say; yields the open document, the config and the result."""
    from tqdm import tqdm

    from .engine import Engine, assemble_document
    from .inputs import open_document

    config_kwargs = dict(pipeline=args.pipeline, lang=args.lang, backend=args.backend, device=args.device,
                         scale=args.scale, text_layer=args.text_layer, orientation=args.orientation,
                         models_dir=args.models_dir or default_models_dir())
    if args.threads:
        config_kwargs["cpu_threads"] = args.threads
    config = EngineConfig(**config_kwargs)
    if not args.file.is_file():
        raise InputError(f"No such file: {args.file}", code="file_not_found")
    # Validate the document before loading models: bad input fails in milliseconds.
    with open_document(args.file, password=args.password, filename=args.file.name) as document:
        numbers = document.select_pages(args.pages)
        engine = Engine(config)
        with tqdm(total=len(numbers), unit="page", desc=args.file.name, file=sys.stderr,
                  disable=args.quiet) as bar:
            pages = []
            for out in engine.process_document(document, numbers):
                pages.append(out.page)
                bar.update(1)
        result = assemble_document(pages=pages, engine=engine.info, source={
            "filename": document.filename, "media_type": document.media_type, "sha256": document.sha256,
            "page_count": document.page_count,
        })
        yield document, config, result


def write_output(args: argparse.Namespace, data: bytes, pages: int) -> None:
    if args.output:
        args.output.write_bytes(data)
        print(f"wrote {args.output} ({pages} pages)", file=sys.stderr)
    else:
        sys.stdout.buffer.write(data)


def _run(args: argparse.Namespace) -> int:
    from .orientation import straighten

    fmt, pdfa = exports.export_of(FORMAT_ALIASES.get(args.format, args.format))
    with read_file(args) as (document, config, result):
        # The engine read each page turned and deskewed as its result records; the
        # searchable PDF must show that same frame, or the text layer would not line up.
        by_number = {page.page_number: page for page in result.pages}
        data = exports.render(result, fmt, page_image=lambda n: straighten(
            document.render(n, scale=config.scale), by_number[n].rotation, by_number[n].skew),
            pdfa=pdfa, source_pdf=args.file if pdfa and document.kind == "pdf" else None)
    write_output(args, data, len(result.pages))
    return 0
