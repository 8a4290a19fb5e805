"""What the layout model says about a page, taken as evidence, never as the reading order.

PP-StructureV3's layout boxes are often wrong in ways that break reading: one box over
two columns, boxes that overlap, a box that cuts a code listing in two. So the page's
blocks are built from the lines' geometry (``normalize``), as without a layout model,
and the layout model only says what they are:

- a table box takes the lines that lie inside it as one block, read row by row, only
  where those lines are a grid (``table_rows.is_grid``): the model boxes listings, and
  prose beside them, as tables too;
- every other block takes its type (title, caption, header, footnote, table, figure, ...)
  from the box most of its text lies in, as a whole: the model's boxes never split a
  block, and a figure's labels keep the geometry's order;
- a type that needs more than the model's word needs it: ``reference`` (the model calls
  body text of a right column so) only under a bibliography heading or with a citation
  mark ("[12]").

The model's label and score stay on the block (``label``, ``confidence``), and the raw
result keeps every box.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from .geometry import area, intersection, rounded, union_box
from .page_parts import Block, RawLine
from .table_rows import is_grid
from .thresholds import LAYOUT_MATCH_IOU, MIN_LINE_SHARE, TABLE_RESULT_SHARE

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
BOX_TYPES = ("table", "figure")  # a box of these types stands as a region, with no text in it (a photo) or a grid
_BIBLIOGRAPHY = re.compile(r"^\s*(\d+\.?\s*)?(references|bibliography|literatur(e|verzeichnis)?|références|"
                           r"bibliographie|referencias|bibliografía|literatuur|referenties)\s*$", re.I)
_CITATION_MARK = re.compile(r"^\s*\[\d{1,4}\]")  # "[12]": not "[Function]"


def layout_regions(raw: dict[str, Any]) -> list[Block]:
    """The layout model's boxes of a PP-StructureV3 result, as blocks with no lines yet."""
    det_boxes = (raw.get("layout_det_res") or {}).get("boxes") or []
    regions = []
    for blk in raw.get("parsing_res_list") or []:
        label = blk.get("block_label", "text")
        bbox = rounded(blk["block_bbox"])
        if area(bbox) > 0:
            regions.append(Block(LABEL_TYPES.get(label, "other"), label, bbox, _layout_score(bbox, det_boxes),
                                 "layout", []))
    return regions


def standing_boxes(regions: list[Block], lines: Sequence[RawLine]) -> list[Block]:
    """The table and figure boxes that stand as blocks of their own: a table whose lines are a
    grid, holding them as its ``members``, and a box with no line in it (a photo).

    Every other box holds nothing and only types the blocks the geometry finds in it
    (``assign_types``)."""
    boxes = [r for r in regions if r.type in BOX_TYPES]
    inside: dict[int, list[int]] = {id(r): [] for r in boxes}
    for i, ln in enumerate(lines):
        region = _region_of(ln, boxes)
        if region is not None:
            inside[id(region)].append(i)
    standing = []
    for region in boxes:
        members = inside[id(region)]
        if region.type == "table" and is_grid([lines[i].bbox for i in members], [lines[i].text for i in members]):
            region.members = members
        if region.members or not members:
            standing.append(region)
    return standing


def assign_types(blocks: list[Block], regions: Sequence[Block], lines: Sequence[RawLine]) -> None:
    """Give each of ``blocks`` (grouped from the geometry) the type of the layout box most of its text lies in.

    Types go to whole blocks, never to single lines: a box that takes in the last line of a
    paragraph (a reference's second line boxed as a footer) does not carry it off to the end
    of the page. Blocks mostly in no box keep the geometry's type."""
    typers = [r for r in regions if not r.members]
    for blk in blocks:
        if blk.type == "table" or not blk.members:
            continue
        weight: dict[int, float] = {}
        for i in blk.members:
            region = _region_of(lines[i], typers, tight=True)
            key = id(region) if region else 0
            weight[key] = weight.get(key, 0.0) + area(lines[i].bbox)
        best = max(weight, key=weight.__getitem__)
        region = next((r for r in typers if id(r) == best), None)
        if region is None:
            continue
        # A bullet the geometry saw keeps its block a list item in a box of body text (or one the
        # model calls a reference: it calls lists so).
        if not (blk.type == "list" and region.type in ("text", "reference")):
            blk.type = region.type
        blk.label, blk.confidence, blk.source = region.label, region.confidence, "layout"
    _demote_unfounded_references(blocks, lines)


def _demote_unfounded_references(blocks: list[Block], lines: Sequence[RawLine]) -> None:
    """``reference`` only under a bibliography heading on the page, or for an entry with a citation mark."""
    heading = any(b.type == "title" and _BIBLIOGRAPHY.match(" ".join(lines[i].text for i in b.members))
                  for b in blocks)
    for blk in blocks:
        if blk.type == "reference" and not heading and not (
                blk.members and _CITATION_MARK.match(lines[min(blk.members, key=lambda i: lines[i].bbox[1])].text)):
            blk.type = "text"


def _region_of(line: RawLine, regions: Sequence[Block], *, tight: bool = False) -> Block | None:
    """The region holding most of ``line``, if it holds at least ``MIN_LINE_SHARE`` of it.

    ``tight``: measured against the smaller of the two boxes, for boxes the model draws
    tighter than the line (a page number's). Not for tables and figures: a small icon
    beside a line would take it."""
    best, best_share = None, 0.0
    for region in regions:
        size = min(area(line.bbox), area(region.bbox)) if tight and region.type not in BOX_TYPES else area(line.bbox)
        share = intersection(line.bbox, region.bbox) / size if size > 0 else 0.0
        if share > best_share:
            best, best_share = region, share
    return best if best_share >= MIN_LINE_SHARE else None


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


def table_region(table_res: dict[str, Any], regions: list[Block]) -> Block | None:
    """The table region a PP-StructureV3 table result belongs to (most overlap with its cells)."""
    cells = [c for c in table_res.get("cell_box_list") or [] if len(c) == 4]
    candidates = [b for b in regions if b.type == "table"]
    if not candidates:
        return None
    if not cells:
        return candidates[0] if len(candidates) == 1 else None
    span = union_box(cells)
    best = max(candidates, key=lambda b: intersection(span, b.bbox))
    # PP-StructureV3 also runs table recognition on some non-table blocks (lists,
    # boxed notes): their results overlap no table region and must not claim one.
    return best if intersection(span, best.bbox) > TABLE_RESULT_SHARE * area(span) else None
