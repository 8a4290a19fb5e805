"""Raw PaddleOCR output -> the normalized ``schema.Page``.

Both pipelines end in the same shape: regions in reading order, every line in
exactly one region, lines in reading order. The ``ocr`` pipeline has no layout
model, so its regions are paragraphs grouped from the lines; the ``structure``
pipeline's layout regions get the lines that fall inside them, and lines outside
every layout box are grouped into paragraph regions of their own (source "ocr")
rather than dropped, so no recognised text is ever lost.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any

import numpy as np

from . import block_types, table_rows, tables
from .exports.markdown import page_markdown
from .exports.text import page_text
from .geometry import area, box_from_polygon, intersection, overlap_1d, polygon_from_box, rounded, union_box
from .reading_order import line_order, xy_cut_order
from .schema import Line, Page, Region, Table, Word
from .spacing import restore_spaces
from .thresholds import (
    ALIGNED_LEFT_EDGE, ALIGNED_OVERLAP, FIRST_LINE_INDENT, FLUSH_LEFT, HEADING_HEIGHT_RATIO, LAYOUT_MATCH_IOU,
    LIST_CONTINUATION_INDENT, MARGIN_SHARE, MIN_LINE_SHARE, PARAGRAPH_GAP, ROW_JOIN_GAP, ROW_PIECE_WIDTH,
    SAME_ROW_OVERLAP, SHORT_LINE_SHORTFALL, STACK_GAP_MAX, STACK_GAP_MIN, TABLE_RESULT_SHARE,
)

# PP-DocLayout / CDLA class names -> our closed set of region types.
LABEL_TYPES = {
    "doc_title": "title", "paragraph_title": "title", "title": "title",
    "text": "text", "abstract": "text", "content": "text", "aside_text": "text", "algorithm": "text",
    "list": "list",
    "table": "table",
    "image": "figure", "figure": "figure", "chart": "figure", "seal": "figure",
    "header_image": "figure", "footer_image": "figure",
    "figure_title": "caption", "table_title": "caption", "chart_title": "caption",
    "figure_caption": "caption", "table_caption": "caption",
    "header": "header", "footer": "footer", "number": "page_number",
    "footnote": "footnote", "vision_footnote": "footnote",
    "formula": "formula", "formula_number": "formula", "equation": "formula",
    "reference": "reference", "reference_content": "reference",
}
_FIRST_TYPES = ("header",)  # read before the body
_LAST_TYPES = ("footnote", "footer", "page_number")  # read after the body, in this order


@dataclass
class RawLine:
    polygon: list[list[float]]
    bbox: list[float]
    text: str
    confidence: float
    words: list[Word] | None = None


def ocr_lines(ocr_res: dict[str, Any], fix: Callable[[str], str] = str) -> list[RawLine]:
    """Lines from a PaddleOCR OCR result (``rec_polys``/``rec_texts``/``rec_scores``)."""
    polys = ocr_res.get("rec_polys") or []
    texts = ocr_res.get("rec_texts") or []
    scores = ocr_res.get("rec_scores") or []
    word_texts = ocr_res.get("text_word") or []
    word_boxes = ocr_res.get("text_word_boxes") or []
    lines = []
    for i, (poly, text, score) in enumerate(zip(polys, texts, scores)):
        if not str(text).strip():
            continue
        polygon = [rounded(p) for p in poly]
        words = None
        if i < len(word_texts) and i < len(word_boxes):
            words = _words([fix(w) for w in word_texts[i]], word_boxes[i], float(score))
        lines.append(RawLine(polygon, rounded(box_from_polygon(polygon)), fix(str(text)), round(float(score), 4), words))
    return lines


def _words(texts: Sequence[str], boxes: Sequence[Any], score: float) -> list[Word] | None:
    # PaddleOCR splits a line into words and single CJK characters; keep only
    # real words (whitespace separators come back as their own entries).
    words = []
    for text, box in zip(texts, boxes):
        if not str(text).strip():
            continue
        flat = box_from_polygon(box) if len(box) and hasattr(box[0], "__len__") else list(box)
        words.append(Word(text=str(text).strip(), bbox=rounded(flat), confidence=round(score, 4)))
    return words or None


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
                row_gap = min(abs(b[0] - lines[j].bbox[2]) for j in members)
                if row_gap < ROW_JOIN_GAP * h:
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


_BULLET = re.compile(r"^\s*([•·▪◦●○■□–—*-]|\(?[0-9a-z]{1,3}[.)])\s")


def split_paragraphs(block: "Block", lines: Sequence[RawLine]) -> list["Block"]:
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
                or (c[0] > left + FIRST_LINE_INDENT * h and abs(p[0] - left) < FLUSH_LEFT * h)
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


def normalize_ocr(raw: dict[str, Any], *, page_number: int, width: int, height: int, scale: float, dpi: float | None,
                  fix: Callable[[str], str] = str, gray: np.ndarray | None = None) -> Page:
    """``ocr`` pipeline: paragraphs grouped from lines become the regions.

    ``gray``, the page image in grey levels, lets monospace lines get back the
    spaces the recogniser dropped (``spacing``)."""
    lines = ocr_lines(raw, fix)
    if gray is not None:
        restore_spaces(gray, lines)
    page = Page(page_number=page_number, width=width, height=height, scale=scale, dpi=dpi)
    table_specs, in_tables = [], set()
    for rows in table_rows.find_table_rows([ln.bbox for ln in lines], [ln.text for ln in lines]):
        members = [i for row in rows for cell in row for i in cell]
        block = Block("table", "table", union_box(lines[i].bbox for i in members), None, "ocr", members)
        grid = tables.grid_from_rows(
            [[union_box(lines[i].bbox for i in cell) for cell in row] for row in rows],
            [[" ".join(lines[i].text for i in cell) for cell in row] for row in rows])
        table_specs.append((grid.with_ids, block))
        in_tables.update(members)
    rest = [i for i in range(len(lines)) if i not in in_tables]
    paragraphs = [Block("text", "text", union_box(lines[rest[j]].bbox for j in g), None, "ocr", [rest[j] for j in g])
                  for g in group_paragraphs([lines[i] for i in rest])]
    blocks = [spec[1] for spec in table_specs] + [p for blk in paragraphs for p in split_paragraphs(blk, lines)]
    block_types.mark_titles(blocks, lines)
    block_types.mark_running_header(blocks, height)
    block_types.fix_types(blocks, lines, height)
    _finish(page, blocks, lines, table_specs=table_specs)
    return page


def normalize_structure(raw: dict[str, Any], *, page_number: int, width: int, height: int, scale: float,
                        dpi: float | None, fix: Callable[[str], str] = str, gray: np.ndarray | None = None) -> Page:
    """``structure`` pipeline: PP-StructureV3 layout blocks plus its page-wide OCR lines (``gray``: as above)."""
    lines = ocr_lines(raw.get("overall_ocr_res") or {}, fix)
    if gray is not None:
        restore_spaces(gray, lines)
    page = Page(page_number=page_number, width=width, height=height, scale=scale, dpi=dpi)
    det_boxes = (raw.get("layout_det_res") or {}).get("boxes") or []
    blocks = []
    for blk in raw.get("parsing_res_list") or []:
        label = blk.get("block_label", "text")
        bbox = rounded(blk["block_bbox"])
        if area(bbox) <= 0:
            continue
        blocks.append(Block(LABEL_TYPES.get(label, "other"), label, bbox, _layout_score(bbox, det_boxes), "layout", []))
    # Each line goes to the layout block holding the largest part of it. Layout
    # boxes are often tighter than OCR line boxes (a page number's box can be
    # smaller than its line), so containment is measured against the smaller box.
    orphans = []
    for i, ln in enumerate(lines):
        overlaps = [intersection(ln.bbox, blk.bbox) for blk in blocks]
        best = max(range(len(blocks)), key=overlaps.__getitem__, default=None)
        if best is not None and overlaps[best] >= MIN_LINE_SHARE * min(area(ln.bbox), area(blocks[best].bbox)) > 0:
            blocks[best].members.append(i)
        else:
            orphans.append(i)
    for group in group_paragraphs([lines[i] for i in orphans]):
        members = [orphans[j] for j in group]
        blocks.append(Block("text", "text", union_box(lines[i].bbox for i in members), None, "ocr", members))
    block_types.attach_margin_labels(blocks, lines)
    blocks = [piece for blk in blocks for piece in split_paragraphs(blk, lines)]
    # Text-like layout boxes that caught no line are false detections, not content.
    blocks = [b for b in blocks if b.members or b.type in ("figure", "table", "formula")]
    block_types.fix_types(blocks, lines, height)
    table_specs = [(lambda tid, rid, t=t: tables.from_paddle(t, table_id=tid, region_id=rid, fix=fix),
                    _table_block(t, blocks)) for t in raw.get("table_res_list") or []]
    _finish(page, blocks, lines, table_specs=table_specs)
    return page


@dataclass
class Block:
    type: str
    label: str
    bbox: list[float]
    confidence: float | None
    source: str
    members: list[int]


def _layout_score(bbox: Sequence[float], det_boxes: list[dict[str, Any]]) -> float | None:
    best, best_iou = None, 0.0
    for det in det_boxes:
        box = det.get("coordinate") or []
        if len(box) != 4:
            continue
        inter = intersection(bbox, box)
        iou = inter / max(area(bbox) + area(box) - inter, 1.0)
        if iou > best_iou:
            best, best_iou = det.get("score"), iou
    return round(float(best), 4) if best is not None and best_iou > LAYOUT_MATCH_IOU else None


def _table_block(table_res: dict[str, Any], blocks: list[Block]) -> Block | None:
    """The table region a PP-StructureV3 table result belongs to (most overlap with its cells)."""
    cells = [c for c in table_res.get("cell_box_list") or [] if len(c) == 4]
    candidates = [b for b in blocks if b.type == "table"]
    if not candidates:
        return None
    if not cells:
        return candidates[0] if len(candidates) == 1 else None
    span = union_box(cells)
    best = max(candidates, key=lambda b: intersection(span, b.bbox))
    # PP-StructureV3 also runs table recognition on some non-table blocks (lists,
    # boxed notes): their results overlap no table region and must not claim one.
    return best if intersection(span, best.bbox) > TABLE_RESULT_SHARE * area(span) else None


def _finish(page: Page, blocks: list[Block], lines: list[RawLine], *,
            table_specs: list[tuple[Callable[[str, str], Table], Block | None]]) -> None:
    """Order blocks and lines, assign ids, build tables (each spec: a builder taking
    the table id and region id, and the block it belongs to) and texts."""
    # A page number in the top margin is read with the running header, one at the bottom last.
    top = [b for b in blocks if b.type in _FIRST_TYPES or (b.type == "page_number" and b.bbox[3] < page.height / 2)]
    # The running title beside a page number in the top margin is header too, whatever it was labelled.
    top += [b for b in blocks if b not in top and b.bbox[3] < MARGIN_SHARE * page.height and any(
        t.type == "page_number"
        and overlap_1d(b.bbox[1], b.bbox[3], t.bbox[1], t.bbox[3]) > SAME_ROW_OVERLAP * (b.bbox[3] - b.bbox[1])
        for t in top)]
    last = sorted((b for b in blocks if b.type in _LAST_TYPES and b not in top),
                  key=lambda b: (_LAST_TYPES.index(b.type), b.bbox[1], b.bbox[0]))
    body = [b for b in blocks if b not in top and b not in last]
    heights = [ln.bbox[3] - ln.bbox[1] for ln in lines] or [10.0]
    # Half a line height: skew on a scan narrows a column gap across a whole page
    # (0.8 degrees takes ~18 px off over an A4 column at 144 DPI).
    col_gap = max(4.0, 0.5 * median(heights))
    body = [body[i] for i in xy_cut_order([b.bbox for b in body], min_col_gap=col_gap)]
    top = [top[i] for i in line_order([b.bbox for b in top])]  # running title, then its page number
    ordered = top + body + last

    p = page.page_number
    block_ids = {id(b): f"p{p}-r{n}" for n, b in enumerate(ordered, 1)}
    table_grids = {}
    for n, (build_table, blk) in enumerate(table_specs, 1):
        if blk is None or id(blk) in table_grids:  # one table per region
            continue
        grid = build_table(f"p{p}-t{n}", block_ids[id(blk)])
        page.tables.append(grid)
        table_grids[id(blk)] = grid
    line_no = 0
    for order, blk in enumerate(ordered, 1):
        member_boxes = [lines[i].bbox for i in blk.members]
        grid = table_grids.get(id(blk))
        if blk.type == "table" and blk.members:
            seq = table_rows.reading_order(member_boxes, [lines[i].text for i in blk.members]) or (
                tables.order_lines_by_cells(member_boxes, grid) if grid is not None else line_order(member_boxes))
        else:
            seq = line_order(member_boxes)
        region_lines = []
        for k in seq:
            ln = lines[blk.members[k]]
            line_no += 1
            region_lines.append(Line(
                id=f"p{p}-l{line_no}", region_id=block_ids[id(blk)], order=line_no, polygon=ln.polygon,
                bbox=ln.bbox, text=ln.text, confidence=ln.confidence, words=ln.words,
            ))
        page.lines.extend(region_lines)
        bbox = union_box([blk.bbox] + [ln.bbox for ln in region_lines]) if blk.source == "layout" else blk.bbox
        page.regions.append(Region(
            id=block_ids[id(blk)], type=blk.type, label=blk.label, order=order, bbox=rounded(bbox),
            polygon=polygon_from_box(rounded(bbox)), confidence=blk.confidence,
            text=tables.region_text(grid) if grid is not None else "\n".join(ln.text for ln in region_lines),
            source=blk.source,
        ))
    refresh_texts(page)


def refresh_texts(page: Page) -> None:
    """Recompute the page's text and Markdown from its lines (after corrections, too)."""
    page.text = page_text(page)
    page.markdown = page_markdown(page)
