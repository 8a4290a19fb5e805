"""The grounding rule: a value stands only where its cited lines print it; nothing failing is dropped."""

from __future__ import annotations

import pytest

from ocr_engine.fields import InvalidFieldsSchema, extract_fields, parse_schema
from ocr_engine.fields.extract import verified
from ocr_engine.fields.values import Proposal
from tests.ocr_engine.fields.hand_invoice import SCHEMA, invoice


def check(proposals: dict, document=None) -> dict:
    fields = verified(document or invoice(), parse_schema(SCHEMA), proposals, lang="de")
    return {name: value for name, value in fields.items()}


def test_a_value_printed_in_its_cited_line_is_grounded_after_normalising():
    fields = check({
        "invoice_number": Proposal("inv-2024-001", ("p1-l1",)),  # case
        "invoice_date": Proposal("2024-03-05", ("p1-l3",)),  # printed 05.03.2024
        "subtotal": Proposal("260.00", ("p1-l16",)),  # printed 260,00
        "iban": Proposal("DE89370400440532013000", ("p1-l17",)),  # printed in groups of four
    })
    for name in ("invoice_number", "invoice_date", "subtotal", "iban"):
        assert fields[name].grounded and fields[name].reason is None, name
        assert fields[name].confidence == pytest.approx(0.9)
    assert fields["invoice_date"].value == "2024-03-05" and fields["subtotal"].value == 260.0
    assert [(e.page, e.line_id) for e in fields["subtotal"].evidence] == [(1, "p1-l16")]


def test_a_made_up_value_is_kept_ungrounded_with_the_reason():
    fields = check({"invoice_number": Proposal("INV-2024-999", ("p1-l1",)),
                    "invoice_date": Proposal("2024-03-06", ("p1-l3",)),
                    "customer": Proposal("Globex", ("p1-l5",))})
    for name, value in (("invoice_number", "INV-2024-999"), ("invoice_date", "2024-03-06"), ("customer", "Globex")):
        assert fields[name].value == value and not fields[name].grounded and fields[name].confidence == 0
        assert fields[name].reason == "not_in_cited_lines"
        assert fields[name].evidence  # still points at what it cited, for a reviewer


@pytest.mark.parametrize(("proposal", "reason"), [
    (Proposal("INV-2024-001", ()), "no_evidence"),
    (Proposal("INV-2024-001", ("p1-l99",)), "unknown_line: p1-l99"),
    (None, "not_found"),
])
def test_citations_that_do_not_hold(proposal, reason):
    field = check({"invoice_number": proposal})["invoice_number"]
    assert not field.grounded and field.reason == reason


def test_confidence_is_the_cited_lines_ocr_confidence_times_the_samples_agreement():
    field = check({"invoice_date": Proposal("2024-03-05", ("p1-l3",), agreement=0.5)})["invoice_date"]
    assert field.grounded and field.confidence == pytest.approx(0.45)


def test_a_value_not_of_its_kind():
    field = check({"invoice_date": Proposal("next Tuesday", ("p1-l3",))})["invoice_date"]
    assert not field.grounded and field.reason.startswith("not_a_date")


def test_check_digits_must_hold_even_when_the_line_prints_the_value():
    document = invoice(iban="DE89 3704 0044 0532 0130 01")
    field = check({"iban": Proposal("DE89370400440532013001", ("p1-l17",))}, document)["iban"]
    assert not field.grounded and field.reason.startswith("check_digits")


def test_line_items_that_do_not_add_up_to_the_total_are_flagged():
    good = extract_fields(invoice(), SCHEMA, lang="de").fields["subtotal"]
    assert good.grounded and good.value == 260.0
    bad = extract_fields(invoice(subtotal="270,00"), SCHEMA, lang="de").fields["subtotal"]
    assert bad.value == 270.0 and not bad.grounded
    assert bad.reason == "line_items_sum: the 2 line_items.amount add up to 260, not 270"


def test_a_pattern_that_backtracks_for_ever_is_stopped_and_named():
    document = invoice()
    document.pages[0].lines[0].text = "a" * 40 + "b"
    schema = {"type": "object", "properties": {"n": {"type": "string", "x-pattern": "(a|aa)+$"}}}
    with pytest.raises(InvalidFieldsSchema, match="n: x-pattern took longer than 0.1 s") as caught:
        extract_fields(document, schema, lang="en")
    assert caught.value.code == "invalid_fields_schema"


@pytest.mark.parametrize(("schema", "message"), [
    ({"type": "array"}, "object with at least one property"),
    ({"type": "object", "properties": {"a": {"type": "boolean"}}}, "a: unsupported type"),
    ({"type": "object", "properties": {"a": {"type": "string", "x-pattern": "("}}}, "not a regular expression"),
    ({"type": "object", "properties": {"a": {"type": "string", "x-pattern": "a" * 501}}}, "at most 500 characters"),
    ({"type": "object", "properties": {"t": {"type": "number", "x-sum-of": "items.amount"}}}, "x-sum-of names no"),
    ({"type": "object", "properties": {"a": {"type": "string", "x-labels": "Total"}}}, "x-labels must be a list"),
])
def test_schema_mistakes_are_named(schema, message):
    with pytest.raises(InvalidFieldsSchema, match=message) as caught:
        parse_schema(schema)
    assert caught.value.code == "invalid_fields_schema"


def test_an_enum_value_is_one_of_the_enum_and_printed_in_its_line():
    schema = {"type": "object", "properties": {"currency": {"type": "string", "enum": ["EUR", "USD"]}}}
    document = invoice(subtotal="260,00 EUR")
    specs = parse_schema(schema)
    fields = verified(document, specs, {"currency": Proposal("eur", ("p1-l16",))}, lang="de")
    assert (fields["currency"].value, fields["currency"].grounded) == ("EUR", True)
    fields = verified(document, specs, {"currency": Proposal("GBP", ("p1-l16",))}, lang="de")
    assert not fields["currency"].grounded and fields["currency"].reason == "not_a_enum: 'GBP'"
    found = extract_fields(document, {**schema, "properties": {"currency": {
        **schema["properties"]["currency"], "x-labels": ["Subtotal"]}}}, lang="de").fields["currency"]
    assert (found.value, [e.line_id for e in found.evidence]) == ("EUR", ["p1-l16"])
