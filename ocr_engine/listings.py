"""Code listings with line numbers, found from the geometry of their lines.

A numbered listing sets a narrow gutter of numbers, counting up, beside its code.
Grouped as paragraphs, the gutter stacks into a column of its own and is read
apart from the code; taken as a table, its blank lines (a number alone) and the
callouts at the right end of a line break it into pieces. It is one block,
read line by line, each line with its number.
"""

from __future__ import annotations

from collections.abc import Sequence

from .geometry import Box, body_line_height
from .reading_order import text_columns, visual_rows
from .thresholds import BAND_GAP, LISTING_MIN_ROWS, LISTING_NUMBER_STEP


def numbered_listings(boxes: Sequence[Box], texts: Sequence[str]) -> list[list[int]]:
    """The numbered listings on the page, each as its lines (indices into ``boxes``), looked for in each text column.

    A listing is a run of visual rows, each opened by a number a little larger than the
    one before (a blank line is a number alone), or by code right of the gutter (a line
    whose number the recogniser missed); ``LISTING_MIN_ROWS`` numbered rows at least, most
    with one piece at most after the number (``one_line_each``).
    """
    h = body_line_height(boxes)
    listings = []
    for group in text_columns(boxes, texts, min_col_gap=h, band_gap=BAND_GAP * h):
        run: list[list[int]] = []
        last, gutter = 0, 0.0  # the last line number, the gutter's right edge
        numbered = 0
        for row in ([group[i] for i in row] for row in visual_rows([boxes[i] for i in group])):
            number = _number(texts[row[0]])
            if number is not None and run and 0 < number - last <= LISTING_NUMBER_STEP \
                    and abs(boxes[row[0]][2] - gutter) < 2 * h:
                run.append(row)
                last, numbered = number, numbered + 1
            elif number is None and run and boxes[row[0]][0] > gutter:
                run.append(row)
            else:
                if numbered >= LISTING_MIN_ROWS and one_line_each(run):
                    listings.append(_trimmed(run, texts))
                run, numbered = ([row], 1) if number is not None else ([], 0)
                last, gutter = (number, boxes[row[0]][2]) if number is not None else (0, 0.0)
        if numbered >= LISTING_MIN_ROWS and one_line_each(run):
            listings.append(_trimmed(run, texts))
    return listings


def is_numbered_listing(rows: Sequence[Sequence[int]], texts: Sequence[str]) -> bool:
    """Whether visual ``rows`` are a numbered listing: most open with a number one more than the
    number before, and carry one line of code after it (a table whose rows are numbered has cells)."""
    numbers = [n for n in (_number(texts[row[0]]) for row in rows) if n is not None]
    steps = sum(1 for a, b in zip(numbers, numbers[1:]) if b == a + 1)
    return len(numbers) >= 0.8 * len(rows) and steps >= 0.6 * (len(rows) - 1) and one_line_each(rows)


def one_line_each(rows: Sequence[Sequence[int]]) -> bool:
    """Whether most ``rows`` hold one piece at most after their first (a callout may follow a line of code)."""
    after = sorted(len(row) - 1 for row in rows)
    return after[len(after) // 2] <= 1


def _number(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() and len(text) <= 5 else None


def _trimmed(run: list[list[int]], texts: Sequence[str]) -> list[int]:
    """The run's lines, without the rows after its last numbered one (the prose under the listing)."""
    while _number(texts[run[-1][0]]) is None:
        run = run[:-1]
    return [i for row in run for i in row]
