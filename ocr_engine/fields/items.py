"""Line items: the rows under a header whose cells are the item properties' ``x-labels``.

A header is a visual row in which at least two of the item properties' labels (and
at least half of them) stand alone as lines. Each header line spans its column; a
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
from .layout import PageIndex, PlacedLine, is_label, match_label
from .spec import FieldSpec
from .values import Proposal

NUMERIC = ("money", "number", "integer")


def find_rows(index: PageIndex, spec: FieldSpec, others: list[FieldSpec], *,
              lang: str) -> tuple[list[dict[str, Proposal | None]], set[str]]:
    """The items of ``spec`` (one dict of proposals per row) and the ids of the lines the table took."""
    for page in sorted({p.page for p in index.lines}):
        lines = [p for p in index.lines if p.page == page]
        rows = [[lines[i] for i in row] for row in visual_rows([p.box for p in lines])]
        for at, row in enumerate(rows):
            header = _header(row, spec)
            if header:
                found, used = _body(rows[at + 1:], header, spec, others, lang)
                if found:
                    return found, used | {p.line.id for p in header.values()}
    return [], set()


def _header(row: list[PlacedLine], spec: FieldSpec) -> dict[str, PlacedLine] | None:
    columns: dict[str, PlacedLine] = {}
    for placed in row:
        for column in spec.columns:
            if column.name not in columns and is_label(column.labels, placed.line.text):
                columns[column.name] = placed
                break
    return columns if len(columns) >= max(2, (len(spec.columns) + 1) // 2) else None


def _column(placed: PlacedLine, header: dict[str, PlacedLine]) -> str:
    b = placed.box
    overlaps = {name: overlap_1d(b[0], b[2], h.box[0], h.box[2]) for name, h in header.items()}
    best = max(overlaps, key=overlaps.get)
    if overlaps[best] > 0:
        return best
    centre = (b[0] + b[2]) / 2
    return min(header, key=lambda name: abs((header[name].box[0] + header[name].box[2]) / 2 - centre))


def _body(rows, header, spec: FieldSpec, others: list[FieldSpec], lang: str):
    kinds_of = {c.name: c for c in spec.columns if c.name in header}
    found: list[dict[str, Proposal | None]] = []
    used: set[str] = set()
    bottom = max(p.box[3] for p in header.values())
    height = max(p.height for p in header.values())
    for row in rows:
        if min(p.box[1] for p in row) - bottom > 3 * height:
            break
        if any(o.labels and match_label(o.labels, p.line.text) for o in others for p in row):
            break
        cells: dict[str, list[PlacedLine]] = {}
        for placed in row:
            cells.setdefault(_column(placed, header), []).append(placed)
        values = {name: kinds.read(kinds_of[name], " ".join(p.line.text for p in cell), lang)
                  for name, cell in cells.items()}
        has_number = any(values[n] is not None for n in cells if kinds_of[n].kind in NUMERIC)
        if not has_number:
            if found and _continues(cells, kinds_of, found[-1]):
                _extend(found[-1], cells, kinds_of)
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


def _extend(item: dict, cells, kinds_of) -> None:
    for name, cell in cells.items():
        before = item[name]
        text = " ".join([str(before.value)] + [p.line.text for p in cell])
        item[name] = Proposal(kinds.read(kinds_of[name], text, "") or before.value,
                              before.line_ids + tuple(p.line.id for p in cell))
