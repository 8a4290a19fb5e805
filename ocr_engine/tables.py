"""Tables: PP-StructureV3's HTML and cell boxes -> a grid of cells with rows, columns and spans."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape
from html.parser import HTMLParser
from typing import Any

from .geometry import Box, rounded
from .schema import Table, TableCell


class _CellParser(HTMLParser):
    """Collects <td>/<th> cells row by row with their spans and text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[dict[str, Any]]] = []
        self._cell: dict[str, Any] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            if not self.rows:
                self.rows.append([])
            a = dict(attrs)
            self._cell = {"row_span": _span(a.get("rowspan")), "col_span": _span(a.get("colspan")), "text": []}
            self.rows[-1].append(self._cell)

    def handle_endtag(self, tag):
        if tag in ("td", "th"):
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"].append(data)


def _span(value: str | None) -> int:
    try:
        return max(1, int(value or 1))
    except ValueError:
        return 1


def parse_html(html: str) -> tuple[list[TableCell], int, int]:
    """Cells with grid positions; spans occupy the slots they cover, so positions match a renderer's."""
    parser = _CellParser()
    parser.feed(html or "")
    occupied: set[tuple[int, int]] = set()
    cells: list[TableCell] = []
    n_cols = 0
    for r, row in enumerate(parser.rows):
        c = 0
        for cell in row:
            while (r, c) in occupied:
                c += 1
            for dr in range(cell["row_span"]):
                for dc in range(cell["col_span"]):
                    occupied.add((r + dr, c + dc))
            cells.append(TableCell(row=r, col=c, row_span=cell["row_span"], col_span=cell["col_span"],
                                   bbox=None, text=" ".join("".join(cell["text"]).split())))
            c += cell["col_span"]
            n_cols = max(n_cols, c)
    n_rows = max((r + 1 for r, _ in occupied), default=0)
    return cells, n_rows, n_cols


def from_paddle(table_res: dict[str, Any], *, table_id: str, region_id: str, fix: Callable[[str], str] = str) -> Table:
    html = fix(table_res.get("pred_html") or "")
    cells, n_rows, n_cols = parse_html(html)
    boxes = [b for b in table_res.get("cell_box_list") or [] if len(b) == 4]
    # SLANet emits one box per <td> in document order; if the counts disagree the
    # structure and boxes came from different passes and pairing them would lie.
    if len(boxes) == len(cells):
        for cell, box in zip(cells, boxes):
            cell.bbox = rounded(box)
    return Table(id=table_id, region_id=region_id, html=_strip_wrapper(html), n_rows=n_rows, n_cols=n_cols, cells=cells)


def _strip_wrapper(html: str) -> str:
    return html.replace("<html>", "").replace("</html>", "").replace("<body>", "").replace("</body>", "").strip()


def cell_at(bbox: Box, cells: Sequence[TableCell]) -> int | None:
    """Index of the first cell whose box holds the centre of ``bbox`` (cells without boxes hold nothing).

    The first match wins, so overlapping cell boxes never claim a line twice.
    """
    x, y = (bbox[0] + bbox[2]) / 2, (bbox[1] + bbox[3]) / 2
    return next((i for i, c in enumerate(cells) if c.bbox and c.bbox[0] <= x <= c.bbox[2] and c.bbox[1] <= y <= c.bbox[3]),
                None)


def order_lines_by_cells(line_boxes: Sequence[Box], table: Table) -> list[int]:
    """Table lines row by row, cell by cell; lines in no cell follow by position."""
    def key(i: int):
        box = line_boxes[i]
        index = cell_at(box, table.cells)
        if index is None:
            return (1, 0, 0, box[1], box[0])
        return (0, table.cells[index].row, table.cells[index].col, box[1], box[0])

    return sorted(range(len(line_boxes)), key=key)


def region_text(table: Table) -> str:
    """Row per line, cells separated by tabs: pastes into a spreadsheet as a table."""
    rows: dict[int, list[TableCell]] = {}
    for cell in table.cells:
        rows.setdefault(cell.row, []).append(cell)
    return "\n".join("\t".join(c.text for c in sorted(cells, key=lambda c: c.col)) for _, cells in sorted(rows.items()))


@dataclass
class RowGrid:
    """A table found from aligned rows (``ocr`` pipeline): cells, no ids yet."""

    cells: list[TableCell]
    n_rows: int
    n_cols: int

    def with_ids(self, table_id: str, region_id: str) -> Table:
        return Table(id=table_id, region_id=region_id, html=to_html(self.cells), n_rows=self.n_rows,
                     n_cols=self.n_cols, cells=self.cells)


def grid_from_rows(row_boxes: list[list[Box]], row_texts: list[list[str]]) -> RowGrid:
    """Columns from the widest row's cell centres; every other cell joins the nearest column."""
    widest = max(range(len(row_boxes)), key=lambda r: len(row_boxes[r]))
    anchors = sorted((b[0] + b[2]) / 2 for b in row_boxes[widest])
    cells = []
    for r, (boxes, texts) in enumerate(zip(row_boxes, row_texts)):
        taken: set[int] = set()
        for box, text in sorted(zip(boxes, texts), key=lambda bt: bt[0][0]):
            centre = (box[0] + box[2]) / 2
            col = min((c for c in range(len(anchors)) if c not in taken),
                      key=lambda c: abs(anchors[c] - centre), default=len(anchors))
            taken.add(col)
            cells.append(TableCell(row=r, col=col, row_span=1, col_span=1, bbox=rounded(box), text=text))
    n_cols = max(len(anchors), max((c.col + 1 for c in cells), default=0))
    return RowGrid(sorted(cells, key=lambda c: (c.row, c.col)), len(row_boxes), n_cols)


def to_html(cells: list[TableCell]) -> str:
    rows: dict[int, list[TableCell]] = {}
    for cell in cells:
        rows.setdefault(cell.row, []).append(cell)
    body = "".join("<tr>" + "".join(f"<td>{escape(c.text)}</td>" for c in sorted(row, key=lambda c: c.col)) + "</tr>"
                   for _, row in sorted(rows.items()))
    return f"<table>{body}</table>"
