"""Fields from a real engine result: an invoice page drawn here, read by the engine with its models,
then through the rules backend and ``python -m ocr_engine fields``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image, ImageDraw, ImageFont

from ocr_engine.engine import assemble_document
from ocr_engine.fields import extract_fields
from ocr_engine.schema import to_dict
from tests.ocr_engine.fields.hand_invoice import SCHEMA

REPO = Path(__file__).resolve().parents[3]
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
TRUTH = {"invoice_number": "R2024-0815", "invoice_date": "2024-03-15", "customer": "Globex Services",
         "subtotal": 1312.5, "iban": "DE89370400440532013000"}
# What the cited line must print (spaces aside) for each value.
PRINTED = {"invoice_number": "R2024-0815", "invoice_date": "15.März2024", "customer": "GlobexServices",
           "subtotal": "1.312,50", "iban": "DE89370400440532013000"}


def invoice_image() -> Image.Image:
    """A German invoice: number beside its label, date in a column, customer under its label, two items."""
    image = Image.new("RGB", (1240, 1000), "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, 24)
    for xy, text in [
        ((80, 60), "Northwind Traders"), ((900, 60), "RECHNUNG"),
        ((80, 160), "Invoice No: R2024-0815"), ((80, 210), "Date"), ((400, 210), "15. März 2024"),
        ((80, 280), "Bill to"), ((80, 315), "Globex Services"),
        ((80, 420), "Description"), ((620, 420), "Qty"), ((1000, 420), "Amount"),
        ((80, 470), "Softwarelizenz"), ((630, 470), "3"), ((1000, 470), "1.012,50"),
        ((80, 520), "Schulung"), ((630, 520), "1"), ((1015, 520), "300,00"),
        ((700, 600), "Subtotal"), ((1000, 600), "1.312,50"),
        ((80, 850), "IBAN DE89 3704 0044 0532 0130 00"),
    ]:
        draw.text(xy, text, fill="black", font=font)
    return image


@pytest.fixture(scope="module")
def invoice_result(ocr_engine):
    out = ocr_engine.process_image(invoice_image(), page_number=1)
    return assemble_document(pages=[out.page], engine=ocr_engine.info)


@pytest.mark.models
def test_rules_on_a_real_engine_result_cite_the_lines_that_print_each_value(invoice_result):
    fields = extract_fields(invoice_result, SCHEMA, lang="de").fields
    lines = {line.id: line.text for page in invoice_result.pages for line in page.lines}
    for name, value in TRUTH.items():
        field = fields[name]
        assert (field.value, field.grounded, field.reason) == (value, True, None), name
        assert 0.5 < field.confidence <= 1
        assert len(field.evidence) == 1
        assert PRINTED[name] in lines[field.evidence[0].line_id].replace(" ", ""), name
    assert [(row["description"].value, row["quantity"].value, row["amount"].value)
            for row in fields["line_items"]] == [("Softwarelizenz", 3, 1012.5), ("Schulung", 1, 300.0)]


@pytest.mark.models
def test_cli_reads_a_file_and_prints_the_fields(tmp_path, models_dir):
    image, schema = tmp_path / "invoice.png", tmp_path / "invoice.schema.json"
    invoice_image().save(image)
    schema.write_text(json.dumps(SCHEMA))
    proc = subprocess.run([sys.executable, "-m", "ocr_engine", "fields", str(image), "--schema", str(schema),
                           "--lang", "de", "--pipeline", "ocr", "--models-dir", str(models_dir), "--quiet"],
                          cwd=REPO, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    answer = json.loads(proc.stdout)
    assert answer["backend"] == "rules"
    assert {name: answer["fields"][name]["value"] for name in TRUTH} == TRUTH
    evidence = answer["fields"]["invoice_number"]["evidence"][0]
    assert evidence["page"] == 1 and evidence["line_id"].startswith("p1-l") and len(evidence["polygon"]) == 4


def run_fields(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ocr_engine", "fields", *args], cwd=REPO, capture_output=True,
                          timeout=60)


def test_cli_takes_a_stored_result_without_ocr(tmp_path):
    from tests.ocr_engine.fields.hand_invoice import invoice

    result, schema = tmp_path / "result.json", tmp_path / "schema.json"
    result.write_text(json.dumps(to_dict(invoice())))
    schema.write_text(json.dumps(SCHEMA))
    proc = run_fields("--result", str(result), "--schema", str(schema), "--lang", "de")
    assert proc.returncode == 0, proc.stderr.decode()
    fields = json.loads(proc.stdout)["fields"]
    assert fields["invoice_date"] == {"value": "2024-03-05", "confidence": 0.9, "grounded": True, "reason": None,
                                      "evidence": [{"page": 1, "line_id": "p1-l3",
                                                    "polygon": [[400, 160], [560, 160], [560, 190], [400, 190]]}]}
    assert [row["amount"]["value"] for row in fields["line_items"]] == [10.0, 250.0]


@pytest.mark.parametrize(("schema_text", "result_text", "code"), [
    ('{"type": "object", "properties": {"a": {"type": "boolean"}}}', None, "invalid_fields_schema"),
    ("not json", None, "invalid_fields_schema"),
    (None, '{"pages": []}', "invalid_result"),
])
def test_cli_bad_schema_or_result_exits_2_with_its_code(tmp_path, schema_text, result_text, code):
    from tests.ocr_engine.fields.hand_invoice import invoice

    result, schema = tmp_path / "result.json", tmp_path / "schema.json"
    result.write_text(result_text or json.dumps(to_dict(invoice())))
    schema.write_text(schema_text or json.dumps(SCHEMA))
    proc = run_fields("--result", str(result), "--schema", str(schema))
    assert proc.returncode == 2
    assert f"error [{code}]".encode() in proc.stderr and proc.stdout == b""


def test_cli_wants_a_file_or_a_result():
    proc = run_fields("--schema", "x.json")
    assert proc.returncode == 2 and b"either FILE or --result" in proc.stderr
