"""IBANs and EU VAT numbers: their formats and check digits come from python-stdnum
(mod-97 for IBANs; each member state's own algorithm for VAT numbers, where it has one)."""

from __future__ import annotations

import re

from stdnum import iban as _iban
from stdnum.eu import vat as _vat
from stdnum.exceptions import ValidationError

# A run of characters that may hold an IBAN or a VAT number printed in groups.
_CANDIDATE = re.compile(r"[A-Za-z]{2}[\s.\-]?[0-9A-Za-z][0-9A-Za-z\s.\-]{5,40}")


def _compact(text: str) -> str:
    return re.sub(r"[\s.\-/]", "", text).upper()


def check_iban(text: str) -> str | None:
    """Why ``text`` is not a valid IBAN, or None when it is."""
    try:
        _iban.validate(text)
    except ValidationError as exc:
        return str(exc).lower().rstrip(".")
    return None


def check_vat(text: str) -> str | None:
    """Why ``text`` is not a valid EU VAT number (country prefix included), or None when it is."""
    try:
        _vat.validate(text)
    except ValidationError as exc:
        return str(exc).lower().rstrip(".")
    return None


def ids_in(text: str, kind: str) -> list[str]:
    """Every valid IBAN or VAT number (``kind``) in ``text``, compact; the longest valid prefix of each run."""
    check = check_iban if kind == "iban" else check_vat
    found = []
    for m in _CANDIDATE.finditer(text):
        chars = _compact(m.group())
        for end in range(len(chars), 5, -1):
            if check(chars[:end]) is None:
                found.append(chars[:end])
                break
    return found


def compact_id(text: str) -> str:
    return _compact(text)
