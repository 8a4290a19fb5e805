"""The parts a page is built from before it becomes ``schema.Page``: recognised lines and blocks.

Shared by every stage of normalization (``paragraphs``, ``block_types``, ``spacing``,
``layout_evidence``, ``normalize``), so that none of them imports another for its types.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .geometry import box_from_polygon, rounded
from .schema import Word


@dataclass
class RawLine:
    polygon: list[list[float]]
    bbox: list[float]
    text: str
    confidence: float
    words: list[Word] | None = None


def ocr_lines(ocr_res: dict[str, Any], fix: Callable[[str], str] = str) -> list[RawLine]:
    """Lines from a PaddleOCR OCR result (``rec_polys``/``rec_texts``/``rec_scores``)."""
    polys = ocr_res.get("rec_polys") or []
    texts = ocr_res.get("rec_texts") or []
    scores = ocr_res.get("rec_scores") or []
    word_texts = ocr_res.get("text_word") or []
    word_boxes = ocr_res.get("text_word_boxes") or []
    lines = []
    for i, (poly, text, score) in enumerate(zip(polys, texts, scores)):
        if not str(text).strip():
            continue
        polygon = [rounded(p) for p in poly]
        words = None
        if i < len(word_texts) and i < len(word_boxes):
            words = _words([fix(w) for w in word_texts[i]], word_boxes[i], float(score))
        lines.append(RawLine(polygon, rounded(box_from_polygon(polygon)), fix(str(text)), round(float(score), 4), words))
    return lines


def _words(texts: Sequence[str], boxes: Sequence[Any], score: float) -> list[Word] | None:
    # PaddleOCR splits a line into words and single CJK characters; keep only
    # real words (whitespace separators come back as their own entries).
    words = []
    for text, box in zip(texts, boxes):
        if not str(text).strip():
            continue
        flat = box_from_polygon(box) if len(box) and hasattr(box[0], "__len__") else list(box)
        words.append(Word(text=str(text).strip(), bbox=rounded(flat), confidence=round(score, 4)))
    return words or None


@dataclass
class Block:
    type: str
    label: str
    bbox: list[float]
    confidence: float | None
    source: str
    members: list[int]
