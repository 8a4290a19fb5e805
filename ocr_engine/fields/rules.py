"""The ``rules`` backend: each value read beside or under its printed label, by the lines' geometry.

For a field with ``x-labels``, each of its label lines in reading order offers, in
turn: the rest of the label's own line ("Invoice No: 2024-17"), the nearest lines to
its right, then the lines under it, each up to the next label line (what lies
beyond another label is that label's value); the first text that reads as the
field's kind (and matches ``x-pattern``) is the value, citing the line it came from. A field without labels (or whose
labels are not printed) is looked for on every line only when the text proves
itself: an IBAN or VAT number (check digits), or an ``x-pattern``; a date without a
label is the first date of the document. Line items come from ``items``.
"""

from __future__ import annotations

from ..schema import DocumentResult
from . import items, kinds
from .layout import LabelHit, PageIndex
from .spec import FieldSpec
from .values import Proposal

BACKEND = "rules"


def propose(document: DocumentResult, specs: list[FieldSpec], *, lang: str) -> dict[str, object]:
    """``{name: Proposal | None}`` for scalar fields and ``{name: [{column: Proposal | None}]}`` for line items."""
    index = PageIndex(document)
    proposals: dict[str, object] = {}
    table_lines: set[str] = set()
    for spec in (s for s in specs if s.kind == "items"):
        rows, used = items.find_rows(index, spec, [s for s in specs if s.kind != "items"], lang=lang)
        proposals[spec.name] = rows
        table_lines |= used
    scalars = [s for s in specs if s.kind != "items"]
    hits = index.label_hits(scalars, skip=table_lines)
    label_ids = {hit.placed.line.id for hit in hits}
    for spec in scalars:
        proposals[spec.name] = _beside_labels(index, spec, [h for h in hits if h.field == spec.name], label_ids,
                                              lang) or _anywhere(index, spec, lang)
    return proposals


def _beside_labels(index: PageIndex, spec: FieldSpec, hits: list[LabelHit], label_ids: set[str],
                   lang: str) -> Proposal | None:
    for hit in hits:
        value = kinds.read(spec, hit.rest, lang) if hit.rest.strip(" :.#-|") else None
        if value is not None:
            return Proposal(value, (hit.placed.line.id,))
        for placed in _until_a_label(index.right_of(hit.placed), label_ids) + _until_a_label(
                index.below(hit.placed), label_ids):
            value = kinds.read(spec, placed.line.text, lang)
            if value is not None:
                return Proposal(value, (placed.line.id,))
    return None


def _until_a_label(lines: list, label_ids: set[str]) -> list:
    """The nearest two lines, up to the next label: what lies beyond it is that label's value."""
    taken = []
    for placed in lines[:2]:
        if placed.line.id in label_ids:
            break
        taken.append(placed)
    return taken


def _anywhere(index: PageIndex, spec: FieldSpec, lang: str) -> Proposal | None:
    proves_itself = spec.kind in ("iban", "vat") or (spec.pattern is not None and not spec.labels) or (
        spec.kind == "date" and not spec.labels)
    if not proves_itself:
        return None
    for placed in index.lines:
        value = kinds.read(spec, placed.line.text, lang)
        if value is not None:
            return Proposal(value, (placed.line.id,))
    return None
