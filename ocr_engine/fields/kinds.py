"""Reading a value of each kind from text, and the text forms a value of that kind is found as.

``read`` is what the ``rules`` backend does with the text beside a label;
``found_in`` is what the verifier asks of a cited line.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal, InvalidOperation
from typing import Any

from . import amounts, dates, ids
from .spec import FieldSpec, search
from .text import compact, fold


def read(spec: FieldSpec, text: str, lang: str) -> Any:
    """The typed value of ``spec`` in ``text`` (the first one, or for amounts the last), or None."""
    if spec.pattern is not None:
        m = search(spec, text)
        if m is None:
            return None
        text = m.group(1) if spec.pattern.groups else m.group()
    if spec.kind == "date":
        day = dates.parse_date(text, lang)
        return day.isoformat() if day else None
    if spec.kind in ("money", "number", "integer"):
        value = amounts.parse_amount(text)
        return None if value is None else as_json_number(spec, value)
    if spec.kind in ("iban", "vat"):
        found = ids.ids_in(text, spec.kind)
        return found[0] if found else None
    if spec.kind == "enum":
        words = f" {fold(text)} "
        return next((v for v in spec.enum if f" {fold(v)} " in words), None)
    # What separates a label from its value on one line: "Our ref.: AB-12", "No. 17", "Kunde - ACME".
    value = text.lstrip(" :.#-–—|\t").strip()
    return value or None


def _readings(spec: FieldSpec, text: str, lang: str) -> list[Any]:
    """Every date or number ``text`` holds, typed as ``spec``'s kind (both readings of an ambiguous date)."""
    if spec.kind == "date":
        return [day.isoformat() for day, _, _ in dates.date_readings(text, lang)]
    return [as_json_number(spec, v) for v in amounts.amounts_in(text)]


def typed(spec: FieldSpec, value: Any) -> Any:
    """``value`` as the JSON value of its kind (a backend may answer "1.234,56"); None if it is not one."""
    if value is None:
        return None
    if spec.kind == "date":
        if isinstance(value, str):
            try:
                return dt.date.fromisoformat(value).isoformat()
            except ValueError:
                return None
        return None
    if spec.kind in ("money", "number", "integer"):
        if isinstance(value, bool):
            return None
        if isinstance(value, (int, float)):
            return as_json_number(spec, Decimal(str(value)))
        if isinstance(value, str):
            parsed = amounts.parse_amount(value)
            return None if parsed is None else as_json_number(spec, parsed)
        return None
    if not isinstance(value, str) or not value.strip():
        return None
    if spec.kind in ("iban", "vat"):
        return ids.compact_id(value)
    if spec.kind == "enum":
        return next((v for v in spec.enum if fold(v) == fold(value)), None)
    return " ".join(value.split())


def as_json_number(spec: FieldSpec, value: Decimal) -> int | float:
    if spec.kind == "integer" or (spec.kind == "number" and value == value.to_integral_value()):
        return int(value)
    if spec.kind == "money":
        return float(value.quantize(Decimal("0.01")))
    return float(value)


def found_in(spec: FieldSpec, value: Any, text: str, lang: str) -> bool:
    """Whether ``value`` (``typed``) is printed in ``text`` once spaces, case, dates and amounts are normalised."""
    if spec.kind in ("date", "money", "number", "integer"):
        return any(_equal(value, other) for other in _readings(spec, text, lang))
    if spec.kind in ("iban", "vat"):
        return compact(value) in compact(ids.compact_id(text))
    return compact(str(value)) in compact(text)


def _equal(a: Any, b: Any) -> bool:
    try:
        return Decimal(str(a)) == Decimal(str(b))
    except InvalidOperation:
        return a == b
