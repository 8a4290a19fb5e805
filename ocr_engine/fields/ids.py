"""IBANs and EU VAT numbers: their formats and check digits come from python-stdnum
(mod-97 for IBANs; each member state's own algorithm for VAT numbers, where it has one)."""

from __future__ import annotations

import re

from stdnum import iban as _iban
from stdnum.eu import vat as _vat
from stdnum.exceptions import ValidationError

# Where an IBAN or a VAT number printed in groups may start: at any two letters, for a
# label may be glued to it ("IBANDE89...") and the check digits tell the true start.
_CANDIDATE = re.compile(r"(?=([A-Za-z]{2}[\s.\-]?[0-9A-Za-z][0-9A-Za-z\s.\-]{5,40}))")


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
    """Every valid IBAN or VAT number (``kind``) in ``text``, compact: the longest valid run from each start."""
    check = check_iban if kind == "iban" else check_vat
    found: list[str] = []
    for m in _CANDIDATE.finditer(text):
        chars = _compact(m.group(1))
        for end in range(len(chars), 5, -1):
            if check(chars[:end]) is None:
                if not any(chars[:end] in other for other in found):
                    found.append(chars[:end])
                break
    return found


def compact_id(text: str) -> str:
    return _compact(text)
