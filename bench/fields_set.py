"""The labelled set of bench/fields.py: invoices, receipts and letters drawn with PIL, with their truth.

Deterministic: page ``n`` of a kind is drawn from ``random.Random(f"{kind}-{n}")``, so
the same command always draws the same pages. Each page records every labelled
value with the box of its printed text (pixels of the drawn page, before the noise
turns it), for the scorer to find the line a value must cite.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from decimal import Decimal

from PIL import Image, ImageDraw, ImageFilter, ImageFont
from stdnum import iban as stdnum_iban
from stdnum.eu import vat as stdnum_vat

FONTS = "/usr/share/fonts/truetype"
FAMILIES = [  # (regular, bold)
    ("dejavu/DejaVuSans.ttf", "dejavu/DejaVuSans-Bold.ttf"),
    ("dejavu/DejaVuSerif.ttf", "dejavu/DejaVuSerif-Bold.ttf"),
    ("dejavu/DejaVuSansCondensed.ttf", "dejavu/DejaVuSansCondensed-Bold.ttf"),
    ("liberation/LiberationSans-Regular.ttf", "liberation/LiberationSans-Bold.ttf"),
    ("liberation/LiberationSerif-Regular.ttf", "liberation/LiberationSerif-Bold.ttf"),
    ("liberation/LiberationSansNarrow-Regular.ttf", "liberation/LiberationSansNarrow-Bold.ttf"),
]
LANGS = ("en", "de", "fr", "es")
MONTHS = {
    "en": "January February March April May June July August September October November December",
    "de": "Januar Februar März April Mai Juni Juli August September Oktober November Dezember",
    "fr": "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "es": "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
}
# Printed wordings per language; the schemas (bench/fields.py) list them and more.
WORDS = {
    "en": dict(title="INVOICE", number=["Invoice No.", "Invoice #", "Invoice number"], date=["Invoice date", "Date"],
               due=["Due date", "Payment due"], customer=["Bill to", "Customer"], vat=["VAT ID", "VAT No."],
               subtotal=["Subtotal", "Net amount"], tax=["VAT 20%", "Tax (20%)"], total=["Total", "Amount due"],
               cols=[("Description", "Qty", "Unit price", "Amount"), ("Item", "Quantity", "Price", "Total")],
               items="Consulting services|Software licence|Annual support|Training day|Hosting (monthly)|"
                     "Printer paper A4|Office chair|Travel expenses", rate=20, vat_cc="IE", iban_cc="GB",
               receipt="Receipt No.", receipt_total="TOTAL", ref=["Our ref.", "Reference"],
               custno=["Customer No.", "Account number"], city="London"),
    "de": dict(title="RECHNUNG", number=["Rechnungsnummer", "Rechnung Nr."], date=["Rechnungsdatum", "Datum"],
               due=["Fällig am", "Zahlbar bis"], customer=["Rechnungsempfänger", "Kunde"], vat=["USt-IdNr.", "USt-ID"],
               subtotal=["Zwischensumme", "Nettobetrag"], tax=["MwSt. 19%", "USt. 19 %"],
               total=["Gesamtbetrag", "Rechnungsbetrag"],
               cols=[("Beschreibung", "Menge", "Einzelpreis", "Betrag"), ("Artikel", "Anz.", "Preis", "Gesamt")],
               items="Beratungsleistung|Softwarelizenz|Wartungsvertrag|Schulung vor Ort|Druckerpapier|"
                     "Bürostuhl|Reisekosten|Montage", rate=19, vat_cc="DE", iban_cc="DE",
               receipt="Beleg-Nr.", receipt_total="SUMME", ref=["Unser Zeichen", "Aktenzeichen"],
               custno=["Kundennummer", "Kunden-Nr."], city="Berlin"),
    "fr": dict(title="FACTURE", number=["N° de facture", "Facture n°"], date=["Date de facture", "Date"],
               due=["Date d'échéance", "Échéance"], customer=["Facturé à", "Client"],
               vat=["N° TVA", "TVA intracom."], subtotal=["Total HT", "Sous-total"], tax=["TVA 20%", "TVA (20 %)"],
               total=["Total TTC", "Montant total"],
               cols=[("Désignation", "Qté", "Prix unitaire", "Montant"), ("Description", "Quantité", "P.U.", "Total")],
               items="Prestation de conseil|Licence logicielle|Maintenance annuelle|Formation|Papier A4|"
                     "Fauteuil de bureau|Frais de déplacement|Installation", rate=20, vat_cc="FR", iban_cc="FR",
               receipt="Ticket n°", receipt_total="TOTAL", ref=["Notre réf.", "Référence"],
               custno=["N° client", "Numéro client"], city="Paris"),
    "es": dict(title="FACTURA", number=["Número de factura", "Factura n.º"], date=["Fecha de factura", "Fecha"],
               due=["Fecha de vencimiento", "Vencimiento"], customer=["Facturar a", "Cliente"], vat=["NIF/IVA", "CIF"],
               subtotal=["Base imponible", "Subtotal"], tax=["IVA 21%", "IVA (21 %)"],
               total=["Total a pagar", "Importe total"],
               cols=[("Descripción", "Cant.", "Precio unitario", "Importe"),
                     ("Concepto", "Cantidad", "Precio", "Total")],
               items="Servicios de consultoría|Licencia de software|Soporte anual|Formación|Papel A4|"
                     "Silla de oficina|Gastos de viaje|Instalación", rate=21, vat_cc="ES", iban_cc="ES",
               receipt="Ticket nº", receipt_total="TOTAL", ref=["Nuestra ref.", "Referencia"],
               custno=["N.º de cliente", "Número de cliente"], city="Madrid"),
}
COMPANIES = ["Northwind Traders", "Acme Industries", "Globex Services", "Initech Solutions", "Umbrella Logistics",
             "Stark Office Supply", "Wayne Consulting", "Hooli Systems"]


@dataclass
class Page:
    name: str
    kind: str  # invoice, receipt, letter
    lang: str
    image: Image.Image
    fields: dict[str, dict] = field(default_factory=dict)  # name -> {"value", "box"}
    items: list[dict[str, dict]] = field(default_factory=list)
    noise: dict = field(default_factory=dict)


class Canvas:
    def __init__(self, rng: random.Random, width: int, height: int):
        self.rng = rng
        self.image = Image.new("RGB", (width, height), "white")
        self.draw = ImageDraw.Draw(self.image)
        regular, bold = rng.choice(FAMILIES)
        self.size = rng.randint(21, 25)
        self.font = ImageFont.truetype(f"{FONTS}/{regular}", self.size)
        self.bold = ImageFont.truetype(f"{FONTS}/{bold}", self.size)
        self.small = ImageFont.truetype(f"{FONTS}/{regular}", self.size - 4)

    def text(self, x: float, y: float, text: str, font=None, anchor: str = "la") -> list[float]:
        font = font or self.font
        self.draw.text((x, y), text, fill=(20, 20, 20), font=font, anchor=anchor)
        return [round(v, 1) for v in self.draw.textbbox((x, y), text, font=font, anchor=anchor)]


def money(value: Decimal, lang: str) -> str:
    whole, cents = f"{value:,.2f}".split(".")
    if lang == "en":
        return f"{whole}.{cents}"
    return f"{whole.replace(',', ' ' if lang == 'fr' else '.')},{cents}"


def with_currency(text: str, lang: str, rng: random.Random) -> str:
    if lang == "en":
        return rng.choice([f"${text}", f"£{text}", f"{text} USD"])
    return rng.choice([f"{text} €", f"€ {text}", f"{text} EUR"])


def date_text(day, lang: str, rng: random.Random) -> str:
    month = MONTHS[lang].split()[day.month - 1]
    if lang == "en":
        return rng.choice([f"{month} {day.day}, {day.year}", f"{day:%m/%d/%Y}", f"{day.day} {month[:3]} {day.year}"])
    if lang == "de":
        return rng.choice([f"{day:%d.%m.%Y}", f"{day.day}. {month} {day.year}"])
    if lang == "fr":
        return rng.choice([f"{day:%d/%m/%Y}", f"{day.day} {month} {day.year}"])
    return rng.choice([f"{day:%d/%m/%Y}", f"{day.day} de {month} de {day.year}"])


def valid_vat(cc: str, rng: random.Random) -> str:
    while True:
        body = {"DE": lambda: str(rng.randint(10**8, 10**9 - 1)),
                "FR": lambda: f"{rng.randint(10, 99)}{rng.randint(10**8, 10**9 - 1)}",
                "ES": lambda: "B" + str(rng.randint(10**7, 10**8 - 1)),
                "IE": lambda: f"{rng.randint(10**6, 10**7 - 1)}{rng.choice('ABCDEFGHW')}"}[cc]()
        if stdnum_vat.is_valid(cc + body):
            return cc + body


def valid_iban(cc: str, rng: random.Random) -> str:
    """A random IBAN whose check digits, and national check digits where stdnum knows them (ES, FR), hold."""
    while True:
        digits = "".join(str(rng.randint(0, 9)) for _ in range({"DE": 18, "FR": 23, "ES": 20, "GB": 14}[cc]))
        bban = "NWBK" + digits if cc == "GB" else digits
        number = cc + stdnum_iban.calc_check_digits(cc + "00" + bban) + bban
        if stdnum_iban.is_valid(number):
            return number


def grouped(number: str) -> str:
    return " ".join(number[i:i + 4] for i in range(0, len(number), 4))


def noisy(page: Page, rng: random.Random) -> None:
    """Scanned-looking: a slight turn on most pages, a little blur on some, JPEG on some."""
    angle = rng.choice([0.0, 0.0, rng.uniform(-1.5, 1.5), rng.uniform(-0.8, 0.8)])
    image = page.image
    size = list(image.size)
    if angle:
        image = image.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor="white")
    blur = rng.random() < 0.4
    if blur:
        image = image.filter(ImageFilter.GaussianBlur(0.7))
    page.image = image
    page.noise = {"angle": angle, "size": size, "blur": blur, "jpeg": rng.choice([None, None, 55, 70])}
