"""Where lines sit on their page, and which of them are printed labels of which field.

A line is a label line of a field when its words begin with one of the field's
``x-labels`` (case, accents and punctuation aside). Where the labels of several
fields match one line, the longest wins: "Total HT" is the subtotal's label, not
the total's "Total"; "VAT ID" the VAT number's, not the tax's "VAT".
"""

from __future__ import annotations

from dataclasses import dataclass

from ..geometry import overlap_1d
from ..schema import DocumentResult, Line
from .spec import FieldSpec
from .text import tokens


@dataclass(frozen=True)
class PlacedLine:
    page: int
    line: Line

    @property
    def box(self):
        return self.line.bbox

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]


@dataclass(frozen=True)
class LabelHit:
    field: str
    placed: PlacedLine
    rest: str  # the line's text after the label


def label_words(label: str) -> list[str]:
    return [t for t, _, _ in tokens(label)]


def match_label(labels, text: str) -> tuple[int, str] | None:
    """(words matched, the text after the label) for the longest of ``labels`` that ``text`` begins with.

    The label's last word may run into digits, as OCR joins "IVA 21%" into "IVA21%".
    """
    words = tokens(text)
    best = None
    for label in labels:
        wanted = label_words(label)
        n = len(wanted)
        if not wanted or len(words) < n or [w for w, _, _ in words[:n - 1]] != wanted[:-1]:
            continue
        last, start, end = words[n - 1]
        if last == wanted[-1]:
            rest = text[end:]
        elif last.startswith(wanted[-1]) and last[len(wanted[-1]):].isdigit():
            rest = text[start + len(wanted[-1]):]
        else:
            continue
        if best is None or n > best[0]:
            best = (n, rest)
    return best


class PageIndex:
    def __init__(self, document: DocumentResult):
        self.lines = [PlacedLine(page.page_number, line) for page in document.pages
                      for line in sorted(page.lines, key=lambda ln: ln.order)]

    def label_hits(self, specs: list[FieldSpec], skip: set[str]) -> list[LabelHit]:
        """Every label line of ``specs`` in reading order, each line given to its longest label(s)."""
        hits = []
        for placed in self.lines:
            if placed.line.id in skip:
                continue
            matches = [(spec.name, *m) for spec in specs
                       if spec.labels and (m := match_label(spec.labels, placed.line.text))]
            if matches:
                longest = max(n for _, n, _ in matches)
                hits += [LabelHit(name, placed, rest) for name, n, rest in matches if n == longest]
        return hits

    def right_of(self, anchor: PlacedLine) -> list[PlacedLine]:
        """Lines in the anchor's row to its right, nearest first."""
        a = anchor.box
        return sorted((p for p in self.lines if p.page == anchor.page and p is not anchor
                       and p.box[0] >= a[2] - 0.5 * anchor.height
                       and overlap_1d(a[1], a[3], p.box[1], p.box[3]) > 0.5 * min(anchor.height, p.height)),
                      key=lambda p: p.box[0])

    def below(self, anchor: PlacedLine) -> list[PlacedLine]:
        """Lines under the anchor, starting within two line heights of it and overlapping its width, nearest first."""
        a, h = anchor.box, anchor.height
        return sorted((p for p in self.lines if p.page == anchor.page and p is not anchor
                       and a[3] - 0.3 * h <= p.box[1] <= a[3] + 2.2 * h
                       and (overlap_1d(a[0], a[2], p.box[0], p.box[2]) > 0 or abs(p.box[0] - a[0]) < 1.5 * h)),
                      key=lambda p: (p.box[1], abs(p.box[0] - a[0])))

