"""Typed objects for the server's answers: the normalized result (schema 1.x), search hits, edits, progress.

The result classes mirror the server's result schema field for field (``ocr_engine/schema.py``,
published as ``result.schema.json``; docs/result-schema.md). Coordinates are pixels of the page
image the engine read, origin top-left. Fields a newer minor version adds are ignored here;
``raw`` keeps the whole answer.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urljoin

from ocr_client.errors import SchemaMismatch

SCHEMA_VERSION = "1.2"  # the result schema this client was written for

BBox = list[float]  # [x0, y0, x1, y1]
Polygon = list[list[float]]  # [[x, y], ...] clockwise from the top-left point

FINAL_STATUSES = ("succeeded", "failed", "canceled")


def _known(cls, data: dict) -> dict:
    """``data``'s keys that ``cls`` has: a newer server's added optional fields are skipped."""
    names = {f.name for f in dataclasses.fields(cls)}
    return {key: value for key, value in data.items() if key in names}


@dataclass
class Word:
    text: str
    bbox: BBox
    confidence: float | None = None


@dataclass
class Line:
    """One text line; ``region_id`` names the region of its page that holds it."""

    id: str
    region_id: str
    order: int
    polygon: Polygon
    bbox: BBox
    text: str
    confidence: float
    words: list[Word] | None = None
    original_text: str | None = None  # what the engine read, once a reviewer corrected ``text``
    source: str = "ocr"  # "ocr" or "pdf" (the PDF's own text layer)

    @classmethod
    def from_dict(cls, data: dict) -> Line:
        words = data.get("words")
        return cls(**{**_known(cls, data), "words": [Word(**_known(Word, w)) for w in words] if words else None})


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

    @classmethod
    def from_dict(cls, data: dict) -> Table:
        return cls(**{**_known(cls, data), "cells": [TableCell(**_known(TableCell, c)) for c in data.get("cells", [])]})


@dataclass
class Region:
    id: str
    type: str  # title, text, list, table, figure, caption, header, footer, page_number, footnote, formula, ...
    label: str  # the layout model's own class name
    order: int
    bbox: BBox
    polygon: Polygon
    confidence: float | None
    text: str
    source: str = "layout"


@dataclass
class Page:
    page_number: int  # 1-based page of the source document
    width: int
    height: int
    scale: float
    dpi: float | None
    regions: list[Region] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    text: str = ""
    markdown: str = ""
    text_source: str = "ocr"
    text_layer_rejected: str | None = None
    rotation: int = 0
    skew: float = 0.0

    @classmethod
    def from_dict(cls, data: dict) -> Page:
        plain = {k: v for k, v in _known(cls, data).items() if k not in ("regions", "lines", "tables")}
        return cls(**plain, regions=[Region(**_known(Region, r)) for r in data.get("regions", [])],
                   lines=[Line.from_dict(line) for line in data.get("lines", [])],
                   tables=[Table.from_dict(t) for t in data.get("tables", [])])

    def region_lines(self, region_id: str) -> list[Line]:
        """The lines of region ``region_id``, in reading order."""
        return [line for line in self.lines if line.region_id == region_id]

    def line(self, line_id: str) -> Line | None:
        return next((line for line in self.lines if line.id == line_id), None)


@dataclass
class EngineInfo:
    pipeline: str
    lang: str
    backend: str
    device: str
    models: dict[str, str]
    version: str


@dataclass
class Result:
    """A job's normalized result: ``pages`` in document order, the full ``text`` and ``markdown``."""

    engine: EngineInfo
    pages: list[Page]
    text: str
    markdown: str
    source: dict[str, Any] = field(default_factory=dict)
    schema_version: str = SCHEMA_VERSION
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, data: dict) -> Result:
        check_schema_version(data.get("schema_version"))
        return cls(engine=EngineInfo(**_known(EngineInfo, data["engine"])),
                   pages=[Page.from_dict(p) for p in data["pages"]], text=data.get("text", ""),
                   markdown=data.get("markdown", ""), source=data.get("source", {}),
                   schema_version=data["schema_version"], raw=data)

    def page(self, page_number: int) -> Page | None:
        return next((p for p in self.pages if p.page_number == page_number), None)


def check_schema_version(server: str | None) -> None:
    """Raise ``SchemaMismatch`` for another major version; warn for a newer minor one (its added fields are skipped)."""
    if not isinstance(server, str) or "." not in server:
        raise SchemaMismatch(f"The server's result has no schema_version this client can read ({server!r}); "
                             f"this client reads schema {SCHEMA_VERSION}.")
    major, minor = server.split(".", 1)
    ours_major, ours_minor = SCHEMA_VERSION.split(".")
    if major != ours_major:
        raise SchemaMismatch(f"The server writes result schema {server}; this client reads schema {SCHEMA_VERSION} "
                             f"(major {ours_major}). Install an ocr-client release for schema {major}.x.")
    if minor.isdigit() and int(minor) > int(ours_minor):
        warnings.warn(f"The server writes result schema {server}, newer than this client's {SCHEMA_VERSION}: "
                      "fields added since are not read (they stay in Result.raw). Upgrade ocr-client to read them.",
                      stacklevel=3)


@dataclass
class SearchHit:
    """One matching line of ``search``: where it is, its text as corrected, the text with the words marked."""

    job: str
    page: int
    line_id: str
    polygon: Polygon
    region_type: str | None
    text: str
    snippet: str  # HTML-escaped text, matching words in <mark>
    links: dict[str, str]  # review (the review UI at this line), job, page: absolute URLs
    confidence: float | None = None

    @classmethod
    def from_dict(cls, data: dict, base_url: str) -> SearchHit:
        links = {name: urljoin(base_url + "/", url) for name, url in (data.get("links") or {}).items() if url}
        return cls(**{**_known(cls, data), "job": str(data["job"]), "links": links})


@dataclass
class Correction:
    """The change an edit made: ``id`` (for ``undo``; None for a retype of an engine line), kind, who, when."""

    id: int | None
    kind: str
    made_by: str | None
    made_at: str | None
    undone_at: str | None = None


@dataclass
class EditAnswer:
    """What every correction answers: the page as it now is, the change, the edited line (None when gone)."""

    page: Page | None
    correction: Correction | None
    line: Line | None
    new_line_id: str | None = None  # set by a split
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, data: dict) -> EditAnswer:
        change, line = data.get("correction"), data.get("line")
        normalized = data.get("normalized")
        return cls(page=Page.from_dict(normalized) if normalized else None,
                   correction=Correction(**_known(Correction, change)) if change else None,
                   line=Line.from_dict(line) if line else None, new_line_id=data.get("new_line_id"), raw=data)


@dataclass(frozen=True)
class Progress:
    """A job's progress as ``Job.wait`` sees it: each WebSocket event, or each long-poll answer."""

    job_id: str
    event: str  # state, queued, started, page_done, succeeded, failed, canceled, corrected; "poll" for a long poll
    status: str
    pages_done: int
    pages_total: int
    page_number: int | None = None  # the page a ``page_done`` event is about
    via: str = "websocket"  # or "poll"

    @property
    def final(self) -> bool:
        return self.status in FINAL_STATUSES
