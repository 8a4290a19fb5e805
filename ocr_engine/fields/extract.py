"""Extraction: a backend proposes, the verifier decides.

``extract_fields(document, schema, lang=...)`` reads the fields of a JSON Schema
(``spec``) from an engine result with the ``rules`` backend, verifies every value
against its cited lines (``verify``) and returns them in the shape of
``GET /api/v1/jobs/{id}/fields``. Another backend (an LLM's) plugs in by producing
the same proposals, each with its samples' agreement (``Proposal.agreement``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..schema import DocumentResult
from . import rules
from .spec import FieldSpec, parse_schema
from .values import Fields, fields_to_dict
from .verify import LineBook, check_sums, verify


@dataclass
class Extraction:
    backend: str
    fields: Fields

    def as_dict(self) -> dict[str, Any]:
        return fields_to_dict(self.fields)


def extract_fields(document: DocumentResult, schema: dict, *, lang: str) -> Extraction:
    specs = parse_schema(schema)
    proposals = rules.propose(document, specs, lang=lang)
    return Extraction(backend=rules.BACKEND, fields=verified(document, specs, proposals, lang=lang))


def verified(document: DocumentResult, specs: list[FieldSpec], proposals: dict[str, Any], *, lang: str) -> Fields:
    """Every field of ``specs`` verified: scalars one by one, line items cell by cell, then the sums."""
    book = LineBook(document)
    fields: Fields = {}
    for spec in specs:
        proposal = proposals.get(spec.name)
        if spec.kind == "items":
            fields[spec.name] = [{c.name: verify(c, row.get(c.name), book, lang=lang)
                                  for c in spec.columns} for row in proposal or []]
        else:
            fields[spec.name] = verify(spec, proposal, book, lang=lang)
    check_sums(specs, fields)
    return fields

