"""What extraction returns, field by field: the shapes of ``GET /api/v1/jobs/{id}/fields``.

A backend only *proposes* a value and the lines it came from (``Proposal``); the
verifier (``verify``) turns each proposal into a ``FieldValue``, so every backend's
answers pass the same checks. An array field (line items) holds a list of objects,
each a dict of ``FieldValue``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

from ..schema import Polygon


@dataclass(frozen=True)
class Evidence:
    page: int  # 1-based page number
    line_id: str  # a ``Line.id`` of the result, "p{page}-l{n}"
    polygon: Polygon


@dataclass
class FieldValue:
    value: Any  # typed: str, number, "YYYY-MM-DD" for dates; None when nothing was found
    confidence: float  # 0..1 (``verify.combined_confidence``)
    grounded: bool  # True only when the verifier found the value in its cited lines
    reason: str | None  # why not grounded: "<code>" or "<code>: <detail>" (codes in docs/extraction.md)
    evidence: list[Evidence] = field(default_factory=list)


@dataclass(frozen=True)
class Proposal:
    """A backend's answer for one field: a value as text or typed, and the ids of the lines it cites."""

    value: Any
    line_ids: tuple[str, ...]
    # The share of a backend's samples that gave this value. A rule gives the same answer
    # every time: 1. A sampling backend (an LLM asked twice) passes its own.
    agreement: float = 1.0


ItemValues = dict[str, FieldValue]
Fields = dict[str, Union[FieldValue, list[ItemValues]]]


def fields_to_dict(fields: Fields) -> dict[str, Any]:
    """JSON-ready ``{"<name>": {"value", "confidence", "grounded", "reason", "evidence"}}``; arrays as lists."""
    def one(value: FieldValue) -> dict[str, Any]:
        return {"value": value.value, "confidence": value.confidence, "grounded": value.grounded,
                "reason": value.reason,
                "evidence": [{"page": e.page, "line_id": e.line_id, "polygon": e.polygon} for e in value.evidence]}

    return {name: [{k: one(v) for k, v in item.items()} for item in value] if isinstance(value, list) else one(value)
            for name, value in fields.items()}
