"""Draw one page of the labelled set: an invoice (three layouts), a receipt or a letter."""

from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

from fields_set import (
    COMPANIES, WORDS, Canvas, Page, date_text, grouped, money, noisy, valid_iban, valid_vat, with_currency,
)

A4 = (1240, 1754)  # 150 DPI


def _truth(page: Page, name: str, value, box) -> None:
    page.fields[name] = {"value": value, "box": box}


def _pair(c: Canvas, page: Page, layout: str, x: float, y: float, label: str, text: str, name: str, value) -> float:
    """A label and its value: on one line, side by side in columns, or the label above. Returns the next y."""
    if layout == "beside":
        label_box = c.text(x, y, f"{label}:", c.bold if c.rng.random() < 0.5 else c.font)
        box = c.text(label_box[2] + c.size * 0.6, y, text)
        _truth(page, name, value, box)
        return y + c.size * 1.7
    if layout == "columns":
        c.text(x, y, label, c.bold)
        _truth(page, name, value, c.text(x + 280, y, text))
        return y + c.size * 1.7
    c.text(x, y, label, c.small)
    _truth(page, name, value, c.text(x, y + c.size * 1.1, text, c.bold))
    return y + c.size * 3


def invoice(n: int) -> Page:
    rng = random.Random(f"invoice-{n}")
    lang = ("en", "de", "fr", "es")[n % 4]
    layout = ("beside", "columns", "above")[(n // 4) % 3] if n < 24 else "right"
    w = WORDS[lang]
    c = Canvas(rng, *A4)
    page = Page(name=f"invoice-{n:02d}-{lang}-{layout}", kind="invoice", lang=lang, image=c.image)
    pick = lambda key: rng.choice(w[key])  # noqa: E731
    vendor, customer = rng.sample(COMPANIES, 2)
    c.text(80, 70, vendor, c.bold)
    c.text(80, 70 + c.size * 1.4, f"{rng.randint(1, 199)} Market Street, {w['city']}", c.small)
    c.text(A4[0] - 80, 70, w["title"], c.bold, anchor="ra")
    day = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 700))
    due = day + dt.timedelta(days=rng.choice([14, 30, 45]))
    number = rng.choice(["INV-", "R", "F", "FAC-", ""]) + f"{rng.randint(2023, 2025)}-{rng.randint(100, 9999):04d}"
    vat_id, iban = valid_vat(w["vat_cc"], rng), valid_iban(w["iban_cc"], rng)
    pairs = [(pick("number"), number, "invoice_number", number),
             (pick("date"), date_text(day, lang, rng), "invoice_date", day.isoformat()),
             (pick("due"), date_text(due, lang, rng), "due_date", due.isoformat()),
             (pick("vat"), vat_id if rng.random() < 0.5 else f"{vat_id[:2]} {vat_id[2:]}", "vendor_vat", vat_id)]
    y = 230
    if layout == "right":  # a block on the right: labels in capitals, right-aligned, values beside them
        for label, text, name, value in pairs:
            c.text(840, y, f"{label.upper()}:", c.small, anchor="ra")
            _truth(page, name, value, c.text(860, y, text))
            y += c.size * 1.6
        y = 230
    elif layout == "above":
        for i, (label, text, name, value) in enumerate(pairs):
            _pair(c, page, layout, 80 + i * 280, y, label, text, name, value)
        y += c.size * 4
    else:
        for label, text, name, value in pairs:
            y = _pair(c, page, layout, 80, y, label, text, name, value)
        y += c.size
    label = pick("customer")
    if layout == "beside":
        label_box = c.text(80, y, f"{label}:")
        _truth(page, "customer_name", customer, c.text(label_box[2] + c.size * 0.6, y, customer))
    else:
        c.text(80, y, label, c.bold)
        _truth(page, "customer_name", customer, c.text(80, y + c.size * 1.3, customer))
        c.text(80, y + c.size * 2.6, f"{rng.randint(1, 99)} High Road, {w['city']}", c.small)
    y = max(y, 230 + c.size * 7) + c.size * 5 if layout == "right" else y + c.size * 5
    _items(c, page, rng, lang, y, numbered=layout == "right")
    foot = A4[1] - 150
    c.text(80, foot, f"{w['city']} · {vendor}", c.small)
    iban_text = grouped(iban) if rng.random() < 0.7 else iban
    _truth(page, "iban", iban, c.text(80 + c.text(80, foot + c.size * 1.3, "IBAN:", c.small)[2] - 80 + 12,
                                      foot + c.size * 1.3, iban_text, c.small))
    noisy(page, rng)
    return page


