"""Reading order: columns first, then top to bottom, for both pipelines.

We order blocks with a recursive XY-cut that tries a *vertical* cut (a gap between
columns that no block crosses) before a horizontal one. Trying horizontal cuts
first would interleave the columns of a two-column paper wherever paragraph gaps
happen to line up; trying vertical first reads the left column to its end, then
the right one, while a full-width title or figure still splits the page into
bands because it crosses the column gap.
"""

from __future__ import annotations

from collections.abc import Sequence

from .geometry import Box, overlap_1d
from .thresholds import PROSE_WORDS


def xy_cut_order(boxes: Sequence[Box], *, min_col_gap: float = 8.0, min_row_gap: float = 1.0,
                 band_gap: float = float("inf")) -> list[int]:
    """Indices of ``boxes`` in reading order; a blank strip across the page ``band_gap`` high
    or more is cut first, before columns."""
    return _cut(list(range(len(boxes))), boxes, min_col_gap, min_row_gap, band_gap)


def _cut(idx: list[int], boxes: Sequence[Box], min_col_gap: float, min_row_gap: float, band_gap: float) -> list[int]:
    if len(idx) <= 1:
        return idx
    # A blank strip across the whole group this high comes before columns: notes or
    # references set in two columns of their own under a two-column body are read after it.
    groups = _split(idx, boxes, 1, band_gap) if band_gap < float("inf") else [idx]
    if len(groups) == 1:
        groups = _columns(idx, boxes, min_col_gap)
    if len(groups) == 1:
        groups = _bands(idx, boxes, min_col_gap, min_row_gap)
    if len(groups) > 1:
        return [i for group in groups for i in _cut(group, boxes, min_col_gap, min_row_gap, band_gap)]
    # No clean cut: overlapping blocks. Fall back to rows of blocks whose tops are
    # within a line of each other (a row split into pieces), left to right in a row.
    rows: list[list[int]] = []
    for i in sorted(idx, key=lambda i: boxes[i][1]):
        if rows and boxes[i][1] - boxes[rows[-1][0]][1] < min_col_gap:
            rows[-1].append(i)
        else:
            rows.append([i])
    return [i for row in rows for i in sorted(row, key=lambda j: boxes[j][0])]


def _bands(idx: list[int], boxes: Sequence[Box], min_col_gap: float, min_row_gap: float) -> list[list[int]]:
    """Horizontal bands, with neighbouring bands merged while they still share a column gap.

    Cutting at every horizontal gap would slice a two-column body into rows
    wherever the columns' paragraph gaps line up; only a block that crosses the
    column gap (a title, a full-width figure) should end a run of columns.
    """
    merged: list[list[int]] = []
    for band in _split(idx, boxes, 1, min_row_gap):
        if merged and len(_split(merged[-1] + band, boxes, 0, min_col_gap)) > 1:
            merged[-1] = merged[-1] + band
        else:
            merged.append(band)
    return merged


def _line_over(line: list[int], column: list[int], boxes: Sequence[Box]) -> bool:
    """Whether ``line`` is one block, no taller than a line of ``column``, above every block of it."""
    if len(line) != 1:
        return False
    box = boxes[line[0]]
    return (box[3] - box[1] <= 1.2 * min(boxes[j][3] - boxes[j][1] for j in column)
            and box[3] <= min(boxes[j][1] for j in column))


def _columns(idx: list[int], boxes: Sequence[Box], min_col_gap: float) -> list[list[int]]:
    """Vertical slices that are real columns.

    A slice of one-line labels that each sit beside a block of the neighbouring
    slice ("[Function]" at the right margin of a signature line, a line number,
    a margin note) is not a column: it continues rows of its neighbour, so it
    joins that slice and is read row by row with it. Nor is one line over the
    whole of its neighbour ("(continued from previous page)" over a listing).
    """
    groups = _split(idx, boxes, 0, min_col_gap)
    merged: list[list[int]] = []
    for group in groups:
        if merged and any(_labels_beside(a, b, boxes) or _line_over(a, b, boxes)
                          for a, b in ((group, merged[-1]), (merged[-1], group))):
            merged[-1] = merged[-1] + group
        else:
            merged.append(group)
    return merged


def _labels_beside(labels: list[int], column: list[int], boxes: Sequence[Box]) -> bool:
    heights = sorted(boxes[i][3] - boxes[i][1] for i in column)
    line_height = heights[0]  # the column's shortest block: about one line
    return all(
        boxes[i][3] - boxes[i][1] <= 1.5 * line_height
        and any(overlap_1d(boxes[i][1], boxes[i][3], boxes[j][1], boxes[j][3]) > 0.5 * (boxes[i][3] - boxes[i][1])
                for j in column)
        for i in labels
    ) and len(labels) < len(column)


