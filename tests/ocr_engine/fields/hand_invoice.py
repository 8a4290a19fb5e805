"""An invoice page's engine result built by hand (no models): labels beside, above and in a table."""

from __future__ import annotations

from ocr_engine.schema import DocumentResult, Page
from tests.ocr_engine.hand_results import ENGINE, box, line

SCHEMA = {
    "type": "object",
    "properties": {
        "invoice_number": {"type": "string", "x-labels": ["Invoice No"], "x-pattern": r"[A-Z0-9][A-Z0-9\-]{3,}"},
        "invoice_date": {"type": "string", "format": "date", "x-labels": ["Date"]},
        "customer": {"type": "string", "x-labels": ["Bill to"]},
        "subtotal": {"type": "number", "format": "money", "x-labels": ["Subtotal"], "x-sum-of": "line_items.amount"},
        "iban": {"type": "string", "format": "iban", "x-labels": ["IBAN"]},
        "line_items": {"type": "array", "items": {"type": "object", "properties": {
            "description": {"type": "string", "x-labels": ["Description"]},
            "quantity": {"type": "number", "x-labels": ["Qty"]},
            "amount": {"type": "number", "format": "money", "x-labels": ["Amount"]},
        }}},
    },
}


def invoice(subtotal: str = "260,00", iban: str = "DE89 3704 0044 0532 0130 00") -> DocumentResult:
    texts = [
        ("Invoice No: INV-2024-001", box(100, 100, 500, 130)),  # l1: label and value on one line
        ("Date", box(100, 160, 200, 190)), ("05.03.2024", box(400, 160, 560, 190)),  # l2, l3: side by side
        ("Bill to", box(100, 220, 220, 250)), ("Acme Industries", box(100, 260, 380, 290)),  # l4, l5: above
        ("Description", box(100, 340, 300, 370)), ("Qty", box(600, 340, 650, 370)),  # l6-l8: table header
        ("Amount", box(900, 340, 1040, 370)),
        ("Printer paper", box(100, 390, 320, 420)), ("2", box(630, 390, 650, 420)),  # l9-l11
        ("10,00", box(960, 390, 1040, 420)),
        ("Office chair", box(100, 440, 300, 470)), ("1", box(630, 440, 650, 470)),  # l12-l14
        ("250,00", box(940, 440, 1040, 470)),
        ("Subtotal", box(700, 500, 850, 530)), (subtotal, box(940, 500, 1040, 530)),  # l15, l16
        (f"IBAN {iban}", box(100, 600, 700, 630)),  # l17
    ]
    lines = [line(1, n, 1, text, bbox, confidence=0.9) for n, (text, bbox) in enumerate(texts, start=1)]
    page = Page(page_number=1, width=1200, height=800, scale=1.0, dpi=None, lines=lines)
    return DocumentResult(engine=ENGINE, pages=[page], text="", markdown="")
