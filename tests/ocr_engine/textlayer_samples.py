"""PDFs for the text-layer tests, built with reportlab (and one written by hand for a broken ToUnicode map)."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw, ImageFont

from tests.ocr_engine import bad_files, samples, scans

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
TEXT_PAGES = (
    ("Quarterly report for the northern region", "Sales grew by twelve percent over the last quarter."),
    ("Maintenance schedule for the bridge", "Inspectors check every cable and bolt twice a year."),
    ("Notes from the planning meeting", "The committee approved the new budget for next spring."),
)
SCANNED_TITLE = "A Short Note on Bridges"
IMAGE_WORDS = ("Harbour", "lighthouse", "keeper")  # drawn into the picture on the mixed page
IMAGE_TEXT = "Harbour lighthouse keeper logbook"
HIDDEN_TEXT = "Zebra quantum xylophone jukebox"  # the invisible layer's wrong text


def text_image(lines: tuple[str, ...], size: tuple[int, int] = (900, 220), font_px: int = 44) -> Image.Image:
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(FONT, font_px)
    for i, line in enumerate(lines):
        draw.text((20, 20 + i * int(font_px * 1.6)), line, fill="black", font=font)
    return image


def _draw_image(canvas, image: Image.Image, x: float, y: float, width: float) -> None:
    from reportlab.lib.utils import ImageReader

    canvas.drawImage(ImageReader(image), x, y, width=width, height=width * image.height / image.width)


def _text_page(canvas, title: str, body: str) -> None:
    canvas.setFont("Helvetica-Bold", 18)
    canvas.drawString(72, 760, title)
    canvas.setFont("Helvetica", 11)
    canvas.drawString(72, 730, body)


def _pdf(draw) -> bytes:
    """An A4 PDF that ``draw(canvas)`` fills (ending each page with ``showPage``)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas as pdf_canvas

    out = io.BytesIO()
    canvas = pdf_canvas.Canvas(out, pagesize=A4)
    draw(canvas)
    canvas.save()
    return out.getvalue()


def text_page_pdf() -> bytes:
    """One text page (the first of ``TEXT_PAGES``)."""
    return _pdf(lambda canvas: (_text_page(canvas, *TEXT_PAGES[0]), canvas.showPage()))


def glyph_flood_pdf(glyphs: int) -> bytes:
    """One page drawing ``glyphs`` characters in 1 pt type, rows of 200."""
    def draw(canvas):
        canvas.setFont("Helvetica", 1)
        for row in range(glyphs // 200):
            canvas.drawString(10, 830 - row * 0.6, "x" * 200)
        canvas.showPage()
    return _pdf(draw)


def mixed_pdf() -> bytes:
    """Three text pages, one scanned page (an image of text) and a text page holding an image of text."""
    return _pdf(_draw_mixed)


def _draw_mixed(canvas) -> None:
    from reportlab.lib.pagesizes import A4

    for title, body in TEXT_PAGES:
        _text_page(canvas, title, body)
        canvas.showPage()
    scan = scans.scanned(samples.text_page(title=SCANNED_TITLE).image, angle=0.3, noise=6)
    _draw_image(canvas, scan, 0, 0, A4[0])
    canvas.showPage()
    _text_page(canvas, "Harbour operations", "The picture below was pasted from the old logbook.")
    _draw_image(canvas, text_image((IMAGE_TEXT,)), 72, 500, 420)
    canvas.showPage()


def invisible_layer_pdf() -> bytes:
    """An image of text under an invisible (render mode 3) text layer that says something else."""
    return _pdf(_draw_invisible)


def _draw_invisible(canvas) -> None:
    _draw_image(canvas, text_image((IMAGE_TEXT,)), 72, 600, 450)
    text = canvas.beginText(80, 640)
    text.setTextRenderMode(3)
    text.setFont("Helvetica", 20)
    text.textLine(HIDDEN_TEXT)
    canvas.drawText(text)
    canvas.showPage()


def blank_text_pdf() -> bytes:
    """Text drawn in white on white paper: a text layer with no ink under it."""

    def draw(canvas) -> None:
        canvas.setFillColorRGB(1, 1, 1)
        _text_page(canvas, *TEXT_PAGES[0])
        canvas.showPage()

    return _pdf(draw)


def garbage_tounicode_pdf() -> bytes:
    """Visible Helvetica text whose ToUnicode map sends every code to the private-use area."""
    content = b"BT /F1 24 Tf 72 700 Td (Harbour lighthouse keeper logbook) Tj ET"
    cmap = (b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Broken def "
            b"1 begincodespacerange <00> <FF> endcodespacerange "
            b"1 beginbfrange <20> <7E> <E020> endbfrange endcmap "
            b"CMapName currentdict /CMap defineresource pop end end")
    return bad_files.pdf_from_objects([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(cmap), cmap),
    ])