def text_columns(boxes: Sequence[Box], texts: Sequence[str], *, min_col_gap: float,
                 band_gap: float) -> list[list[int]]:
    """The page's lines grouped by the text columns they sit in, and by the bands between lines across the page.

    Found from the lines alone, as tesseract finds columns: a gap that runs down
    a band of the page with prose on both sides. The gaps between a table's own
    columns do not count, since one side at least holds short cells, not prose; so
    a table in one column of a two-column page never takes in the lines of the
    other column that share its rows, nor a table beside it in the other column.
    Bands end at lines across the page (a full-width table's caption), at blank
    strips across it ``band_gap`` high (the space around a full-width table or figure),
    and around rows of short cells on both sides of the gap: a table across it.
    """
    def prose(group: list[int]) -> bool:
        # By characters, not lines: a column that holds a table of many short cells is still prose.
        lines = [texts[i] for i in group if len(texts[i].split()) >= PROSE_WORDS]
        return len(lines) >= 3 and 3 * sum(map(len, lines)) >= sum(len(texts[i]) for i in group)

    def prose_columns(idx: list[int]) -> tuple[list[int], list[int]] | None:
        columns = _split(idx, boxes, 0, min_col_gap)
        for k in range(1, len(columns)):
            left, right = [i for c in columns[:k] for i in c], [i for c in columns[k:] for i in c]
            if prose(left) and prose(right):
                return left, right
        return None

    def cut(idx: list[int]) -> list[list[int]]:
        bands = _split(idx, boxes, 1, band_gap)
        if len(bands) == 1:
            bands = _column_runs(idx)
        if len(bands) > 1:
            return [g for band in bands for g in cut(band)]
        halves = prose_columns(idx)
        if not halves:
            return [idx]
        table = _table_across(idx, set(halves[0]), boxes, texts)
        if not table:
            return cut(halves[0]) + cut(halves[1])
        top, in_table = min(boxes[i][1] for i in table), set(table)
        above = [i for i in idx if i not in in_table and boxes[i][3] <= top]
        below = [i for i in idx if i not in in_table and boxes[i][3] > top]
        return [g for band in (above, table, below) if band for g in cut(band)]

    def _column_runs(idx: list[int]) -> list[list[int]]:
        """Bands (``_bands``) where prose columns run, each apart; the bands between them joined."""
        runs: list[list[int]] = []
        last_columns = False
        for band in _bands(idx, boxes, min_col_gap, 1.0):
            columns = prose_columns(band) is not None
            if runs and not columns and not last_columns:
                runs[-1] += band
            else:
                runs.append(band)
            last_columns = columns
        return runs

    return cut(list(range(len(boxes)))) if boxes else []


def _table_across(idx: list[int], left: set[int], boxes: Sequence[Box], texts: Sequence[str]) -> list[int]:
    """The first run of two or more visual rows whose lines on both sides of a gap are short cells: a
    table across the gap. Not where a row of short cells on one side only adjoins the run: that is two
    tables side by side, one in each column, whose rows met by chance."""
    def short(i: int) -> bool:
        return len(texts[i].split()) < PROSE_WORDS

    def kind(row: list[int]) -> str:
        lefts, rights = [i for i in row if i in left], [i for i in row if i not in left]
        if lefts and rights and short(lefts[-1]) and short(rights[0]):
            return "across"
        return "one side" if all(short(i) for i in row) else "prose"

    rows = [[idx[j] for j in row] for row in visual_rows([boxes[i] for i in idx])]
    kinds = [kind(row) for row in rows]
    start = 0
    while start < len(rows):
        if kinds[start] != "across":
            start += 1
            continue
        end = start
        while end < len(rows) and kinds[end] == "across":
            end += 1
        beside = kinds[start - 1] if start else "prose", kinds[end] if end < len(rows) else "prose"
        if end - start >= 2 and "one side" not in beside:
            return [i for row in rows[start:end] for i in row]
        start = end
    return []


def _split(idx: list[int], boxes: Sequence[Box], axis: int, min_gap: float) -> list[list[int]]:
    """Split into groups separated by gaps of at least ``min_gap`` along ``axis`` (0 = x, 1 = y)."""
    lo, hi = axis, axis + 2
    ordered = sorted(idx, key=lambda i: boxes[i][lo])
    groups: list[list[int]] = [[ordered[0]]]
    reach = boxes[ordered[0]][hi]
    for i in ordered[1:]:
        if boxes[i][lo] - reach >= min_gap:
            groups.append([i])
        else:
            groups[-1].append(i)
        reach = max(reach, boxes[i][hi])
    return groups


def line_order(boxes: Sequence[Box]) -> list[int]:
    """Order text lines inside one block: rows top to bottom, left to right in a row.

    Lines belong to one row when they overlap vertically by more than half the
    smaller height, which tolerates slight skew without merging adjacent rows, and
    share a middle or a baseline (box bottoms): tall boxes of tightly set code
    lines overlap by half a line, yet are two rows that must keep their order.
    """
    return [i for row in visual_rows(boxes) for i in row]


def visual_rows(boxes: Sequence[Box]) -> list[list[int]]:
    """The rows of ``line_order``: top to bottom, each left to right."""
    rows: list[list[int]] = []
    for i in sorted(range(len(boxes)), key=lambda i: (boxes[i][1] + boxes[i][3]) / 2):
        b = boxes[i]
        if rows:
            last = boxes[rows[-1][-1]]
            h = min(b[3] - b[1], last[3] - last[1])
            middle = abs((b[1] + b[3]) - (last[1] + last[3])) / 2
            if h > 0 and overlap_1d(b[1], b[3], last[1], last[3]) > 0.5 * h and (
                    middle < 0.5 * h or abs(b[3] - last[3]) < 0.3 * h):
                rows[-1].append(i)
                continue
        rows.append([i])
    return [sorted(row, key=lambda i: boxes[i][0]) for row in rows]
