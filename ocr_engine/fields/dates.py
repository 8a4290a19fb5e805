"""Dates as documents print them, in English, German, French and Spanish.

Numeric dates are read day first, except in English, where month first (the US
order) is tried first; when the first number is above 12 only the other order is
possible. Month names and abbreviations of all four languages are known whatever
the document's language (an English invoice may quote a German date). Two-digit
years are 2000-2069 and 1970-1999.
"""

from __future__ import annotations

import datetime as dt
import re

from .text import fold

_MONTHS = {
    1: "january jan januar janner janvier janv enero ene",
    2: "february feb februar fevrier fevr fev febrero",
    3: "march mar marz maerz mrz mars marzo",
    4: "april apr avril avr abril abr",
    5: "may mai mayo",
    6: "june jun juni juin junio",
    7: "july jul juli juillet juil julio",
    8: "august aug aout agosto ago",
    9: "september sep sept septembre septiembre setiembre",
    10: "october oct oktober okt octobre octubre",
    11: "november nov novembre noviembre",
    12: "december dec dezember dez decembre diciembre dic",
}
MONTH_OF = {name: number for number, names in _MONTHS.items() for name in names.split()}
_MONTH = "(" + "|".join(sorted(MONTH_OF, key=len, reverse=True)) + r")\.?"
_YEAR = r"(\d{4}|\d{2})(?!\d)"
_ISO = re.compile(r"(?<!\d)(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")
_NUMERIC = re.compile(r"(?<![\d.])(\d{1,2})\s?[./-]\s?(\d{1,2})\s?[./-]\s?" + _YEAR)
_DAY_NAME = re.compile(r"(?<!\d)(\d{1,2})(?:er|st|nd|rd|th|o)?\.?[\s./-]*(?:de\s+)?" + _MONTH
                       + r"[\s,./-]*(?:de[l]?\s+)?" + _YEAR)
_NAME_DAY = re.compile(r"\b" + _MONTH + r"\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})(?!\d)")

MONTH_FIRST_LANGS = ("en",)


def _year(text: str) -> int:
    year = int(text)
    if len(text) == 2:
        year += 2000 if year < 70 else 1900
    return year


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def date_readings(text: str, lang: str) -> list[tuple[dt.date, int, int]]:
    """Every date ``text`` can be read as, with its span in the folded text; the language's reading first.

    A numeric date such as 03/05/2024 gives both readings (the verifier accepts
    either); ``parse_date`` takes the first.
    """
    folded = fold(text)
    found: list[tuple[dt.date, int, int]] = []
    for m in _ISO.finditer(folded):
        found.append((_date(int(m[1]), int(m[2]), int(m[3])), m.start(), m.end()))
    for m in _NUMERIC.finditer(folded):
        a, b, year = int(m[1]), int(m[2]), _year(m[3])
        orders = [(b, a), (a, b)] if lang in MONTH_FIRST_LANGS else [(a, b), (b, a)]
        found += [(_date(year, month, day), m.start(), m.end()) for day, month in orders]
    for m in _DAY_NAME.finditer(folded):
        found.append((_date(_year(m[3]), MONTH_OF[m[2]], int(m[1])), m.start(), m.end()))
    for m in _NAME_DAY.finditer(folded):
        found.append((_date(int(m[3]), MONTH_OF[m[1]], int(m[2])), m.start(), m.end()))
    found = [f for f in found if f[0] is not None]
    # In reading order; at one place, the language's reading (appended first) stays first.
    return sorted(found, key=lambda f: f[1])


def parse_date(text: str, lang: str) -> dt.date | None:
    """The first date in ``text`` in the language's reading, or None."""
    readings = date_readings(text, lang)
    return readings[0][0] if readings else None
