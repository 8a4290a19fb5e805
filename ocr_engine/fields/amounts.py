"""Amounts as printed: either decimal mark, thousands grouped by '.', ',', space or apostrophe,
currency symbols or codes before or after.

A single separator followed by exactly three digits groups thousands ("1.500" and
"1,500" are 1500): money has two decimals, and a quantity of 1.5 is printed "1.5"
or "1,5". Percentages ("19 %") are not amounts.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

_GROUP = r"[.,' \u00a0\u202f’]"
_NUMBER = re.compile(
    r"(?<![\w.,])([-−]\s?)?(\d{1,3}(?:" + _GROUP + r"\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?)(?![\w]|[.,]\d)"
    r"(?!\s?%)")


def to_decimal(token: str) -> Decimal | None:
    """One number as printed ("1.234,56", "1 234,56", "1,234.56", "12,5") -> Decimal."""
    digits = re.sub(r"[ '\u00a0\u202f’]", "", token)
    negative = digits[:1] in "-−" and len(digits) > 1
    digits = digits.lstrip("-− ")
    marks = [c for c in digits if c in ".,"]
    if marks:
        last = digits.rfind(marks[-1])
        decimals = len(digits) - last - 1
        if len(set(marks)) == 2 or (len(marks) == 1 and decimals != 3):
            digits = digits[:last].replace(".", "").replace(",", "") + "." + digits[last + 1:]
        else:  # only grouping marks
            digits = digits.replace(".", "").replace(",", "")
    try:
        value = Decimal(digits)
    except InvalidOperation:
        return None
    return -value if negative else value


def amounts_in(text: str) -> list[Decimal]:
    """Every amount printed in ``text``, left to right."""
    found = []
    for m in _NUMBER.finditer(text):
        value = to_decimal((m[1] or "") + m[2])
        if value is not None:
            found.append(value)
    return found


def parse_amount(text: str) -> Decimal | None:
    """The last amount in ``text`` (a label's line ends with its amount: "VAT 19 %: 190,00"), or None."""
    found = amounts_in(text)
    return found[-1] if found else None
