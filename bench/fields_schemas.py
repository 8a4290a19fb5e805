"""The fields schemas the labelled set is scored with: what a user would write for these documents.

Their labels name the wordings of the four languages, a few more than the pages print.
"""

MONEY = {"type": "number", "format": "money"}
DATE = {"type": "string", "format": "date"}

INVOICE = {
    "type": "object",
    "properties": {
        "invoice_number": {"type": "string", "x-pattern": r"[A-Z0-9][A-Z0-9\-/]{3,}", "x-labels": [
            "Invoice No", "Invoice #", "Invoice number", "Rechnungsnummer", "Rechnung Nr", "Rechnungs-Nr",
            "N° de facture", "Facture n°", "Numéro de facture", "Número de factura", "Factura n.º", "Nº factura"]},
        "invoice_date": {**DATE, "x-labels": [
            "Invoice date", "Date", "Rechnungsdatum", "Datum", "Date de facture", "Fecha de factura", "Fecha"]},
        "due_date": {**DATE, "x-labels": [
            "Due date", "Payment due", "Fällig am", "Zahlbar bis", "Fälligkeitsdatum", "Date d'échéance", "Échéance",
            "Fecha de vencimiento", "Vencimiento"]},
        "vendor_vat": {"type": "string", "format": "vat", "x-labels": [
            "VAT ID", "VAT No", "VAT number", "USt-IdNr", "USt-ID", "N° TVA", "TVA intracom", "NIF/IVA", "CIF", "NIF"]},
        "customer_name": {"type": "string", "x-labels": [
            "Bill to", "Customer", "Rechnungsempfänger", "Kunde", "Facturé à", "Client", "Facturar a", "Cliente"]},
        "iban": {"type": "string", "format": "iban", "x-labels": ["IBAN"]},
        "subtotal": {**MONEY, "x-sum-of": "line_items.amount", "x-labels": [
            "Subtotal", "Net amount", "Zwischensumme", "Nettobetrag", "Total HT", "Sous-total", "Base imponible"]},
        "tax": {**MONEY, "x-labels": ["VAT", "Tax", "MwSt", "USt", "TVA", "IVA"]},
        "total": {**MONEY, "x-labels": [
            "Total", "Amount due", "Gesamtbetrag", "Rechnungsbetrag", "Total TTC", "Montant total", "Total a pagar",
            "Importe total"]},
        "line_items": {"type": "array", "items": {"type": "object", "properties": {
            "description": {"type": "string", "x-labels": [
                "Description", "Item", "Beschreibung", "Artikel", "Désignation", "Descripción", "Concepto"]},
            "quantity": {"type": "number", "x-labels": ["Qty", "Quantity", "Menge", "Anz", "Qté", "Quantité", "Cant",
                                                        "Cantidad"]},
            "unit_price": {**MONEY, "x-labels": ["Unit price", "Price", "Einzelpreis", "Preis", "Prix unitaire", "P.U",
                                                 "Precio unitario", "Precio"]},
            "amount": {**MONEY, "x-labels": ["Amount", "Total", "Betrag", "Gesamt", "Montant", "Importe"]},
        }}},
    },
}

RECEIPT = {
    "type": "object",
    "properties": {
        "receipt_number": {"type": "string", "x-pattern": r"\d{3,}", "x-labels": [
            "Receipt No", "Beleg-Nr", "Bon-Nr", "Ticket n°", "Ticket nº"]},
        "date": {**DATE, "x-labels": ["Date", "Datum", "Fecha", "Invoice date", "Rechnungsdatum", "Date de facture",
                                      "Fecha de factura"]},
        "total": {**MONEY, "x-labels": ["Total", "Summe", "Gesamt", "Montant total", "Importe total"]},
        "tax": {**MONEY, "x-labels": ["VAT", "Tax", "MwSt", "USt", "TVA", "IVA"]},
    },
}

LETTER = {
    "type": "object",
    "properties": {
        "date": DATE,  # no label: the first date on the page
        "reference": {"type": "string", "x-labels": [
            "Our ref", "Reference", "Unser Zeichen", "Aktenzeichen", "Notre réf", "Référence", "Nuestra ref",
            "Referencia"]},
        "customer_number": {"type": "string", "x-pattern": r"\d{4,}", "x-labels": [
            "Customer No", "Account number", "Kundennummer", "Kunden-Nr", "N° client", "Numéro client",
            "N.º de cliente", "Número de cliente"]},
        "iban": {"type": "string", "format": "iban"},  # no label: any valid IBAN on the page
    },
}

SCHEMAS = {"invoice": INVOICE, "receipt": RECEIPT, "letter": LETTER}
