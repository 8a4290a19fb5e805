"""Dates, amounts, IBANs and VAT numbers as documents print them."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from ocr_engine.fields.amounts import amounts_in, parse_amount
from ocr_engine.fields.dates import date_readings, parse_date
from ocr_engine.fields.ids import check_iban, check_vat, ids_in


@pytest.mark.parametrize(("text", "lang", "expected"), [
    ("Invoice date: March 5, 2024", "en", dt.date(2024, 3, 5)),
    ("5 Mar 2024", "en", dt.date(2024, 3, 5)),
    ("03/05/2024", "en", dt.date(2024, 3, 5)),  # month first in English
    ("25/03/2024", "en", dt.date(2024, 3, 25)),  # no 25th month: day first
    ("Rechnungsdatum 05.03.2024", "de", dt.date(2024, 3, 5)),
    ("15. März 2024", "de", dt.date(2024, 3, 15)),
    ("Datum: 05.03.24 14:32", "de", dt.date(2024, 3, 5)),
    ("03/05/2024", "fr", dt.date(2024, 5, 3)),  # day first elsewhere
    ("1er mars 2024", "fr", dt.date(2024, 3, 1)),
    ("Échéance : 12 décembre 2025", "fr", dt.date(2025, 12, 12)),
    ("5 de marzo de 2024", "es", dt.date(2024, 3, 5)),
    ("15-dic-2024", "es", dt.date(2024, 12, 15)),
    ("2024-03-15", "es", dt.date(2024, 3, 15)),
])
def test_dates_in_each_language(text, lang, expected):
    assert parse_date(text, lang) == expected


def test_ambiguous_numeric_date_has_both_readings_and_impossible_dates_none():
    assert [d for d, _, _ in date_readings("03/05/2024", "de")] == [dt.date(2024, 5, 3), dt.date(2024, 3, 5)]
    assert parse_date("31.02.2024", "de") is None
    assert parse_date("Total 1.234,56", "de") is None


@pytest.mark.parametrize(("text", "expected"), [
    ("1.234,56 €", "1234.56"), ("$1,234.56", "1234.56"), ("1 234,56 EUR", "1234.56"), ("CHF 1'234.50", "1234.50"),
    ("-12,00", "-12.00"), ("Total 12,5", "12.5"), ("1.500", "1500"), ("1,500", "1500"), ("€ 10.617,75", "10617.75"),
    ("MwSt. 19 %: 190,00", "190.00"), ("TVA (20 %)  1 695,27", "1695.27"),
])
def test_amounts_with_either_decimal_mark(text, expected):
    assert parse_amount(text) == Decimal(expected)


def test_percentages_are_not_amounts():
    assert amounts_in("VAT 20%") == []
    assert parse_amount("IVA 21 %") is None


def test_iban_check_digits():
    assert ids_in("IBAN: DE89 3704 0044 0532 0130 00", "iban") == ["DE89370400440532013000"]
    assert check_iban("GB82WEST12345698765432") is None
    assert "check" in check_iban("DE89370400440532013001")  # one digit off: mod 97 fails
    assert ids_in("IBAN: DE89 3704 0044 0532 0130 01", "iban") == []


@pytest.mark.parametrize("number", ["DE136695976", "FR40303265045", "BE0403019261", "IT00743110157", "ESB12345674"])
def test_valid_vat_numbers(number):
    assert check_vat(number) is None


@pytest.mark.parametrize("number", ["DE136695977", "FR41303265045", "IT00743110158", "DE12345"])
def test_invalid_vat_numbers_say_why(number):
    assert check_vat(number)


def test_vat_number_printed_in_groups():
    assert ids_in("USt-IdNr.: DE 136 695 976", "vat") == ["DE136695976"]
