"""The engine: build PaddleOCR once, then turn document pages into raw + normalized results.

Stages, each its own module: inputs (load/validate, render) -> textlayer (a PDF
page's own text, where it can be trusted) or orientation (turn and deskew) ->
pipelines (PaddleOCR) -> normalize (schema.Page) -> exports. ``Engine``
holds the loaded models; build one per process and reuse it, loading takes seconds
and ~2 GB.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from . import __version__, detector_scale, orientation, pipelines, stages, textlayer
from .config import PAGE_OPTIONS, EngineConfig
from .errors import OcrError, RecognitionFailed
from .pipelines.base import ReadsTextLayers
from .pipelines.paddle import bgr_array, prepare_process
from .schema import DocumentResult, EngineInfo, Page
from .textfix import text_fixer


@dataclass
class PageOutput:
    page: Page
    raw: dict[str, Any]  # PaddleOCR's own result for the page, untouched (numpy -> lists)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage (names in ``stages``)
    # The image the engine read: upright and deskewed when orientation="auto".
    # Every coordinate in ``page`` is in its frame, so it is the one to store and show.
    image: Image.Image | None = None


class Engine:
    def __init__(self, config: EngineConfig):
        self.config = config
        started = time.perf_counter()
        self.pipeline = pipelines.get(config.pipeline)
        self._built = self.pipeline.build(config)
        self._fix_text = text_fixer(config.lang)
        # One thread: the classifier sees a 224x224 crop, and an idle onnxruntime
        # pool keeps spinning for a while after each run, stealing the cores the
        # detector needs next.
        self._straighten = orientation.PageStraightener(config, prepare_process(config.with_(cpu_threads=1)))
        self.load_seconds = time.perf_counter() - started
        self.info = EngineInfo(
            pipeline=config.pipeline, lang=config.lang, backend=config.backend, device=config.device,
            models=self.pipeline.model_names(config), version=__version__,
        )

    def with_options(self, **options) -> "Engine":
        """This engine with other per-page options (``PAGE_OPTIONS``), sharing its loaded models."""
        unknown = set(options) - set(PAGE_OPTIONS)
        if unknown:
            raise TypeError(f"not a per-page option: {', '.join(sorted(unknown))}")
        view = copy.copy(self)
        view.config = self.config.with_(**options)  # validates the values
        return view

    def process_page(self, document, number: int, *,
                     on_image: Callable[[Image.Image], None] | None = None) -> PageOutput:
        """Render page ``number`` of an open ``inputs.Document`` at the config's scale and OCR it.

        ``PageOutput.image`` is the page as the engine read it; the caller closes it.
        ``on_image`` receives that image before it is read, once it is turned and
        deskewed, so that a caller can store it while detection runs; the engine never
        changes it afterwards.
        """
        scale = self.config.scale
        started = time.perf_counter()
        image = document.render(number, scale=scale)
        rendered = time.perf_counter() - started
        geometry = {"page_number": number, "scale": document.page_scale(number, scale),
                    "dpi": document.page_dpi(number, scale)}
        try:
            # A born-digital page with a text layer it can trust skips detection and recognition.
            plan = textlayer.plan_page(document, number, image, self._text_layer_mode(),
                                       max_glyphs=self.config.text_layer_max_glyphs)
            if plan.use_text:
                if on_image is not None:
                    on_image(image)
                out = self._text_layer_page(image, plan, **geometry)
            else:
                out = self.process_image(image, **geometry, on_image=on_image)
                out.page.text_layer_rejected = plan.rejected
        except BaseException:
            image.close()
            raise
        if out.image is not image:  # turned or deskewed into a new image: the rendered one is done
            image.close()
        out.timings = {stages.RENDER: round(rendered, 4), **out.timings}
        return out

    def process_image(self, image: Image.Image, *, page_number: int, scale: float = 1.0, dpi: float | None = None,
                      on_image: Callable[[Image.Image], None] | None = None) -> PageOutput:
        """OCR one already-rendered page image (RGB). Raises ``RecognitionFailed`` if PaddleOCR fails on it.

        ``on_image`` as for ``process_page``.
        """
        started = time.perf_counter()
        # Turn and deskew before detection; the page records what was done.
        upright = self._straighten(image) if self.config.orientation == "auto" else orientation.Upright(image)
        image = upright.image
        straightened = time.perf_counter()
        if on_image is not None:
            on_image(image)
        gray = np.asarray(image.convert("L"))
        raw = self._run(image, page_number, gray)
        ocr_done = time.perf_counter()
        page = self.pipeline.normalize(raw, page_number=page_number, width=image.width, height=image.height,
                                       scale=scale, dpi=dpi, fix=self._fix_text, gray=gray)
        page.rotation, page.skew = upright.rotation, upright.skew
        return PageOutput(page=page, raw=raw, image=image, timings={
            stages.ORIENTATION: round(straightened - started, 4), stages.OCR: round(ocr_done - straightened, 4),
            stages.NORMALIZE: round(time.perf_counter() - ocr_done, 4),
        })

    def _run(self, image: Image.Image, page_number: int, gray: np.ndarray | None = None) -> dict[str, Any]:
        if gray is None:
            gray = np.asarray(image.convert("L"))
        config = self.config
        side = detector_scale.detector_side(gray, max_side=config.det_max_side, char_px=config.det_char_px)
        try:
            return self.pipeline.run(self._built, config.with_(det_max_side=side), bgr_array(image))
        except OcrError:
            raise
        except Exception as exc:  # PaddleOCR raises bare exceptions of many kinds
            raise RecognitionFailed(f"OCR failed on page {page_number}: {type(exc).__name__}: {exc}") from exc

    def _text_layer_mode(self) -> str:
        # Pipelines that cannot take text-layer lines (vl) read every page with their models.
        return self.config.text_layer if isinstance(self.pipeline, ReadsTextLayers) else "ocr"

    def _text_layer_page(self, image: Image.Image, plan: textlayer.PagePlan, *, page_number: int, scale: float,
                         dpi: float | None) -> PageOutput:
        """Text-layer lines, plus OCR of the image areas that hold no text, through the normaliser."""
        started = time.perf_counter()
        lines_raw = textlayer.ocr_shaped(plan.lines)
        ocr_keys: set[tuple] = set()
        for area in plan.ocr_areas:
            with image.crop(tuple(area)) as crop:
                area_raw = self.pipeline.ocr_lines(self._run(crop, page_number))
            ocr_keys.update(textlayer.add_area_ocr(lines_raw, area_raw, area))
        try:
            raw = self.pipeline.text_layer_raw(self._built, self.config, bgr_array(image), lines_raw)
        except Exception as exc:  # PaddleX raises bare exceptions of many kinds
            raise RecognitionFailed(f"Layout failed on page {page_number}: {type(exc).__name__}: {exc}") from exc
        read = time.perf_counter()
        # No text fixing: the text layer's characters are the document's own.
        page = self.pipeline.normalize(raw, page_number=page_number, width=image.width, height=image.height,
                                       scale=scale, dpi=dpi)
        textlayer.mark_sources(page, ocr_keys)
        return PageOutput(page=page, raw=raw, image=image, timings={
            stages.TEXT_LAYER: round(read - started, 4), stages.NORMALIZE: round(time.perf_counter() - read, 4),
        })

    def process_document(self, document, pages: Iterable[int] | None = None) -> Iterator[PageOutput]:
        """``process_page`` over pages of an open ``inputs.Document`` (all by default), one at a time.

        The page images are closed to bound memory on long documents; re-create
        one with ``orientation.straighten`` from the page's rotation and skew.
        """
        for number in (list(pages) if pages is not None else document.select_pages(None)):
            out = self.process_page(document, number)
            out.image.close()
            out.image = None
            yield out


def assemble_document(*, pages: list[Page], engine: EngineInfo, source: dict[str, Any] | None = None) -> DocumentResult:
    """Join page results into the document result (full text and Markdown in reading order)."""
    from .exports.markdown import document_markdown
    from .exports.text import document_text

    ordered = sorted(pages, key=lambda p: p.page_number)
    return DocumentResult(engine=engine, pages=ordered, text=document_text(ordered),
                          markdown=document_markdown(ordered), source=dict(source or {}))
