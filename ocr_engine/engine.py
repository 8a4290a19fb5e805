"""The engine: build PaddleOCR once, then turn page images into raw + normalized results.

Stages, each its own module: inputs (load/validate, render) -> pipelines (PaddleOCR)
-> normalize (schema.Page) -> exports. ``Engine`` holds the loaded models; build
one per process and reuse it, loading takes seconds and ~2 GB.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from . import __version__, normalize, pipelines
from .config import EngineConfig
from .errors import OcrError, RecognitionFailed
from .schema import DocumentResult, EngineInfo, Page
from .textfix import text_fixer


@dataclass
class PageOutput:
    page: Page
    raw: dict[str, Any]  # PaddleOCR's own result for the page, untouched (numpy -> lists)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage


class Engine:
    def __init__(self, config: EngineConfig):
        self.config = config
        started = time.perf_counter()
        self._pipeline = pipelines.build(config)
        self._fix_text = text_fixer(config.lang)
        self.load_seconds = time.perf_counter() - started
        self.info = EngineInfo(
            pipeline=config.pipeline, lang=config.lang, backend=config.backend, device=config.device,
            models=pipelines.model_names(config), version=__version__,
        )

    def process_page(self, image: Image.Image, *, page_number: int, scale: float = 1.0,
                     dpi: float | None = None) -> PageOutput:
        """OCR one page image (RGB). Raises ``RecognitionFailed`` if PaddleOCR fails on it."""
        # PaddleOCR treats ndarrays as OpenCV images, i.e. BGR.
        bgr = np.ascontiguousarray(np.asarray(image.convert("RGB"))[:, :, ::-1])
        started = time.perf_counter()
        try:
            raw = pipelines.run_page(self._pipeline, self.config, bgr)
        except OcrError:
            raise
        except Exception as exc:  # PaddleOCR raises bare exceptions of many kinds
            raise RecognitionFailed(f"OCR failed on page {page_number}: {type(exc).__name__}: {exc}") from exc
        ocr_done = time.perf_counter()
        normalizer = normalize.normalize_ocr if self.config.pipeline == "ocr" else normalize.normalize_structure
        page = normalizer(raw, page_number=page_number, width=image.width, height=image.height, scale=scale, dpi=dpi,
                          fix=self._fix_text)
        return PageOutput(page=page, raw=raw, timings={
            "ocr": round(ocr_done - started, 4), "normalize": round(time.perf_counter() - ocr_done, 4),
        })

    def process_document(self, document, pages: Iterable[int] | None = None, *,
                         on_page: Callable[[PageOutput], None] | None = None) -> Iterator[PageOutput]:
        """Render and OCR pages of an open ``inputs.Document`` one at a time."""
        numbers = list(pages) if pages is not None else document.select_pages(None)
        for number in numbers:
            started = time.perf_counter()
            image = document.render(number, scale=self.config.scale)
            rendered = time.perf_counter() - started
            out = self.process_page(image, page_number=number, scale=document.page_scale(number, self.config.scale),
                                    dpi=document.page_dpi(number, self.config.scale))
            out.timings["render"] = round(rendered, 4)
            image.close()
            if on_page is not None:
                on_page(out)
            yield out


def assemble_document(*, pages: list[Page], engine: EngineInfo, source: dict[str, Any] | None = None) -> DocumentResult:
    """Join page results into the document result (full text and Markdown in reading order)."""
    from .exports.markdown import document_markdown
    from .exports.text import document_text

    ordered = sorted(pages, key=lambda p: p.page_number)
    return DocumentResult(engine=engine, pages=ordered, text=document_text(ordered),
                          markdown=document_markdown(ordered), source=dict(source or {}))