def _items(c: Canvas, page: Page, rng: random.Random, lang: str, y: float, *, numbered: bool) -> None:
    """The item table; ``numbered``: a first column of positions (no field of the schema) and
    descriptions that wrap onto a second line."""
    w = WORDS[lang]
    heads = rng.choice(w["cols"])
    xs = [160 if numbered else 80, 640, 860, A4[0] - 80]  # numbers right-aligned on their header's right edge
    if numbered:
        c.text(80, y, {"en": "No.", "de": "Pos.", "fr": "N°", "es": "Nº"}[lang], c.bold)
    c.text(xs[0], y, heads[0], c.bold)
    for head, x in zip(heads[1:], xs[1:]):
        c.text(x, y, head, c.bold, anchor="ra")
    c.draw.line((80, y + c.size * 1.4, A4[0] - 80, y + c.size * 1.4), fill=(90, 90, 90), width=2)
    y += c.size * 2
    subtotal = Decimal(0)
    for position, description in enumerate(rng.sample(w["items"].split("|"), rng.randint(2, 5)), start=1):
        qty = rng.randint(1, 12)
        unit = Decimal(rng.randint(500, 95000)) / 100
        amount = qty * unit
        subtotal += amount
        if numbered:
            c.text(80, y, str(position))
        page.items.append({
            "description": {"value": description, "box": c.text(xs[0], y, description)},
            "quantity": {"value": qty, "box": c.text(xs[1], y, str(qty), anchor="ra")},
            "unit_price": {"value": str(unit), "box": c.text(xs[2], y, money(unit, lang), anchor="ra")},
            "amount": {"value": str(amount), "box": c.text(xs[3], y, money(amount, lang), anchor="ra")},
        })
        if numbered and position % 2:
            detail = {"en": "as agreed", "de": "laut Angebot", "fr": "selon devis", "es": "según oferta"}[lang]
            item = page.items[-1]["description"]
            box = c.text(xs[0], y + c.size * 1.2, detail)
            item["value"] += " " + detail
            item["lines"] = [item["box"], box]
            y += c.size * 1.2
        y += c.size * 1.8
    c.draw.line((640, y, A4[0] - 80, y), fill=(90, 90, 90), width=1)
    y += c.size
    tax = (subtotal * w["rate"] / 100).quantize(Decimal("0.01"))
    for name, value in (("subtotal", subtotal), ("tax", tax), ("total", subtotal + tax)):
        label = rng.choice(w[name])
        c.text(640, y, label.upper() if numbered else label, c.bold if name == "total" else c.font)
        _truth(page, name, str(value), c.text(A4[0] - 80, y, with_currency(money(value, lang), lang, rng)
                                              if name == "total" else money(value, lang), anchor="ra"))
        y += c.size * 1.8


def receipt(n: int) -> Page:
    rng = random.Random(f"receipt-{n}")
    lang = ("en", "de", "fr", "es")[n % 4]
    w = WORDS[lang]
    c = Canvas(rng, 640, 1300)
    page = Page(name=f"receipt-{n:02d}-{lang}", kind="receipt", lang=lang, image=c.image)
    c.text(320, 50, rng.choice(COMPANIES), c.bold, anchor="ma")
    c.text(320, 50 + c.size * 1.4, w["city"], c.small, anchor="ma")
    day = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 700))
    y = 180
    label = c.text(40, y, f"{rng.choice(w['date'])}:")
    _truth(page, "date", day.isoformat(), c.text(label[2] + 12, y, date_text(day, lang, rng)))
    c.text(600, y, f"{rng.randint(8, 20)}:{rng.randint(0, 59):02d}", anchor="ra")
    y += c.size * 1.6
    number = str(rng.randint(1000, 99999))
    label = c.text(40, y, f"{w['receipt']}:")
    _truth(page, "receipt_number", number, c.text(label[2] + 12, y, number))
    y += c.size * 2.5
    total = Decimal(0)
    for description in rng.sample(w["items"].split("|"), rng.randint(2, 5)):
        price = Decimal(rng.randint(150, 9000)) / 100
        total += price
        c.text(40, y, description)
        c.text(600, y, money(price, lang), anchor="ra")
        y += c.size * 1.5
    c.draw.line((40, y, 600, y), fill=(60, 60, 60), width=2)
    y += c.size
    tax = (total * w["rate"] / (100 + w["rate"])).quantize(Decimal("0.01"))
    c.text(40, y, w["receipt_total"], c.bold)
    _truth(page, "total", str(total), c.text(600, y, with_currency(money(total, lang), lang, rng), c.bold, anchor="ra"))
    y += c.size * 1.6
    c.text(40, y, rng.choice(w["tax"]), c.small)
    _truth(page, "tax", str(tax), c.text(600, y, money(tax, lang), c.small, anchor="ra"))
    noisy(page, rng)
    return page


def letter(n: int) -> Page:
    rng = random.Random(f"letter-{n}")
    lang = ("en", "de", "fr", "es")[n % 4]
    w = WORDS[lang]
    c = Canvas(rng, *A4)
    page = Page(name=f"letter-{n:02d}-{lang}", kind="letter", lang=lang, image=c.image)
    vendor = rng.choice(COMPANIES)
    c.text(80, 70, vendor, c.bold)
    day = dt.date(2024, 1, 1) + dt.timedelta(days=rng.randint(0, 700))
    box = c.text(A4[0] - 80, 200, f"{w['city']}, {date_text(day, lang, rng)}", anchor="ra")
    _truth(page, "date", day.isoformat(), box)
    c.text(80, 260, rng.choice(COMPANIES))
    c.text(80, 260 + c.size * 1.4, f"{rng.randint(1, 99)} High Road", c.small)
    ref, custno = f"{rng.choice('ABKMT')}{rng.choice('BDLRS')}-{rng.randint(100, 9999)}", str(rng.randint(10**5, 10**7))
    y = 420
    for key, value, name in ((rng.choice(w["ref"]), ref, "reference"), (rng.choice(w["custno"]), custno,
                                                                        "customer_number")):
        label = c.text(80, y, f"{key}:")
        _truth(page, name, value, c.text(label[2] + 14, y, value))
        y += c.size * 1.6
    y += c.size * 2
    for _ in range(rng.randint(4, 7)):
        c.text(80, y, rng.choice(w["items"].split("|")) + " " + " ".join(
            rng.choice(w["items"].split("|")).split()[0].lower() for _ in range(5)))
        y += c.size * 1.5
    iban = valid_iban(w["iban_cc"], rng)
    label = c.text(80, A4[1] - 140, "IBAN", c.small)
    _truth(page, "iban", iban, c.text(label[2] + 14, A4[1] - 140, grouped(iban), c.small))
    noisy(page, rng)
    return page
