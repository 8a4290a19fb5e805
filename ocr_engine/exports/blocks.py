"""The walk every export shares: a page as regions in reading order, each with its lines.

Exports read text from lines only. A reviewer's correction changes ``Line.text``
(and keeps the engine's reading in ``original_text``), so reading lines, never
``Region.text`` or the stored ``Page.text``, makes a correction show up in every
format at once.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..schema import Line, Page, Region, Table, Word
from ..tables import cell_at


@dataclass(frozen=True)
class Block:
    region: Region
    lines: list[Line]  # in reading order
    table: Table | None  # the region's table, for regions of type "table"


def page_blocks(page: Page) -> list[Block]:
    """The page's regions in reading order, each with its lines in reading order."""
    lines_by_region: dict[str, list[Line]] = defaultdict(list)
    for line in sorted(page.lines, key=lambda ln: ln.order):
        lines_by_region[line.region_id].append(line)
    tables = {table.region_id: table for table in page.tables}
    return [
        Block(region, lines_by_region.get(region.id, []), tables.get(region.id))
        for region in sorted(page.regions, key=lambda r: r.order)
    ]


def line_words(line: Line) -> list[Word] | None:
    """The line's words, or None when it has none or a reviewer changed its text.

    Word texts and boxes come from the engine; after a correction they no longer
    spell the line, so exports fall back to the whole line as one word.
    """
    if line.original_text is not None or not line.words:
        return None
    words = [word for word in line.words if word.text.strip()]
    return words or None


def assign_to_cells(table: Table, lines: list[Line]) -> tuple[list[list[Line]], list[Line]]:
    """Lines per cell (by the cell holding the line's centre) and the lines in no cell.

    Cells without a bbox get no lines. A line goes to the first cell that holds
    it, so overlapping cell boxes never duplicate text.
    """
    per_cell: list[list[Line]] = [[] for _ in table.cells]
    leftover = []
    for line in lines:
        index = cell_at(line.bbox, table.cells)
        (leftover if index is None else per_cell[index]).append(line)
    return per_cell, leftover


def cell_texts(table: Table, lines: list[Line]) -> list[str]:
    """Each cell's text, with reviewers' corrections applied.

    The engine's cell text stands unless a line inside the cell was corrected;
    then the cell is rebuilt from its lines. Cells carry no line ids, so the
    match is by geometry (cells without a bbox keep the engine's text).
    """
    per_cell, _ = assign_to_cells(table, lines)
    return [
        " ".join(ln.text for ln in inside) if any(ln.original_text is not None for ln in inside) else cell.text
        for cell, inside in zip(table.cells, per_cell)
    ]
