"""Typed objects for a job's fields (``GET /api/v1/jobs/{id}/fields``): its document type, the fields stage's
status, and each value with its confidence, its grounding and the lines it came from (docs/extraction.md).

A field is addressed by its name, and a value inside an array field by its dotted path: ``total``,
``line_items.0.amount`` (item 0 of ``line_items``, its ``amount``). ``Fields.flat()`` lists every value that
way; ``Job.correct_field`` takes the same names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ocr_client.models import Polygon

FINAL_FIELD_STATUSES = ("succeeded", "failed", "skipped")  # "pending" until the fields stage has run
UNSET: Any = object()  # a correction's value left out (None is a value: "the document has none")


def poll_delay(attempt: int) -> float:
    """Seconds between reads of a pending fields stage: soon at first (rules take a second), then every 2 s."""
    return min(0.25 * 2 ** attempt, 2.0)


@dataclass
class Evidence:
    """A line a value was read from: its page, its line id (as the result has it) and its polygon (page pixels)."""

    page: int
    line_id: str
    polygon: Polygon | None = None

    @classmethod
    def from_dict(cls, data: dict) -> Evidence:
        return cls(page=int(data["page"]), line_id=str(data["line_id"]), polygon=data.get("polygon"))

    def as_dict(self) -> dict[str, Any]:
        return {"page": self.page, "line_id": self.line_id,
                **({"polygon": self.polygon} if self.polygon is not None else {})}


@dataclass
class Field:
    """One value. ``grounded`` is False when the value was not found in its cited lines; ``reason`` says why."""

    name: str  # its path: "total", or "line_items.0.amount" inside an array
    value: Any
    confidence: float | None
    grounded: bool
    reason: str | None = None
    evidence: list[Evidence] = field(default_factory=list)
    corrected: dict[str, str | None] | None = None  # {"by", "at"} once a reviewer corrected it

    @classmethod
    def from_dict(cls, name: str, data: dict) -> Field:
        return cls(name=name, value=data.get("value"), confidence=data.get("confidence"),
                   grounded=bool(data.get("grounded")), reason=data.get("reason"),
                   evidence=[Evidence.from_dict(e) for e in data.get("evidence") or []],
                   corrected=data.get("corrected"))

    @property
    def pages(self) -> list[int]:
        """The pages of its lines, in the order cited."""
        return list(dict.fromkeys(e.page for e in self.evidence))

    @property
    def line_ids(self) -> list[str]:
        return [e.line_id for e in self.evidence]


FieldItem = dict[str, Field]  # one item of an array field (a line item): its fields by their own names


@dataclass
class DocumentTypeAssignment:
    """The job's document type, and how it was decided: ``source`` user, rules, model or llm."""

    name: str
    source: str
    confidence: float | None


@dataclass
class Fields:
    """A job's fields as the server has them now (reviewers' corrections applied)."""

    document_type: DocumentTypeAssignment | None
    status: str  # pending, succeeded, failed, skipped
    error: dict[str, str] | None  # {"code", "detail"} of a failed extraction
    fields: dict[str, Field | list[FieldItem]]
    raw: dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_dict(cls, data: dict) -> Fields:
        kind = data.get("document_type")
        values: dict[str, Field | list[FieldItem]] = {}
        for name, value in (data.get("fields") or {}).items():
            if isinstance(value, list):
                values[name] = [{key: Field.from_dict(f"{name}.{k}.{key}", item[key]) for key in item}
                                for k, item in enumerate(value)]
            else:
                values[name] = Field.from_dict(name, value)
        return cls(document_type=DocumentTypeAssignment(kind["name"], kind.get("source", ""), kind.get("confidence"))
                   if kind else None, status=data.get("status", ""), error=data.get("error"), fields=values, raw=data)

    @property
    def final(self) -> bool:
        return self.status in FINAL_FIELD_STATUSES

    def flat(self) -> dict[str, Field]:
        """Every value by its path, array items' values as ``name.index.key``, in the answer's order."""
        found: dict[str, Field] = {}
        for value in self.fields.values():
            for one in ([f for item in value for f in item.values()] if isinstance(value, list) else [value]):
                found[one.name] = one
        return found

    def __getitem__(self, path: str) -> Field:
        """The value at ``path`` (``total``, ``line_items.0.amount``); ``KeyError`` when there is none."""
        return self.flat()[path]


def field_change(value: Any, evidence: list[Evidence | dict] | None) -> dict[str, Any]:
    """The body of ``PATCH …/fields/{name}``: a value, evidence (the lines it is read from), or both."""
    body: dict[str, Any] = {}
    if value is not UNSET:
        body["value"] = value
    if evidence is not None:
        body["evidence"] = [e.as_dict() if isinstance(e, Evidence) else dict(e) for e in evidence]
    if not body:
        raise TypeError("give value, evidence or both")
    return body
