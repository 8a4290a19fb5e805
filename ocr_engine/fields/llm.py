"""The ``llm`` backend: a chat model reads the numbered lines and cites the ids of those it read each value from.

The model gets the document's lines in reading order, each as ``<line id>: <text>``,
and the fields asked for; it answers JSON of ``answer_schema`` (what the server's
constrained decoding enforces): for every field ``{"value": ..., "lines": [ids]}``, and
for line items a list of objects of such fields. The answer becomes the same
``Proposal``s the ``rules`` backend makes and passes the same verifier, so a value the
model made up, or cited from a line that does not print it, comes back
``grounded: false`` with its reason. With several samples, the share that agree with the
first feeds each value's confidence (``Proposal.agreement``).

Plain Python: the chat itself is a callable handed in (``jobs.llm.chat_json`` in the
platform), ``chat(messages, schema, samples=n) -> [answer, ...]``.
"""

from __future__ import annotations

from typing import Any, Callable

from ..schema import DocumentResult
from . import kinds
from .extract import Extraction, verified
from .spec import FieldSpec, parse_schema
from .values import Proposal

BACKEND = "llm"

Chat = Callable[..., list[dict]]

_VALUE_TYPES = {"number": "number", "money": "number", "integer": "number"}
# Bounds in the answer schema, so that constrained decoding stops a model that rambles or loops
# inside a string or a list of ids (a small model does) long before the token limit.
MAX_VALUE_CHARS = 300
MAX_CITED_LINES = 6
# A cited id has the form of a line id; whether it is one of this document's is the verifier's call.
LINE_ID_PATTERN = r"^p[0-9]+-l[0-9]+$"
_KIND_WORDS = {"date": "a date, as YYYY-MM-DD", "money": "an amount, as a number (decimal point, no currency)",
               "number": "a number", "integer": "a whole number", "iban": "an IBAN", "vat": "a VAT number",
               "string": "text, as printed"}

INSTRUCTIONS = (
    "You read fields from a document's OCR lines. Each line is given as '<line id>: <text>'. "
    "Answer with JSON only. For every field give its value as the document prints it, or null when the "
    "document does not print it, and in \"lines\" the ids of the lines you read it from. "
    "Never give a value that is not printed in the lines you cite.")


def extract_fields_llm(document: DocumentResult, schema: dict, *, lang: str, chat: Chat,
                       samples: int = 1) -> Extraction:
    specs = parse_schema(schema)
    rows = sum(len(page.lines) for page in document.pages)
    answers = chat(messages(document, specs), answer_schema(specs, max_rows=rows), samples=samples)
    proposals = propose(specs, answers, samples=samples)
    return Extraction(backend=BACKEND, fields=verified(document, specs, proposals, lang=lang))


def answer_schema(specs: list[FieldSpec], *, max_rows: int) -> dict:
    """The JSON Schema the model's answer must follow (every member required, nothing else: OpenAI's strict mode).

    A table has at most ``max_rows`` rows (the document's line count: every row cites a line), so a
    small model that repeats a row stops there instead of writing until its token limit.
    """
    def cited(spec: FieldSpec) -> dict:
        kind = _VALUE_TYPES.get(spec.kind, "string")
        value = {"enum": [*spec.enum, None]} if spec.kind == "enum" else {"type": [kind, "null"]}
        if kind == "string" and spec.kind != "enum":
            value["maxLength"] = MAX_VALUE_CHARS
        lines = {"type": "array", "items": {"type": "string", "pattern": LINE_ID_PATTERN},
                 "maxItems": MAX_CITED_LINES}
        return _object({"value": value, "lines": lines})

    return _object({spec.name: {"type": "array", "items": _object({c.name: cited(c) for c in spec.columns}),
                                "maxItems": max(max_rows, 1)}
                    if spec.kind == "items" else cited(spec) for spec in specs})


def _object(properties: dict) -> dict:
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def messages(document: DocumentResult, specs: list[FieldSpec]) -> list[dict]:
    """The chat: the instructions, then the fields asked for and the document's lines in reading order."""
    def described(spec: FieldSpec, indent: str = "- ") -> str:
        if spec.kind == "items":
            return f"{indent}{spec.name}: a list, one object per line item, each with:\n" + "\n".join(
                described(c, "    - ") for c in spec.columns)
        kind = f"one of {', '.join(spec.enum)}" if spec.kind == "enum" else _KIND_WORDS.get(spec.kind, spec.kind)
        labels = f" (printed after a label such as {', '.join(repr(x) for x in spec.labels)})" if spec.labels else ""
        return f"{indent}{spec.name}: {kind}{labels}"

    lines = "\n".join(f"{line.id}: {line.text}" for page in document.pages
                      for line in sorted(page.lines, key=lambda line: line.order))
    return [{"role": "system", "content": INSTRUCTIONS},
            {"role": "user", "content": "Fields:\n" + "\n".join(described(s) for s in specs)
             + "\n\nDocument lines:\n" + lines}]


def propose(specs: list[FieldSpec], answers: list[dict], *, samples: int = 0) -> dict[str, Any]:
    """The first answer as proposals, each with the share of the ``samples`` asked for (by default, the
    answers given) that gave the same value: a sample that gave no valid answer counts as disagreeing."""
    first, *others = answers
    samples = max(samples, len(answers))
    proposals: dict[str, Any] = {}
    for spec in specs:
        if spec.kind == "items":
            rows = first.get(spec.name) or []
            proposals[spec.name] = [
                {c.name: _proposal(c, [row.get(c.name)] + [_row(o, spec.name, i).get(c.name) for o in others],
                                   samples) for c in spec.columns} for i, row in enumerate(rows)]
        else:
            proposals[spec.name] = _proposal(spec, [first.get(spec.name)] + [o.get(spec.name) for o in others],
                                             samples)
    return proposals


def _row(answer: dict, name: str, index: int) -> dict:
    rows = answer.get(name) or []
    return rows[index] if index < len(rows) else {}


def _proposal(spec: FieldSpec, cells: list[dict | None], samples: int) -> Proposal | None:
    first = cells[0] or {}
    if first.get("value") in (None, ""):
        return None
    same = sum(1 for cell in cells if cell and _same(spec, cell.get("value"), first["value"]))
    return Proposal(first["value"], tuple(str(i) for i in first.get("lines") or ()), agreement=same / samples)


def _same(spec: FieldSpec, a: Any, b: Any) -> bool:
    """Two samples agree when their values are one value of the field's kind ("12.50" and 12.5)."""
    typed_a, typed_b = kinds.typed(spec, a), kinds.typed(spec, b)
    return typed_a == typed_b if typed_a is not None else str(a).strip().casefold() == str(b).strip().casefold()
