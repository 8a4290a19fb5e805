"""Small box helpers shared by normalization and reading order. Boxes are [x0, y0, x1, y1]."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

Box = Sequence[float]


def box_from_polygon(points: Iterable[Sequence[float]]) -> list[float]:
    xs, ys = zip(*((float(x), float(y)) for x, y in points))
    return [min(xs), min(ys), max(xs), max(ys)]


def polygon_from_box(box: Box) -> list[list[float]]:
    x0, y0, x1, y1 = box
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def area(box: Box) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def intersection(a: Box, b: Box) -> float:
    return area([max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])])


def union_box(boxes: Iterable[Box]) -> list[float]:
    boxes = list(boxes)
    return [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]


def overlap_1d(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def body_line_height(boxes: Iterable[Box]) -> float:
    """The height of a page's body text: the median line height (the upper one of an even count), 0 for none."""
    heights = sorted(b[3] - b[1] for b in boxes)
    return heights[len(heights) // 2] if heights else 0.0


def clip_box(box: Box, width: float, height: float) -> list[float]:
    return [
        min(max(0.0, box[0]), width), min(max(0.0, box[1]), height),
        min(max(0.0, box[2]), width), min(max(0.0, box[3]), height),
    ]


def rounded(values: Iterable[float], ndigits: int = 1) -> list[float]:
    return [round(float(v), ndigits) for v in values]
