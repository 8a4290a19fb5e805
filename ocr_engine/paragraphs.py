"""Paragraphs from the geometry of lines: stacked lines of one size, split where the text says a new one starts."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .geometry import overlap_1d, union_box
from .page_parts import Block, RawLine
from .reading_order import line_order
from .thresholds import (
    ALIGNED_LEFT_EDGE, ALIGNED_OVERLAP, FIRST_LINE_INDENT, FLUSH_LEFT, HEADING_HEIGHT_RATIO, LIST_CONTINUATION_INDENT,
    PARAGRAPH_GAP, ROW_JOIN_GAP, ROW_PIECE_WIDTH, SAME_ROW_OVERLAP, SHORT_LINE_SHORTFALL, STACK_GAP_MAX,
    STACK_GAP_MIN,
)


def group_paragraphs(lines: Sequence[RawLine]) -> list[list[int]]:
    """Group lines into paragraphs: stacked lines of similar height with little gap between them.

    Lines in different columns never join, because they must overlap
    horizontally (or share a left edge) and lie within ~one line height.
    """
    if not lines:
        return []
    heights = [max(1.0, ln.bbox[3] - ln.bbox[1]) for ln in lines]
    order = sorted(range(len(lines)), key=lambda i: (lines[i].bbox[1], lines[i].bbox[0]))
    groups: list[list[int]] = []
    # Short lines side by side on one row ("Min.  Median  Max." over program output)
    # are pieces of that row: a line below must not stack onto one piece and carry
    # it away from the others.
    pieces: set[int] = set()
    for i in order:
        b, h = lines[i].bbox, heights[i]
        best, best_gap = None, None
        for g, members in enumerate(groups):
            last = max(members, key=lambda j: lines[j].bbox[3])
            lb, lh = lines[last].bbox, heights[last]
            if max(h, lh) > HEADING_HEIGHT_RATIO * min(h, lh):
                continue
            same_row = overlap_1d(b[1], b[3], lb[1], lb[3]) > SAME_ROW_OVERLAP * min(h, lh)
            if same_row:
                # Measured in the taller line's height: a word the detector boxed apart ("of", "as":
                # no ascender, a short box) is as far from its line as any word space.
                row_gap = min(abs(b[0] - lines[j].bbox[2]) for j in members)
                if row_gap < ROW_JOIN_GAP * max(h, lh):
                    best, best_gap = g, 0.0
                    break
                if max(b[2] - b[0], lb[2] - lb[0]) < ROW_PIECE_WIDTH * h:
                    pieces.update((i, last))
                continue
            if last in pieces:
                continue
            v_gap = b[1] - lb[3]
            x_overlap = overlap_1d(b[0], b[2], lb[0], lb[2])
            aligned = (x_overlap > ALIGNED_OVERLAP * min(b[2] - b[0], lb[2] - lb[0])
                       or abs(b[0] - lb[0]) < ALIGNED_LEFT_EDGE * h)
            stacked = STACK_GAP_MIN * h <= v_gap <= STACK_GAP_MAX * max(h, lh)
            if stacked and aligned and (best_gap is None or v_gap < best_gap):
                best, best_gap = g, v_gap
        if best is None:
            groups.append([i])
        else:
            groups[best].append(i)
    return groups


_SECTION_NUMBER = re.compile(r"^\s*\d{1,2}(\.\d{1,2})*\.?\s+\S")  # "3.2 Flexible typography of the"
_BULLET = re.compile(r"^\s*([•·▪◦●○■□–—*-]|\(?[0-9a-z]{1,3}[.)])\s")


def split_paragraphs(block: Block, lines: Sequence[RawLine]) -> list[Block]:
    """Split a layout text block into paragraphs where the line geometry says so.

    Small layout models often return one box for a whole column of prose, lists
    and code; one region per paragraph keeps Markdown, review and exports
    readable. A new paragraph starts after a vertical gap, at a bullet, after a
    short last line, or at a first-line indent.
    """
    if block.type not in ("text", "list", "reference") or len(block.members) < 3:
        return [block]
    order = [block.members[k] for k in line_order([lines[i].bbox for i in block.members])]
    left = min(lines[i].bbox[0] for i in order)
    right = max(lines[i].bbox[2] for i in order)
    pieces: list[list[int]] = [[order[0]]]
    for prev, cur in zip(order, order[1:]):
        p, c = lines[prev].bbox, lines[cur].bbox
        h = max(1.0, min(p[3] - p[1], c[3] - c[1]))
        if overlap_1d(p[1], p[3], c[1], c[3]) > SAME_ROW_OVERLAP * h:  # same row: never a paragraph break
            pieces[-1].append(cur)
            continue
        bullet = _BULLET.match(lines[cur].text) is not None
        gap = c[1] - p[3] > PARAGRAPH_GAP * h
        if _BULLET.match(lines[pieces[-1][0]].text):  # inside a list: items and their indented continuations
            breaks = gap or not (bullet or c[0] > left + LIST_CONTINUATION_INDENT * h)
        else:
            breaks = (
                gap or bullet
                or (p[2] < right - SHORT_LINE_SHORTFALL * h and c[2] > p[2])  # the previous line ended short
                # a first-line indent; not the hanging indent of a numbered heading's second line
                or (c[0] > left + FIRST_LINE_INDENT * h and abs(p[0] - left) < FLUSH_LEFT * h
                    and not (prev == pieces[-1][0] and _SECTION_NUMBER.match(lines[prev].text)))
            )
        if breaks:
            pieces.append([cur])
        else:
            pieces[-1].append(cur)
    if len(pieces) == 1:
        return [block]
    return [Block("list" if _BULLET.match(lines[piece[0]].text) else block.type, block.label,
                   union_box(lines[i].bbox for i in piece), block.confidence, block.source, piece)
            for piece in pieces]
