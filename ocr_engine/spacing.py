"""Spaces the recogniser dropped in monospace text, put back from the gaps on the page.

PP-OCRv6 reads the wide spaces of monospace program output as nothing:
``1.600 2.163 4.000`` comes back as ``1.6002.1634.000``, ``18 | 0000222`` as
``18|0000222``. The characters are right; the words are gone (the real-page
corpus, rintro-43: most of its character and word errors).

In a monospace line every character fills one cell of the same width, so the
page says where the spaces are: the ink of a line splits into runs at gaps of
about a cell or more, each run holds as many characters as its width in cells,
and the recognised characters are cut into those runs in order. A line is
changed only when that holds exactly: the runs account for every character,
each run's width is close to a whole number of cells, and the spaces the
recogniser did read fall between runs. Proportional text almost never passes
(its characters are not one width), and is left as read.
"""

from __future__ import annotations

import numpy as np

from .page_parts import RawLine
from .schema import Word

MIN_RUN = 6  # only lines with a run of this many characters without a space are looked at
SPACE_GAP_CELLS = 0.85  # a gap between two characters' ink this wide or wider holds a space
# (the widest gap inside a word is about 0.67 cell, '.' after '1'; the narrowest space about 1.05)
SIDE_BEARINGS_CELLS = 0.3  # ink of n characters spans about n - 0.3 cells
MAX_MEAN_RESIDUAL = 0.25  # how far, on average, runs may be from a whole number of cells
MIN_CONTRAST = 60  # grey levels between ink and paper; less is too faint to measure


def respaced(gray: np.ndarray, bbox, text: str) -> list[tuple[str, int, int]] | None:
    """The line's words with their ink extents in x, ``[(word, x0, x1), ...]``, when monospace
    gaps show spaces the text lacks; None when the text already matches the page or the line
    cannot be measured (not monospace, too faint, rotated, or too short).
    """
    tokens = text.split()
    chars = "".join(tokens)
    if not tokens or max(len(t) for t in tokens) < MIN_RUN:
        return None
    x0, y0, x1, y1 = (int(round(v)) for v in bbox)
    height = y1 - y0
    if height < 8 or x1 - x0 < 3 * height:
        return None
    crop = gray[max(0, y0):y1, max(0, x0):x1]
    paper, ink_level = np.percentile(crop, 95), np.percentile(crop, 5)
    if paper - ink_level < MIN_CONTRAST:
        return None
    # Rows near the box edges can hold a neighbour line's ascenders or descenders.
    band = crop[height // 8: height - height // 8] < (paper + ink_level) / 2
    columns = np.flatnonzero(band.any(axis=0))
    if columns.size < 2:
        return None
    # Ink runs: consecutive inked columns.
    breaks = np.flatnonzero(np.diff(columns) > 1)
    starts = np.concatenate(([columns[0]], columns[breaks + 1]))
    ends = np.concatenate((columns[breaks], [columns[-1]]))
    gaps = starts[1:] - ends[:-1] - 1
    span = ends[-1] - starts[0] + 1

    cell = span / len(chars)
    for _ in range(5):  # spaces take cells too: refine the cell width with the spaces found
        spaces = np.maximum(0, np.rint(gaps / cell - (SPACE_GAP_CELLS - 0.5)))
        refined = span / (len(chars) + spaces.sum())
        if abs(refined - cell) < 0.01:
            break
        cell = refined
    split = np.flatnonzero(gaps >= SPACE_GAP_CELLS * cell)
    word_starts = np.concatenate(([starts[0]], starts[split + 1]))
    word_ends = np.concatenate((ends[split], [ends[-1]]))
    cells = (word_ends - word_starts + 1) / cell + SIDE_BEARINGS_CELLS
    counts = np.maximum(1, np.rint(cells)).astype(int)
    # A lone narrow character ('|', '.', '1') inks far less than its cell: any width up to one cell fits.
    residuals = np.where((counts == 1) & (cells <= 1.5), 0.0, np.abs(cells - counts))
    if counts.sum() != len(chars) or residuals.mean() > MAX_MEAN_RESIDUAL:
        return None
    bounds = np.cumsum(counts)
    read = np.cumsum([len(t) for t in tokens])
    if len(counts) <= len(tokens) or not set(read).issubset(set(bounds)):
        return None  # nothing to add, or the recogniser's own spaces disagree with the page
    words, at = [], 0
    for count, start, end in zip(counts, word_starts, word_ends):
        words.append((chars[at:at + count], int(start) + max(0, x0), int(end) + max(0, x0)))
        at += count
    return words


def restore_spaces(gray: np.ndarray, lines: list[RawLine]) -> None:
    """Put back, in place, the spaces the page shows in monospace lines; their words follow."""
    for line in lines:
        words = respaced(gray, line.bbox, line.text)
        if words is None:
            continue
        line.text = " ".join(word for word, _, _ in words)
        line.words = [Word(text=word, bbox=[x0, line.bbox[1], x1 + 1, line.bbox[3]], confidence=line.confidence)
                      for word, x0, x1 in words]


def separate_touching_lines(gray: np.ndarray, lines: list[RawLine]) -> None:
    """Move, in place, the start of a line whose box begins inside the box of the line before it on its row
    to where its own ink begins.

    The detector sometimes grows a line's box over the end of its left neighbour (a stray
    ")" of the left column joined to the first word of the right column's line): the two
    boxes then touch across a column gutter, and the geometry reads them as one row of one
    paragraph. The ink after the overlap says where the line really starts.
    """
    for line in lines:
        x0, y0, x1, y1 = line.bbox
        height = y1 - y0
        left = [o for o in lines if o is not line and o.bbox[0] < x0 < o.bbox[2] < x1
                and min(y1, o.bbox[3]) - max(y0, o.bbox[1]) > 0.5 * min(height, o.bbox[3] - o.bbox[1])]
        if not left or height < 8:
            continue
        start = int(round(max(o.bbox[2] for o in left)))
        crop = gray[max(0, int(y0)) + int(height) // 8:int(y1) - int(height) // 8, start:int(x1)]
        if crop.size == 0:
            continue
        paper, ink_level = np.percentile(crop, 95), np.percentile(crop, 5)
        if paper - ink_level < MIN_CONTRAST:
            continue
        inked = np.flatnonzero((crop < (paper + ink_level) / 2).any(axis=0))
        if inked.size:
            new_x0 = float(start + inked[0])
            line.bbox = [new_x0, y0, x1, y1]
            line.polygon = [[max(x, new_x0), y] for x, y in line.polygon]
