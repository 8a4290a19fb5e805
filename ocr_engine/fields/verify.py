"""The grounding rule, in plain code: a value stands only where its cited lines print it.

For every proposed value: it must be of its field's kind; it must cite lines that
exist; it must be found in those lines once spaces, case, dates and amounts are
normalised (``kinds.found_in``); an IBAN or VAT number must pass its check digits.
Then, across fields, a total with ``x-sum-of`` must equal the sum of its line
items. A value that fails keeps its place with ``grounded: false`` and a reason:
nothing is dropped and nothing wrong is passed on as right.

Reasons (the code before any ": detail"): ``not_found`` (no value proposed),
``not_a_<kind>`` (the value is not of its kind), ``no_evidence`` (no line cited),
``unknown_line`` (a cited id is not a line of the result), ``not_in_cited_lines``,
``check_digits`` and ``line_items_sum``.
"""

from __future__ import annotations

from decimal import Decimal
from statistics import fmean
from typing import Any

from ..schema import DocumentResult, Line
from . import ids, kinds
from .spec import FieldSpec
from .values import Evidence, Fields, FieldValue, Proposal


class LineBook:
    """The result's lines by id, with their page."""

    def __init__(self, document: DocumentResult):
        self.lines: dict[str, tuple[int, Line]] = {
            line.id: (page.page_number, line) for page in document.pages for line in page.lines}

    def evidence(self, line_ids) -> list[Evidence]:
        return [Evidence(page=self.lines[i][0], line_id=i, polygon=self.lines[i][1].polygon)
                for i in line_ids if i in self.lines]


def combined_confidence(*, grounded: bool, line_confidences: list[float], agreement: float) -> float:
    """One figure for a value: 0 when it failed verification, else its lines' mean OCR confidence
    times ``agreement`` (``Proposal.agreement``)."""
    if not grounded or not line_confidences:
        return 0.0
    return round(fmean(line_confidences) * agreement, 3)


def verify(spec: FieldSpec, proposal: Proposal | None, book: LineBook, *, lang: str) -> FieldValue:
    """The verdict on one proposed scalar value."""
    if proposal is None or proposal.value is None:
        return FieldValue(value=None, confidence=0.0, grounded=False, reason="not_found")
    value = kinds.typed(spec, proposal.value)
    evidence = book.evidence(proposal.line_ids)
    if value is None:
        return _failed(proposal.value, evidence, f"not_a_{spec.kind}: {proposal.value!r}")
    if not proposal.line_ids:
        return _failed(value, evidence, "no_evidence")
    unknown = [i for i in proposal.line_ids if i not in book.lines]
    if unknown:
        return _failed(value, evidence, f"unknown_line: {', '.join(unknown)}")
    cited = [book.lines[i][1] for i in proposal.line_ids]
    if not any(kinds.found_in(spec, value, line.text, lang) for line in cited) and not kinds.found_in(
            spec, value, " ".join(line.text for line in cited), lang):
        return _failed(value, evidence, "not_in_cited_lines")
    if spec.kind in ("iban", "vat"):
        problem = (ids.check_iban if spec.kind == "iban" else ids.check_vat)(value)
        if problem:
            return _failed(value, evidence, f"check_digits: {problem}")
    confidence = combined_confidence(grounded=True, line_confidences=[line.confidence for line in cited],
                                     agreement=proposal.agreement)
    return FieldValue(value=value, confidence=confidence, grounded=True, reason=None, evidence=evidence)


def _failed(value: Any, evidence: list[Evidence], reason: str) -> FieldValue:
    return FieldValue(value=value, confidence=0.0, grounded=False, reason=reason, evidence=evidence)


def check_sums(specs: list[FieldSpec], fields: Fields) -> None:
    """Flag each grounded total whose ``x-sum-of`` line items add up to something else."""
    for spec in specs:
        total = fields.get(spec.name)
        if not spec.sum_of or not isinstance(total, FieldValue) or not total.grounded:
            continue
        array, column = spec.sum_of
        items = fields.get(array) or []
        parts = [row[column].value for row in items if column in row and row[column].value is not None]
        if not parts:
            continue  # no line items to check against: the total stands on its own line
        added = sum(Decimal(str(p)) for p in parts)
        if added != Decimal(str(total.value)):
            total.grounded, total.confidence = False, 0.0
            total.reason = (f"line_items_sum: the {len(parts)} {array}.{column} add up to "
                            f"{added.normalize():f}, not {Decimal(str(total.value)).normalize():f}")
