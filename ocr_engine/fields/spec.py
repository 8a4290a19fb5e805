"""The fields a document type asks for, read from its JSON Schema.

How types are spelled (standard JSON Schema where it has a word for it):

=========  ==================================================  =======================
kind       schema                                              value returned
=========  ==================================================  =======================
string     ``{"type": "string"}``                              the text, trimmed
number     ``{"type": "number"}`` or ``{"type": "integer"}``    a JSON number
date       ``{"type": "string", "format": "date"}``            ``"YYYY-MM-DD"``
money      ``{"type": "number", "format": "money"}``           a JSON number (2 decimals)
iban       ``{"type": "string", "format": "iban"}``            compact, e.g. ``"DE89370400440532013000"``
vat        ``{"type": "string", "format": "vat"}``             compact, e.g. ``"DE136695976"``
enum       ``{"type": "string", "enum": [...]}``               one of the enum's values
items      ``{"type": "array", "items": {"type": "object", "properties": {...}}}``  a list of objects
=========  ==================================================  =======================

Extensions a property may carry: ``x-labels`` (printed labels the ``rules`` backend
anchors on), ``x-pattern`` (a regular expression the value matches; its first group,
if it has one, is the value) and, on a number or money property, ``x-sum-of``
(``"<array>.<property>"``: the line items that must add up to it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import regex

from ..errors import InputError

class InvalidFieldsSchema(InputError):
    code = "invalid_fields_schema"


# An x-pattern is a user's regular expression run over every line of a document: a
# pattern with catastrophic backtracking would hold a worker for hours. ``regex`` (unlike
# ``re``) can stop a search after a time; a pattern that needs longer is refused.
PATTERN_MAX_CHARS = 500
PATTERN_SECONDS = 0.1  # a search over one OCR line takes microseconds


def search(spec: "FieldSpec", text: str):
    """``spec.pattern`` searched in ``text`` within ``PATTERN_SECONDS``; ``InvalidFieldsSchema`` past it."""
    try:
        return spec.pattern.search(text, timeout=PATTERN_SECONDS)
    except TimeoutError:
        raise InvalidFieldsSchema(f"{spec.name}: x-pattern took longer than {PATTERN_SECONDS} s on one line "
                                  f"of {len(text)} characters; simplify it.") from None


@dataclass(frozen=True)
class FieldSpec:
    name: str
    kind: str  # string, number, integer, date, money, iban, vat, enum; or "items" for an array of objects
    labels: tuple[str, ...] = ()
    pattern: regex.Pattern | None = None
    enum: tuple[str, ...] = ()
    sum_of: tuple[str, str] | None = None  # (array field, its property)
    columns: tuple["FieldSpec", ...] = ()  # the item properties of an "items" field


def parse_schema(schema: Any) -> list[FieldSpec]:
    """The top-level fields of a JSON Schema of an object; ``InvalidFieldsSchema`` says what is wrong."""
    if not isinstance(schema, dict) or schema.get("type") != "object" or not isinstance(
            schema.get("properties"), dict) or not schema["properties"]:
        raise InvalidFieldsSchema("The fields schema must be an object with at least one property.")
    specs = [_field(name, prop, top=True) for name, prop in schema["properties"].items()]
    names = {s.name: s for s in specs}
    for spec in specs:
        if spec.sum_of:
            array, column = spec.sum_of
            if array not in names or names[array].kind != "items" or column not in {
                    c.name for c in names[array].columns}:
                raise InvalidFieldsSchema(f"{spec.name}: x-sum-of names no array property "
                                          f"{array}.{column}.")
    return specs


def _field(name: str, prop: Any, *, top: bool) -> FieldSpec:
    if not isinstance(prop, dict):
        raise InvalidFieldsSchema(f"{name}: a property must be an object.")
    labels = prop.get("x-labels", [])
    if not isinstance(labels, list) or not all(isinstance(x, str) and x.strip() for x in labels):
        raise InvalidFieldsSchema(f"{name}: x-labels must be a list of non-empty strings.")
    pattern = None
    if "x-pattern" in prop:
        if not isinstance(prop["x-pattern"], str) or len(prop["x-pattern"]) > PATTERN_MAX_CHARS:
            raise InvalidFieldsSchema(f"{name}: x-pattern is a string of at most {PATTERN_MAX_CHARS} characters.")
        try:
            pattern = regex.compile(prop["x-pattern"])
        except regex.error as exc:
            raise InvalidFieldsSchema(f"{name}: x-pattern is not a regular expression ({exc}).") from None
    kind = _kind(name, prop, top=top)
    columns = tuple(_field(f"{name}.{k}", v, top=False) for k, v in
                    prop["items"]["properties"].items()) if kind == "items" else ()
    columns = tuple(FieldSpec(**{**c.__dict__, "name": c.name.split(".", 1)[1]}) for c in columns)
    sum_of = None
    if "x-sum-of" in prop:
        target = prop["x-sum-of"]
        if kind not in ("number", "money") or not isinstance(target, str) or target.count(".") != 1:
            raise InvalidFieldsSchema(f"{name}: x-sum-of is '<array>.<property>' on a number or money property.")
        sum_of = tuple(target.split("."))
    return FieldSpec(name=name, kind=kind, labels=tuple(labels), pattern=pattern,
                     enum=tuple(str(v) for v in prop.get("enum", ())), sum_of=sum_of, columns=columns)


def _kind(name: str, prop: dict, *, top: bool) -> str:
    kind, fmt = prop.get("type"), prop.get("format")
    if "enum" in prop:
        if not isinstance(prop["enum"], list) or not prop["enum"]:
            raise InvalidFieldsSchema(f"{name}: enum must be a non-empty list.")
        return "enum"
    if kind == "string":
        if fmt in (None, "date", "iban", "vat"):
            return fmt or "string"
    elif kind == "number":
        if fmt in (None, "money"):
            return fmt or "number"
    elif kind == "integer" and fmt is None:
        return "integer"
    elif kind == "array" and top:
        items = prop.get("items")
        if isinstance(items, dict) and items.get("type") == "object" and isinstance(
                items.get("properties"), dict) and items["properties"]:
            return "items"
        raise InvalidFieldsSchema(f"{name}: an array holds objects with properties (line items).")
    raise InvalidFieldsSchema(f"{name}: unsupported type {kind!r} with format {fmt!r}; see docs/extraction.md.")
