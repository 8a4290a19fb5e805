"""Line items: the rows under a header whose cells are the item properties' ``x-labels``.

A header is a visual row whose lines are made of the item properties' labels, at
least two of them (and at least half). Each header line spans its column (a
header that names no property, such as "Pos.", spans a column that is left out); a
line below joins the column it overlaps most (the nearest by centre when it overlaps
none), so right-aligned amounts wider than their header still land under it. Rows
are read until one holds a label of another field ("Subtotal"), no amount or
quantity, or a gap of three lines. Lines wrapped under a row's description, with
no number of their own, continue that description.
"""

from __future__ import annotations

from ..geometry import overlap_1d
from ..reading_order import visual_rows
from . import kinds
from .layout import PageIndex, PlacedLine, label_words, match_label
from .spec import FieldSpec
from .text import tokens
from .values import Proposal

NUMERIC = ("money", "number", "integer")


def find_rows(index: PageIndex, spec: FieldSpec, others: list[FieldSpec], *,
              lang: str) -> tuple[list[dict[str, Proposal | None]], set[str]]:
    """The items of ``spec`` (one dict of proposals per row) and the ids of the lines the tables took.

    The first item table of each page: a long invoice repeats its header on every page.
    """
    items: list[dict[str, Proposal | None]] = []
    taken: set[str] = set()
    for page in sorted({p.page for p in index.lines}):
        lines = [p for p in index.lines if p.page == page]
        rows = [[lines[i] for i in row] for row in visual_rows([p.box for p in lines])]
        for at, row in enumerate(rows):
            header = _header(row, spec)
            if header:
                found, used = _body(rows[at + 1:], header, spec, others, lang)
                if found:
                    items += found
                    taken |= used | {p.line.id for p in row}
                    break
    return items, taken


def _header(row: list[PlacedLine], spec: FieldSpec) -> dict | None:
    """The column spans of a header row, by item property; a header of no property ("Pos.") is kept
    under ``(None, n)``, so that the lines under it join no property. One line may hold several
    headers ("Qty Unit price"): OCR joins close words; each then spans its share of the line."""
    columns: dict = {}
    for n, placed in enumerate(row):
        parts = _labels_in(placed.line.text, [c for c in spec.columns if c.name not in columns])
        x0, x1, chars = placed.box[0], placed.box[2], max(1, len(placed.line.text))
        for name, start, end in parts or [((None, n), 0, chars)]:
            columns[name] = [x0 + (x1 - x0) * start / chars, placed.box[1], x0 + (x1 - x0) * end / chars,
                             placed.box[3]]
    named = sum(1 for name in columns if isinstance(name, str))
    return columns if named >= max(2, (len(spec.columns) + 1) // 2) else None


def _labels_in(text: str, columns: list[FieldSpec]) -> list[tuple[str, int, int]] | None:
    """``text`` read as one or more column labels in a row: (property, start, end) each, else None."""
    words, parts, at = tokens(text), [], 0
    while at < len(words):
        best = None
        for column in columns:
            if any(column.name == p[0] for p in parts):
                continue
            for label in column.labels:
                wanted = label_words(label)
                if wanted and [w for w, _, _ in words[at:at + len(wanted)]] == wanted and (
                        best is None or len(wanted) > best[1]):
                    best = (column.name, len(wanted))
        if best is None:
            return None
        parts.append((best[0], words[at][1], words[at + best[1] - 1][2]))
        at += best[1]
    return parts or None


def _column(box, header: dict) -> str | tuple:
    overlaps = {name: overlap_1d(box[0], box[2], h[0], h[2]) for name, h in header.items()}
    best = max(overlaps, key=overlaps.get)
    if overlaps[best] > 0:
        return best
    centre = (box[0] + box[2]) / 2
    return min(header, key=lambda name: abs((header[name][0] + header[name][2]) / 2 - centre))


def _body(rows, header, spec: FieldSpec, others: list[FieldSpec], lang: str):
    kinds_of = {c.name: c for c in spec.columns if c.name in header}
    found: list[dict[str, Proposal | None]] = []
    used: set[str] = set()
    bottom = max(h[3] for h in header.values())
    height = max(h[3] - h[1] for h in header.values())
    for row in rows:
        if min(p.box[1] for p in row) - bottom > 3 * height:
            break
        if any(o.labels and match_label(o.labels, p.line.text) for o in others for p in row):
            break
        cells: dict[str, list[PlacedLine]] = {}
        for placed in row:
            column = _column(placed.box, header)
            if isinstance(column, str):
                cells.setdefault(column, []).append(placed)
        if not cells:
            break
        values = {name: kinds.read(kinds_of[name], " ".join(p.line.text for p in cell), lang)
                  for name, cell in cells.items()}
        has_number = any(values[n] is not None for n in cells if kinds_of[n].kind in NUMERIC)
        if not has_number:
            if found and _continues(cells, kinds_of, found[-1]):
                _extend(found[-1], cells, kinds_of, lang)
                used |= {p.line.id for cell in cells.values() for p in cell}
                bottom = max(p.box[3] for p in row)
                continue
            break
        found.append({c.name: (Proposal(values[c.name], tuple(p.line.id for p in cells[c.name]))
                               if c.name in cells and values[c.name] is not None else None)
                      for c in spec.columns})
        used |= {p.line.id for cell in cells.values() for p in cell}
        bottom = max(p.box[3] for p in row)
    return found, used


def _continues(cells, kinds_of, last: dict) -> bool:
    """A row of text only, under a text column the last item has: the rest of a wrapped description."""
    return all(kinds_of[n].kind not in NUMERIC and last.get(n) is not None for n in cells)


def _extend(item: dict, cells, kinds_of, lang: str) -> None:
    for name, cell in cells.items():
        before = item[name]
        text = " ".join([str(before.value)] + [p.line.text for p in cell])
        item[name] = Proposal(kinds.read(kinds_of[name], text, lang) or before.value,
                              before.line_ids + tuple(p.line.id for p in cell))
