"""Raw PaddleOCR output -> the normalized ``schema.Page``.

Both pipelines end in the same shape: regions in reading order, every line in
exactly one region, lines in reading order, and both get it the same way. The
page's blocks come from the lines' own geometry: tables of aligned cells
(``table_rows``), paragraphs of stacked lines (``paragraphs``); columns, bands and
their order from the XY-cut of those blocks (``reading_order``). The ``structure``
pipeline's layout model adds evidence, not order (``layout_evidence``): its tables
hold the lines inside them where those are a grid, and its boxes name the other blocks' types.
No recognised line is ever dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from statistics import median
from typing import Any

import numpy as np

from . import block_types, layout_evidence, listings, table_rows, tables
from .exports.markdown import page_markdown
from .exports.text import page_text
from .geometry import overlap_1d, polygon_from_box, rounded, union_box
from .page_parts import Block, RawLine, ocr_lines
from .paragraphs import group_paragraphs, split_paragraphs
from .reading_order import line_order, xy_cut_order
from .schema import Line, Page, Region, Table
from .spacing import restore_spaces, separate_touching_lines
from .thresholds import BAND_GAP, MARGIN_SHARE, SAME_ROW_OVERLAP

_FIRST_TYPES = ("header",)  # read before the body
_LAST_TYPES = ("footnote", "footer", "page_number")  # read after the body, in this order
TableSpec = tuple[Callable[[str, str], Table], Block | None]  # a table's builder (table id, region id), its block


def geometry_blocks(lines: list[RawLine], held: set[int] = frozenset()) -> tuple[list[Block], list[TableSpec]]:
    """Numbered listings, tables and paragraphs found from the geometry of the lines not ``held`` by another block."""
    free = [i for i in range(len(lines)) if i not in held]
    blocks, specs = [], []
    for listing in listings.numbered_listings([lines[i].bbox for i in free], [lines[i].text for i in free]):
        members = [free[k] for k in listing]
        blocks.append(Block("text", "text", union_box(lines[i].bbox for i in members), None, "ocr", members))
    in_listings = {i for block in blocks for i in block.members}
    free = [i for i in free if i not in in_listings]
    in_tables = set()
    for rows in table_rows.find_table_rows([lines[i].bbox for i in free], [lines[i].text for i in free]):
        rows = [[[free[k] for k in cell] for cell in row] for row in rows]
        members = [i for row in rows for cell in row for i in cell]
        block = Block("table", "table", union_box(lines[i].bbox for i in members), None, "ocr", members)
        grid = tables.grid_from_rows(
            [[union_box(lines[i].bbox for i in cell) for cell in row] for row in rows],
            [[" ".join(lines[i].text for i in cell) for cell in row] for row in rows])
        specs.append((grid.with_ids, block))
        blocks.append(block)
        in_tables.update(members)
    rest = [i for i in free if i not in in_tables]
    for group in group_paragraphs([lines[i] for i in rest]):
        members = [rest[j] for j in group]
        paragraph = Block("text", "text", union_box(lines[i].bbox for i in members), None, "ocr", members)
        blocks += split_paragraphs(paragraph, lines)
    return blocks, specs


def normalize_ocr(raw: dict[str, Any], *, page_number: int, width: int, height: int, scale: float, dpi: float | None,
                  fix: Callable[[str], str] = str, gray: np.ndarray | None = None) -> Page:
    """``ocr`` pipeline: the blocks of the geometry, typed by rules (``block_types``).

    ``gray``, the page image in grey levels, lets monospace lines get back the
    spaces the recogniser dropped (``spacing``)."""
    lines = ocr_lines(raw, fix)
    if gray is not None:
        separate_touching_lines(gray, lines)
        restore_spaces(gray, lines)
    page = Page(page_number=page_number, width=width, height=height, scale=scale, dpi=dpi)
    blocks, table_specs = geometry_blocks(lines)
    block_types.mark_titles(blocks, lines)
    block_types.mark_running_header(blocks, height)
    block_types.fix_types(blocks, lines, height)
    _finish(page, blocks, lines, table_specs=table_specs)
    return page


def normalize_structure(raw: dict[str, Any], *, page_number: int, width: int, height: int, scale: float,
                        dpi: float | None, fix: Callable[[str], str] = str, gray: np.ndarray | None = None) -> Page:
    """``structure`` pipeline: the same blocks, with PP-StructureV3's tables, figures and types (``gray``: as above)."""
    lines = ocr_lines(raw.get("overall_ocr_res") or {}, fix)
    if gray is not None:
        separate_touching_lines(gray, lines)
        restore_spaces(gray, lines)
    page = Page(page_number=page_number, width=width, height=height, scale=scale, dpi=dpi)
    regions = layout_evidence.layout_regions(raw)
    boxes = layout_evidence.standing_boxes(regions, lines)
    blocks, geometry_tables = geometry_blocks(lines, {i for box in boxes for i in box.members})
    layout_evidence.assign_types(blocks, regions, lines)
    block_types.mark_titles(blocks, lines)
    block_types.mark_running_header(blocks, height)
    block_types.fix_types(blocks, lines, height)
    # Tables the layout model found, holding their grid of lines, and boxes with no text (a photo).
    table_specs = [(lambda tid, rid, t=t: tables.from_paddle(t, table_id=tid, region_id=rid, fix=fix),
                    layout_evidence.table_region(t, boxes)) for t in raw.get("table_res_list") or []]
    _finish(page, boxes + blocks, lines, table_specs=table_specs + geometry_tables)
    return page


def _finish(page: Page, blocks: list[Block], lines: list[RawLine], *, table_specs: list[TableSpec]) -> None:
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
    # The geometry orders what holds text, by the lines' own boxes: a layout box drawn over
    # two columns would stop the cut between them. A box without text (a photo) then goes
    # before the first block under its top that it stands over.
    text = [b for b in body if b.members]
    body = [text[i] for i in xy_cut_order([_lines_box(b, lines) for b in text], min_col_gap=col_gap,
                                          band_gap=BAND_GAP * median(heights))]
    for empty in sorted((b for b in blocks if not b.members and b not in top and b not in last),
                        key=lambda b: b.bbox[1]):
        at = next((k for k, b in enumerate(body) if b.bbox[1] >= empty.bbox[1]
                   and overlap_1d(b.bbox[0], b.bbox[2], empty.bbox[0], empty.bbox[2]) > 0), len(body))
        body.insert(at, empty)
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


def _lines_box(block: Block, lines: list[RawLine]) -> list[float]:
    return union_box(lines[i].bbox for i in block.members)


def refresh_texts(page: Page) -> None:
    """Recompute the page's text and Markdown from its lines (after corrections, too)."""
    page.text = page_text(page)
    page.markdown = page_markdown(page)
