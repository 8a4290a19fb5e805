"""The normalized result: the one contract between engine, API, UI and exports.

Defined once, here, as dataclasses; published as JSON Schema in
``ocr_engine/result.schema.json`` and documented in ``docs/result-schema.md``.
Coordinates are pixels of the page image the engine saw (PDF pages rendered at
``scale`` x 72 DPI; images at their own size after EXIF rotation), origin top-left.

Change ``SCHEMA_VERSION`` (semver) whenever the shape changes: minor for added
optional fields, major for anything a client could trip over.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SCHEMA_VERSION = "1.2"

BBox = list[float]  # [x0, y0, x1, y1]
Polygon = list[list[float]]  # [[x, y], ...] clockwise from top-left; 4 points for lines

# The closed set of region types every client can rely on. The engine's own
# label (PP-DocLayout / CDLA class name) stays in ``Region.label``.
REGION_TYPES = (
    "title", "text", "list", "table", "figure", "caption", "header", "footer",
    "page_number", "footnote", "formula", "reference", "other",
)


@dataclass
class Word:
    text: str
    bbox: BBox
    confidence: float | None = None


@dataclass
class Line:
    id: str  # "p{page}-l{n}", unique in the document
    region_id: str  # every line belongs to exactly one region
    order: int  # 1-based position in the page's reading order
    polygon: Polygon
    bbox: BBox
    text: str
    confidence: float
    words: list[Word] | None = None
    # Set when a reviewer corrected ``text``; holds what the engine read.
    original_text: str | None = None
    source: str = "ocr"  # "ocr": read by the recogniser; "pdf": taken from the PDF's text layer


@dataclass
class TableCell:
    row: int  # 0-based
    col: int  # 0-based
    row_span: int
    col_span: int
    bbox: BBox | None
    text: str


@dataclass
class Table:
    id: str
    region_id: str
    html: str
    n_rows: int
    n_cols: int
    cells: list[TableCell]


@dataclass
class Region:
    id: str  # "p{page}-r{n}"
    type: str  # one of REGION_TYPES
    label: str  # the engine's own class name
    order: int  # 1-based reading order on the page
    bbox: BBox
    polygon: Polygon
    confidence: float | None  # layout score; None for regions built from OCR lines
    text: str
    source: str = "layout"  # "layout": from the layout model; "ocr": grouped from lines


@dataclass
class Page:
    page_number: int  # 1-based page of the source document
    width: int
    height: int
    scale: float  # render scale for PDF pages; 1.0 for images
    dpi: float | None
    regions: list[Region] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    text: str = ""
    markdown: str = ""
    text_source: str = "ocr"  # "ocr", "pdf" (the PDF's text layer) or "mixed" (both on this page)
    # Why the PDF's text layer was not used on a page that has one, e.g.
    # "unmapped_glyphs", "invisible_ocr_layer", "ink_mismatch", "too_many_glyphs"; None when it was used or absent.
    text_layer_rejected: str | None = None
    rotation: int = 0  # 0/90/180/270: how far the page was turned clockwise to stand upright
    skew: float = 0.0  # degrees the page was deskewed by (counter-clockwise positive); 0 when not


@dataclass
class EngineInfo:
    pipeline: str
    lang: str
    backend: str
    device: str
    models: dict[str, str]  # role -> model name, e.g. {"text_detection": "PP-OCRv6_small_det"}
    version: str  # ocr_engine version


@dataclass
class DocumentResult:
    engine: EngineInfo
    pages: list[Page]
    text: str  # full text in reading order, pages separated by a form feed
    markdown: str  # pages separated by a blank line and an HTML comment "<!-- page N -->"
    source: dict[str, Any] = field(default_factory=dict)  # filename, media_type, sha256, page_count
    schema_version: str = SCHEMA_VERSION
    # 1.2: the document's type and fields when a fields stage read them (docs/extraction.md), the
    # shape of GET /api/v1/jobs/{id}/fields; null where no fields are read.
    fields: dict[str, Any] | None = None


def to_dict(obj) -> dict[str, Any]:
    """Plain JSON-ready dict of any schema dataclass (optional fields stay, as null)."""
    return asdict(obj)


def page_from_dict(data: dict[str, Any]) -> Page:
    """Inverse of ``to_dict`` for a page (used by exports reading stored results)."""
    page = Page(**{k: v for k, v in data.items() if k not in ("regions", "lines", "tables")})
    page.regions = [Region(**r) for r in data.get("regions", [])]
    page.lines = [
        Line(**{**ln, "words": [Word(**w) for w in ln["words"]] if ln.get("words") else None})
        for ln in data.get("lines", [])
    ]
    page.tables = [
        Table(**{**t, "cells": [TableCell(**c) for c in t.get("cells", [])]}) for t in data.get("tables", [])
    ]
    return page


def document_from_dict(data: dict[str, Any]) -> DocumentResult:
    return DocumentResult(
        engine=EngineInfo(**data["engine"]),
        pages=[page_from_dict(p) for p in data["pages"]],
        text=data.get("text", ""),
        markdown=data.get("markdown", ""),
        source=data.get("source", {}),
        schema_version=data.get("schema_version", SCHEMA_VERSION),
        fields=data.get("fields"),
    )
