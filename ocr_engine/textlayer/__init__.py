"""Born-digital PDF pages: read the text layer, OCR only what has none.

``plan_page`` decides per page: the text layer (``use_text``), with the image
areas that still need OCR, or OCR of the whole page (with the reason the text
layer was rejected, if it had one). Text-layer lines enter normalisation in the
shape PaddleOCR's OCR result has (``rec_texts``/``rec_polys``/...), so they
join layout regions, reading order, tables and Markdown exactly like OCR lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image

from ..geometry import box_from_polygon, rounded
from .extract import TextLine, read_page_text
from .trust import TOO_MANY_GLYPHS, ocr_areas, rejection

TEXT_CONFIDENCE = 1.0


@dataclass
class PagePlan:
    use_text: bool = False
    lines: list[TextLine] = field(default_factory=list)
    ocr_areas: list[list[int]] = field(default_factory=list)  # pixel boxes to OCR on a text page
    rejected: str | None = None  # why a page with text is OCR'd


def plan_page(document, page_number: int, image: Image.Image, mode: str, *, max_glyphs: int) -> PagePlan:
    """How to read this page: its text layer (mode "auto", a PDF, text that passes the checks, at most
    ``max_glyphs`` characters) or OCR."""
    if mode != "auto" or document is None or document.kind != "pdf":
        return PagePlan()
    text = document.with_pdf_page(page_number,
                                  lambda page: read_page_text(page, image.width, image.height, max_glyphs))
    if text is None:
        return PagePlan(rejected=TOO_MANY_GLYPHS)
    if not text.lines:
        return PagePlan()
    reason = rejection(text, np.asarray(image.convert("L")))
    if reason is not None:
        return PagePlan(rejected=reason)
    return PagePlan(use_text=True, lines=text.lines, ocr_areas=ocr_areas(text, image.width, image.height))


def ocr_shaped(lines: list[TextLine]) -> dict[str, Any]:
    """Text-layer lines in the shape of PaddleOCR's OCR result, as the normaliser reads it."""
    return {
        "rec_texts": [ln.text for ln in lines],
        "rec_polys": [_polygon(ln.box) for ln in lines],
        "rec_scores": [TEXT_CONFIDENCE] * len(lines),
        "text_word": [[w.text for w in ln.words] for ln in lines],
        "text_word_boxes": [[w.box for w in ln.words] for ln in lines],
    }


def add_area_ocr(raw: dict[str, Any], area_raw: dict[str, Any], area: list[int]) -> list[tuple]:
    """Append an image area's OCR result (crop coordinates) to ``raw`` in page coordinates.

    Returns the keys (``line_key``) of the lines added, so they can be marked as OCR'd.
    """
    dx, dy = area[0], area[1]
    polys = [[[x + dx, y + dy] for x, y in poly] for poly in area_raw.get("rec_polys") or []]
    texts, scores = list(area_raw.get("rec_texts") or []), list(area_raw.get("rec_scores") or [])
    word_texts = list(area_raw.get("text_word") or [])
    word_boxes = [[_shift(box, dx, dy) for box in boxes] for boxes in area_raw.get("text_word_boxes") or []]
    if len(word_texts) != len(polys) or len(word_boxes) != len(polys):
        word_texts, word_boxes = [[] for _ in polys], [[] for _ in polys]
    raw["rec_polys"] += polys
    raw["rec_texts"] += texts
    raw["rec_scores"] += scores
    raw["text_word"] += word_texts
    raw["text_word_boxes"] += word_boxes
    return [line_key(poly) for poly in polys]


def line_key(polygon) -> tuple:
    """A line's identity through normalisation: its rounded bbox, as the normaliser computes it."""
    return tuple(rounded(box_from_polygon([rounded(p) for p in polygon])))


def mark_sources(page, ocr_keys: set[tuple]) -> None:
    """Set ``source`` on every line and ``text_source`` on the page of a text-layer page."""
    for line in page.lines:
        line.source = "ocr" if tuple(line.bbox) in ocr_keys else "pdf"
    page.text_source = "mixed" if any(line.source == "ocr" for line in page.lines) else "pdf"


def _polygon(box: list[float]) -> list[list[float]]:
    x0, y0, x1, y1 = box
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def _shift(box, dx: float, dy: float) -> list:
    if len(box) and hasattr(box[0], "__len__"):
        return [[x + dx, y + dy] for x, y in box]
    return [box[0] + dx, box[1] + dy, box[2] + dx, box[3] + dy]
