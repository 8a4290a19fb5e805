"""Reviewers' geometry edits, replayed over a normalized page.

An edit is a plain dict ``{"kind": ..., **payload}`` whose payload is fully
resolved when the edit is made (new line ids, split texts), so replaying the
same list always gives the same page. Edits whose target has gone (a line an
undone edit created, a line deleted by an earlier edit) are skipped rather
than failing: undo may remove any edit, not only the last one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from .geometry import area, box_from_polygon, polygon_from_box, union_box
from .schema import Line, Page, Region

KINDS = ("line_create", "line_change", "line_delete", "line_split", "line_merge", "region_change")
_LINE_NUMBER = re.compile(r"-l(\d+)$")


def next_line_id(page_number: int, used_ids: Iterable[str]) -> str:
    """A fresh line id ("p{page}-l{n}") after the highest of ``used_ids``."""
    numbers = [int(m.group(1)) for line_id in used_ids if (m := _LINE_NUMBER.search(line_id))]
    return f"p{page_number}-l{max(numbers, default=0) + 1}"


def region_for_box(page: Page, box: list[float]) -> Region | None:
    """The smallest region holding the box's centre, else the nearest one (None on a page without regions)."""
    cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2

    def distance_then_size(region: Region) -> tuple[float, float]:
        x0, y0, x1, y1 = region.bbox
        return max(x0 - cx, 0, cx - x1) + max(y0 - cy, 0, cy - y1), area(region.bbox)

    return min(page.regions, key=distance_then_size, default=None)


def split_text(text: str, fraction: float) -> tuple[str, str]:
    """Split ``text`` near ``fraction`` of its length, at the closest space when there is one."""
    cut = round(len(text) * min(max(fraction, 0.0), 1.0))
    spaces = [i for i, ch in enumerate(text) if ch == " "]
    if spaces:
        cut = min(spaces, key=lambda i: abs(i - cut))
    return text[:cut].strip(), text[cut:].strip()


def split_boxes(box: list[float], at: float) -> tuple[list[float], list[float]]:
    return [box[0], box[1], at, box[3]], [at, box[1], box[2], box[3]]


def apply_edits(page: Page, edits: Iterable[dict]) -> Page:
    """Replay ``edits`` in order on ``page`` (changed in place and returned); renumbers reading order."""
    for edit in edits:
        _APPLY[edit["kind"]](page, edit)
    _renumber(page)
    return page


def _line(page: Page, line_id: str) -> Line | None:
    return next((line for line in page.lines if line.id == line_id), None)


def _set_polygon(line: Line, polygon: list[list[float]]) -> None:
    line.polygon = [[float(x), float(y)] for x, y in polygon]
    line.bbox = box_from_polygon(line.polygon)
    line.words = None  # word boxes no longer match a redrawn line


def _insert_by_position(page: Page, line: Line) -> None:
    """Insert ``line`` before the first line of its region that starts below it."""
    for index, other in enumerate(page.lines):
        if other.region_id == line.region_id and other.bbox[1] > line.bbox[1]:
            page.lines.insert(index, line)
            return
    last = max((i for i, other in enumerate(page.lines) if other.region_id == line.region_id), default=None)
    page.lines.insert(len(page.lines) if last is None else last + 1, line)


def _create(page: Page, edit: dict) -> None:
    if _line(page, edit["line_id"]) is not None or not any(r.id == edit["region_id"] for r in page.regions):
        return
    line = Line(id=edit["line_id"], region_id=edit["region_id"], order=0, polygon=[], bbox=[],
                text=edit["text"], confidence=edit.get("confidence") or 0.0, original_text="")
    _set_polygon(line, edit["polygon"])
    _insert_by_position(page, line)


def _change(page: Page, edit: dict) -> None:
    line = _line(page, edit["line_id"])
    if line is None:
        return
    if edit.get("polygon"):
        _set_polygon(line, edit["polygon"])
    if edit.get("text") is not None:
        if line.original_text is None:
            line.original_text = line.text
        line.text = edit["text"]
        if edit.get("confidence") is not None:
            line.confidence = edit["confidence"]
    if edit.get("region_id") and any(r.id == edit["region_id"] for r in page.regions):
        page.lines.remove(line)
        line.region_id = edit["region_id"]
        _insert_by_position(page, line)


def _delete(page: Page, edit: dict) -> None:
    page.lines = [line for line in page.lines if line.id != edit["line_id"]]


def _split(page: Page, edit: dict) -> None:
    line = _line(page, edit["line_id"])
    if line is None:
        return
    left_box, right_box = split_boxes(line.bbox, edit["at"])
    right = Line(id=edit["new_line_id"], region_id=line.region_id, order=0, polygon=[], bbox=[],
                 text=edit["texts"][1], confidence=line.confidence, original_text="")
    _set_polygon(right, polygon_from_box(right_box))
    _set_polygon(line, polygon_from_box(left_box))
    if line.original_text is None:
        line.original_text = line.text
    line.text = edit["texts"][0]
    page.lines.insert(page.lines.index(line) + 1, right)


def _merge(page: Page, edit: dict) -> None:
    lines = [line for line in page.lines if line.id in edit["line_ids"]]
    if len(lines) < 2:
        return
    first = lines[0]
    text = " ".join(line.text for line in lines)
    if first.original_text is None:
        first.original_text = first.text
    _set_polygon(first, polygon_from_box(union_box(line.bbox for line in lines)))
    first.text = text
    first.confidence = min(line.confidence for line in lines)
    merged = {line.id for line in lines[1:]}
    page.lines = [line for line in page.lines if line.id not in merged]


def _region(page: Page, edit: dict) -> None:
    region = next((r for r in page.regions if r.id == edit["region_id"]), None)
    if region is None:
        return
    if edit.get("type"):
        region.type = edit["type"]
    if edit.get("order"):
        ordered = sorted(page.regions, key=lambda r: r.order)
        ordered.remove(region)
        ordered.insert(min(edit["order"], len(ordered) + 1) - 1, region)
        for number, other in enumerate(ordered, start=1):
            other.order = number
        page.regions = ordered


_APPLY = {
    "line_create": _create, "line_change": _change, "line_delete": _delete,
    "line_split": _split, "line_merge": _merge, "region_change": _region,
}


def _renumber(page: Page) -> None:
    """Lines follow their regions' reading order (stable inside a region); region texts follow their lines."""
    region_order = {region.id: region.order for region in page.regions}
    page.lines.sort(key=lambda line: region_order.get(line.region_id, 0))
    for number, line in enumerate(page.lines, start=1):
        line.order = number
    table_regions = {table.region_id for table in page.tables}
    for region in page.regions:
        if region.id not in table_regions:
            region.text = "\n".join(line.text for line in page.lines if line.region_id == region.id)
