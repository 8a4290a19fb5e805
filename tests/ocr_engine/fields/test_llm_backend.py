"""The ``llm`` backend's plain parts: the answer's schema, the numbered lines, answers into verified proposals.

The chat itself is tested against a real llama.cpp server in tests/jobs/test_llm.py; here
answers are written by hand, as test_verify writes proposals.
"""

from __future__ import annotations

import jsonschema
import pytest

from ocr_engine.fields import parse_schema
from ocr_engine.fields.llm import answer_schema, extract_fields_llm, messages, propose
from tests.ocr_engine.fields.hand_invoice import SCHEMA, invoice


def cell(value, *lines):
    return {"value": value, "lines": list(lines)}


ANSWER = {
    "invoice_number": cell("INV-2024-001", "p1-l1"), "invoice_date": cell("2024-03-05", "p1-l3"),
    "customer": cell("Acme Industries", "p1-l5"), "subtotal": cell(260.0, "p1-l16"),
    "iban": cell(None), "line_items": [
        {"description": cell("Printer paper", "p1-l9"), "quantity": cell(2, "p1-l10"), "amount": cell(10, "p1-l11")},
        {"description": cell("Office chair", "p1-l12"), "quantity": cell(1, "p1-l13"),
         "amount": cell(250, "p1-l14")}],
}


def test_the_answer_schema_asks_every_field_with_its_cited_lines_and_nothing_else():
    schema = answer_schema(parse_schema(SCHEMA), max_rows=3)
    jsonschema.validate(ANSWER, schema)
    assert schema["required"] == list(SCHEMA["properties"]) and schema["additionalProperties"] is False
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**ANSWER, "invoice_number": {"value": "INV-2024-001"}}, schema)  # no lines
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**ANSWER, "subtotal": cell("a lot", "p1-l16")}, schema)  # money is a number
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**ANSWER, "notes": cell("x")}, schema)
    with pytest.raises(jsonschema.ValidationError):  # more rows than the document has lines
        jsonschema.validate({**ANSWER, "line_items": ANSWER["line_items"] * 2}, schema)


def test_the_model_reads_each_line_with_its_id_in_reading_order():
    document = invoice()
    document.pages[0].lines.reverse()
    [system, user] = messages(document, parse_schema(SCHEMA))
    assert system["role"] == "system" and "ids of the lines" in system["content"]
    body = user["content"].split("Document lines:\n", 1)[1].splitlines()
    assert body[0] == "p1-l1: Invoice No: INV-2024-001" and body[-1].startswith("p1-l17: IBAN DE89")
    assert "- invoice_date: a date, as YYYY-MM-DD (printed after a label such as 'Date')" in user["content"]


def test_answers_become_proposals_that_the_same_verifier_checks():
    made_up = {**ANSWER, "customer": cell("Globex Corporation", "p1-l5"), "invoice_number": cell("INV-1", "p1-l99")}
    extraction = extract_fields_llm(invoice(), SCHEMA, lang="de", chat=lambda m, s, samples: [made_up])
    fields = extraction.as_dict()
    assert extraction.backend == "llm"
    assert fields["invoice_date"]["grounded"] and fields["invoice_date"]["evidence"][0]["line_id"] == "p1-l3"
    assert fields["subtotal"]["grounded"] and fields["line_items"][1]["amount"]["value"] == 250.0
    customer = fields["customer"]
    assert (customer["value"], customer["grounded"], customer["reason"], customer["confidence"]) == (
        "Globex Corporation", False, "not_in_cited_lines", 0)
    assert fields["invoice_number"]["reason"] == "unknown_line: p1-l99"
    assert fields["iban"]["reason"] == "not_found"


def test_two_samples_agreeing_keep_confidence_and_disagreeing_halve_it():
    other = {**ANSWER, "invoice_date": cell("2024-05-03", "p1-l3"), "subtotal": cell("260.00", "p1-l16"),
             "line_items": ANSWER["line_items"][:1]}
    proposals = propose(parse_schema(SCHEMA), [ANSWER, other])
    assert proposals["subtotal"].agreement == 1  # 260.0 and "260.00" are one amount
    assert proposals["invoice_date"].agreement == 0.5
    assert proposals["line_items"][0]["amount"].agreement == 1
    assert proposals["line_items"][1]["amount"].agreement == 0.5  # the second sample saw one item
    assert proposals["iban"] is None


def test_a_sample_that_gave_no_valid_answer_counts_as_disagreeing():
    proposals = propose(parse_schema(SCHEMA), [ANSWER], samples=2)
    assert proposals["invoice_date"].agreement == 0.5 and proposals["line_items"][0]["amount"].agreement == 0.5
