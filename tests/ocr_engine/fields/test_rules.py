"""The rules backend on a hand-built result: beside, right of and under labels, and a table of items."""

from __future__ import annotations

from ocr_engine.fields import extract_fields
from tests.ocr_engine.fields.hand_invoice import SCHEMA, invoice


def cited(field) -> list[str]:
    return [e.line_id for e in field.evidence]


def test_each_value_beside_or_under_its_label_cites_its_line():
    fields = extract_fields(invoice(), SCHEMA, lang="de").fields
    expected = {"invoice_number": ("INV-2024-001", ["p1-l1"]), "invoice_date": ("2024-03-05", ["p1-l3"]),
                "customer": ("Acme Industries", ["p1-l5"]), "subtotal": (260.0, ["p1-l16"]),
                "iban": ("DE89370400440532013000", ["p1-l17"])}
    for name, (value, lines) in expected.items():
        assert (fields[name].value, cited(fields[name]), fields[name].grounded) == (value, lines, True), name


def test_line_items_come_from_the_rows_under_the_header():
    items = extract_fields(invoice(), SCHEMA, lang="de").fields["line_items"]
    assert [{k: v.value for k, v in row.items()} for row in items] == [
        {"description": "Printer paper", "quantity": 2, "amount": 10.0},
        {"description": "Office chair", "quantity": 1, "amount": 250.0},
    ]
    assert [cited(row["amount"]) for row in items] == [["p1-l11"], ["p1-l14"]]
    assert all(v.grounded for row in items for v in row.values())


def test_a_field_whose_label_is_not_printed_is_not_found_rather_than_guessed():
    schema = {"type": "object", "properties": {
        "due_date": {"type": "string", "format": "date", "x-labels": ["Due date"]}}}
    field = extract_fields(invoice(), schema, lang="de").fields["due_date"]
    assert (field.value, field.grounded, field.reason) == (None, False, "not_found")
