"""The rules backend on a hand-built result: beside, right of and under labels, and a table of items."""

from __future__ import annotations

from ocr_engine.fields import extract_fields
from tests.ocr_engine.fields.hand_invoice import SCHEMA, invoice
from tests.ocr_engine.hand_results import line


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


def test_headers_that_ocr_joined_into_one_line_still_make_their_columns():
    document = invoice()
    page = document.pages[0]
    qty, amount = page.lines[6], page.lines[7]  # "Qty" and "Amount", read as one line
    qty.text, qty.bbox = "Qty Amount", [600, 340, 1040, 370]
    page.lines.remove(amount)
    items = extract_fields(document, SCHEMA, lang="de").fields["line_items"]
    assert [(row["quantity"].value, row["amount"].value) for row in items] == [(2, 10.0), (1, 250.0)]


def test_a_header_of_no_property_keeps_its_column_out_of_the_items():
    document = invoice()
    page = document.pages[0]
    for n, (text, bbox) in enumerate([("Pos.", [20, 340, 70, 370]), ("1", [30, 390, 45, 420]),
                                      ("2", [30, 440, 45, 470])], start=18):
        page.lines.append(line(1, n, 1, text, bbox))
    items = extract_fields(document, SCHEMA, lang="de").fields["line_items"]
    assert [row["description"].value for row in items] == ["Printer paper", "Office chair"]


def test_labels_match_whatever_the_case_accents_and_punctuation_and_a_label_run_into_digits():
    from ocr_engine.fields.layout import match_label

    assert match_label(["Invoice No", "Invoice"], "INVOICE NO.: 17") == (2, ".: 17")
    assert match_label(["Date d'échéance"], "DATE D'ECHEANCE 12/03/2024") == (3, " 12/03/2024")
    assert match_label(["IVA"], "IVA21% 19,00") == (1, "21% 19,00")  # OCR lost the space
    assert match_label(["Total"], "Subtotal 12,00") is None
    assert match_label(["Date"], "Datum 12.03.2024") is None


def test_items_of_a_long_invoice_continue_under_the_header_repeated_on_the_next_page():
    from ocr_engine.schema import Page

    document = invoice()
    texts = [("Description", [100, 40, 300, 70]), ("Qty", [600, 40, 650, 70]), ("Amount", [900, 40, 1040, 70]),
             ("Delivery", [100, 90, 250, 120]), ("1", [630, 90, 650, 120]), ("15,00", [960, 90, 1040, 120])]
    document.pages.append(Page(page_number=2, width=1200, height=800, scale=1.0, dpi=None,
                               lines=[line(2, n, 1, t, b) for n, (t, b) in enumerate(texts, start=1)]))
    items = extract_fields(document, SCHEMA, lang="de").fields["line_items"]
    assert [row["description"].value for row in items] == ["Printer paper", "Office chair", "Delivery"]
    assert [(e.page, e.line_id) for e in items[2]["amount"].evidence] == [(2, "p2-l6")]
