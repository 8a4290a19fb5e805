"""Tables found from the geometry of text lines alone (the ``ocr`` pipeline has no layout model).

A table is a run of *visual rows* (lines that share a baseline band) in which two or
more short pieces sit side by side. Ruled tables wrap long cells over several lines
and often centre the label of a row vertically beside them, so visual rows are then
regrouped into *table rows*: one per label in the first column, each line going to
the label nearest to it vertically. A cell is then every line of one table row in
one column, read top to bottom, so a table reads row by row, cells separated.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from .geometry import Box, body_line_height
from .listings import is_numbered_listing
from .reading_order import text_columns, visual_rows
from .thresholds import BAND_GAP

Row = list[list[int]]  # a table row: its cells left to right, each the indices of its lines top to bottom


def find_table_rows(boxes: Sequence[Box], texts: Sequence[str]) -> list[list[Row]]:
    """Tables on the page, each as its rows of cells (line indices), looked for in each text column."""
    tables = []
    h = body_line_height(boxes)
    for group in text_columns(boxes, texts, min_col_gap=h, band_gap=BAND_GAP * h):
        rows = [[group[i] for i in row] for row in visual_rows([boxes[i] for i in group])]
        tables += [_table_rows(run, boxes, texts) for run in _runs(rows, boxes, texts)]
    return tables


def _runs(rows: list[list[int]], boxes: Sequence[Box], texts: Sequence[str]) -> list[list[list[int]]]:
    """Runs of table-like visual rows.

    Without a layout model, stacked cells ("Region", "North", "South") would
    otherwise be grouped into a column-shaped paragraph and read column by column.
    Prose columns are not mistaken for tables because their lines are long and a
    column's lines are not short labels with a wide gap after them.
    """
    def short_cells(row: list[int]) -> bool:
        words = sorted(len(texts[i].split()) for i in row)
        return len(row) >= 2 and words[len(words) // 2] <= 3

    def cellular(row: list[int], h: float) -> bool:
        # Or a column of short labels beside wrapped descriptions (a ruled two-column table):
        # a short first cell and a gap wider than a word space.
        return short_cells(row) or (len(row) >= 2 and len(texts[row[0]].split()) <= 5
                                    and boxes[row[1]][0] - boxes[row[0]][2] >= h)

    def table_like(run: list[list[int]]) -> bool:
        """Two rows of short cells, or three label rows whose labels end at different places.

        Lines of justified prose columns all end at the column's edge, and two short
        last lines of paragraphs side by side with the other column are common; three
        ragged labels are not.
        """
        if sum(short_cells(row) for row in run) >= 2:
            return True
        ends = [boxes[row[0]][2] for row in run if len(row) >= 2]
        h = median(boxes[i][3] - boxes[i][1] for row in run for i in row)
        return len(ends) >= 3 and max(ends) - min(ends) > h

    def wraps(row: list[int], run: list[list[int]], h: float) -> bool:
        """One line right under the run that starts where a column of the run starts: a wrapped cell."""
        if len(row) != 1 or boxes[row[0]][1] - max(boxes[i][3] for i in run[-1]) > 0.6 * h:
            return False
        b = boxes[row[0]]
        starts = [boxes[i][0] for i in max(run, key=len)]
        if abs(b[0] - starts[0]) < h:  # the first column wraps only within its own width
            return b[2] < starts[1]
        return any(abs(b[0] - x) < h for x in starts[1:])

    runs: list[list[list[int]]] = []
    prev = None  # the last side-by-side row of the current run
    for row in rows:
        h = median(boxes[i][3] - boxes[i][1] for i in row)
        if prev and wraps(row, runs[-1], h):
            runs[-1].append(row)
            continue
        if not cellular(row, h):
            prev = None  # a line of prose or code between two tables ends the first
            continue
        if prev and abs(len(prev) - len(row)) <= 1 and (
                min(boxes[i][1] for i in row) - max(boxes[i][3] for i in runs[-1][-1])) < 2.5 * h:
            runs[-1].append(row)
        else:
            runs.append([row])
        prev = row
    return [run for run in runs if table_like(run) and not is_numbered_listing(run, texts)]


def _table_rows(run: list[list[int]], boxes: Sequence[Box], texts: Sequence[str]) -> list[Row]:
    """Visual rows -> table rows with multi-line cells (see the module docstring)."""
    widest = max(run, key=len)
    starts = [boxes[i][0] for i in widest]
    h = median(boxes[i][3] - boxes[i][1] for row in run for i in row)

    def column(i: int) -> int:
        return min(range(len(starts)), key=lambda c: abs(boxes[i][0] - starts[c]))

    def centre(i: int) -> float:
        return (boxes[i][1] + boxes[i][3]) / 2

    members = [i for row in run for i in row]
    labels = [i for i in members if column(i) == 0 and abs(boxes[i][0] - starts[0]) < h]
    # A label that wraps: a first-column line right under another one, at the leading of one
    # paragraph (a gap of a few pixels), starting in lower case. Rows of one-word labels in
    # lower case ("color", "dict" over a list of directories) are further apart, by the cells' padding.
    heads: list[list[int]] = []
    for i in sorted(labels, key=centre):
        if heads and boxes[i][1] - boxes[heads[-1][-1]][3] < 0.3 * h and texts[i][:1].islower():
            heads[-1].append(i)
        else:
            heads.append([i])
    if len(heads) < 2:  # no label column: every visual row is a table row
        return [[[i] for i in row] for row in run]
    anchor = [sum(centre(i) for i in head) / len(head) for head in heads]
    # Labels set at the top of their row (a value's first line beside every label): a value's later
    # lines belong to the label above them, however far down they wrap. Labels centred beside their
    # cells (a two-line cell has no line beside its label): to the nearest label.
    top_aligned = all(any(i not in labels and abs(centre(i) - centre(head[0])) < 0.3 * h for i in members)
                      for head in heads)
    table: list[dict[int, list[int]]] = [{0: head} for head in heads]
    # Rows above the first label (a header row over a column of row labels) stay rows of their own.
    first_top = boxes[heads[0][0]][1]
    above = [[i for i in row if centre(i) < first_top] for row in run]
    above = [row for row in above if row]
    for i in members:
        if i in labels or centre(i) < first_top:
            continue
        if top_aligned:
            r = max(k for k in range(len(heads)) if k == 0 or boxes[heads[k][0]][1] - 0.5 * h <= boxes[i][1])
        else:
            r = min(range(len(heads)), key=lambda k: abs(centre(i) - anchor[k]))
        table[r].setdefault(column(i), []).append(i)
    return [[[i] for i in row] for row in above] + [
        [sorted(cells[c], key=centre) for c in sorted(cells)] for cells in table]


def reading_order(boxes: Sequence[Box], texts: Sequence[str]) -> list[int] | None:
    """The lines of a table region row by row, cell by cell; None when they are no grid (``is_grid``).

    Used for the layout model's table regions too: the line geometry places wrapped
    cells and vertically centred row labels more reliably than predicted cell boxes.
    """
    if not is_grid(boxes, texts):
        return None
    return [i for row in _table_rows(visual_rows(boxes), boxes, texts) for cell in row for i in cell]


def is_grid(boxes: Sequence[Box], texts: Sequence[str]) -> bool:
    """Whether lines are cells of a grid, which may be read row by row, cell by cell.

    Two rows at least of pieces side by side, a column of pieces after the first one
    aligned down two of those rows, and fewer lines running across that column than
    rows of pieces: a paragraph the layout model boxed with a listing runs across it,
    a wrapped cell does not. Not a gutter of line numbers beside code either, counting
    up row after row: a numbered listing is read line by line, each with its number.
    """
    rows = [row for row in visual_rows(boxes) if len(row) >= 2]
    if len(rows) < 2 or is_numbered_listing(rows, texts):
        return False
    h = median(b[3] - b[1] for b in boxes)

    def aligned(a: Box, b: Box) -> bool:
        return min(abs(a[0] - b[0]), abs(a[2] - b[2]), abs(a[0] + a[2] - b[0] - b[2]) / 2) < h

    columns = [boxes[row[1]] for row in rows if any(
        aligned(boxes[row[1]], boxes[i]) for other in rows if other is not row for i in other[1:])]
    if not columns:
        return False
    edge = min(b[0] for b in columns)
    across = sum(1 for i, b in enumerate(boxes) if b[0] < edge - h and b[2] > edge + h
                 and not any(i in row for row in rows))
    return across < len(rows)
