"""Sample documents for engine and platform tests, drawn with Pillow and DejaVu fonts.

Plain functions, no pytest: platform tests import them too
(``from tests.ocr_engine import samples``). Every page comes with the text drawn
on it, line by line in reading order, and each line's pixel box, so tests can
compute a character error rate (``ocr_engine.metrics.cer``) and check geometry. Bad
files are in ``bad_files``, scans and real pages in ``scans``.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from itertools import cycle, islice
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")  # Debian package fonts-dejavu-core
A4_INCHES = (8.27, 11.69)

Box = tuple[int, int, int, int]  # x0, y0, x1, y1 in pixels


@dataclass
class SamplePage:
    image: Image.Image
    lines: list[str]  # every drawn line in reading order; table cells one per line, row by row
    boxes: list[Box]  # the pixel box of each line, same order
    dpi: int
    title: str | None = None
    table: list[list[str]] | None = None  # rows of cell texts
    columns: list[list[str]] | None = None  # lines of each column, left to right

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


@dataclass
class SampleDocument:
    data: bytes
    media_type: str
    pages: list[SamplePage] = field(default_factory=list)  # expected content, page 1 first


class _Sheet:
    """A white page measured in points (1/72 in) that records every line it draws."""

    def __init__(self, width_in: float, height_in: float, dpi: int, background: int = 255):
        self.dpi, self.k = dpi, dpi / 72.0
        self.image = Image.new("RGB", (round(width_in * dpi), round(height_in * dpi)), (background,) * 3)
        self.draw = ImageDraw.Draw(self.image)
        self.lines: list[str] = []
        self.boxes: list[Box] = []

    def font(self, name: str, size_pt: float) -> ImageFont.FreeTypeFont:
        # Basic layout: no "fi"/"fl" ligature glyphs, which a recogniser may read
        # as one character, and the same pixels whether or not libraqm is installed.
        return ImageFont.truetype(str(FONT_DIR / name), round(size_pt * self.k),
                                  layout_engine=ImageFont.Layout.BASIC)

    def line(self, x_pt: float, y_pt: float, text: str, font: ImageFont.FreeTypeFont) -> None:
        xy = (round(x_pt * self.k), round(y_pt * self.k))
        self.draw.text(xy, text, font=font, fill="black")
        self.lines.append(text)
        self.boxes.append(tuple(self.draw.textbbox(xy, text, font=font)))

    def wrap(self, text: str, font: ImageFont.FreeTypeFont, width_pt: float) -> list[str]:
        lines = [""]
        for word in text.split():
            candidate = f"{lines[-1]} {word}".strip()
            if lines[-1] and font.getlength(candidate) > width_pt * self.k:
                lines.append(word)
            else:
                lines[-1] = candidate
        return lines

    def paragraph(self, x_pt: float, y_pt: float, text: str, font: ImageFont.FreeTypeFont,
                  width_pt: float, leading_pt: float) -> float:
        """Draw ``text`` wrapped to ``width_pt``; return the y below its last line."""
        for line in self.wrap(text, font, width_pt):
            self.line(x_pt, y_pt, line, font)
            y_pt += leading_pt
        return y_pt

    def page(self, **expected) -> SamplePage:
        return SamplePage(self.image, self.lines, self.boxes, self.dpi, **expected)


REPORT_TITLE = "Quarterly Report on Regional Sales"
REPORT_PARAGRAPHS = (
    "The first quarter showed steady growth across all regions. Revenue increased by twelve percent "
    "compared with the same period last year, driven mainly by strong demand for the new product line "
    "and improved distribution in the north.",
    "Operating costs remained under control despite higher shipping prices. The team expects the second "
    "quarter to continue this trend, although currency movements and supplier delays could reduce margins "
    "in the southern markets.",
)
REPORT_TABLE = [
    ["Region", "Revenue", "Growth"],
    ["North", "1,250", "15%"],
    ["South", "980", "8%"],
    ["East", "1,100", "11%"],
]


def report_page(dpi: int = 150) -> SamplePage:
    """A4: a title, two paragraphs and a ruled 4x3 table (the page of the offline-model notes §5)."""
    s = _Sheet(*A4_INCHES, dpi)
    s.line(72, 72, REPORT_TITLE, s.font("DejaVuSans-Bold.ttf", 20))
    body = s.font("DejaVuSerif.ttf", 11)
    y = 120.0
    for text in REPORT_PARAGRAPHS:
        y = s.paragraph(72, y, text, body, width_pt=451, leading_pt=16) + 10
    cell_font, cell_w, cell_h = s.font("DejaVuSans.ttf", 11), 130, 24
    top = y + 20
    for r, row in enumerate(REPORT_TABLE):
        for c, cell in enumerate(row):
            x0, y0 = 72 + c * cell_w, top + r * cell_h
            box = [round(v * s.k) for v in (x0, y0, x0 + cell_w, y0 + cell_h)]
            s.draw.rectangle(box, outline="black", width=max(1, round(s.k)))
            s.line(x0 + 8, y0 + 6, cell, cell_font)
    return s.page(title=REPORT_TITLE, table=[row[:] for row in REPORT_TABLE])


TWO_COLUMN_TITLE = "Notes from the Orchard and the Valley"
LEFT_COLUMN = (
    "Apples ripen slowly in the cool autumn air of the orchard. Each apple tree is pruned in late "
    "winter so that sunlight reaches the fruit on every branch.",
    "The red apples are picked by hand and stored in wooden crates. Sweet apple juice is pressed "
    "from the smallest apples that cannot be sold at the market.",
)
RIGHT_COLUMN = (
    "Rivers carry melted snow from the mountains down to the sea. A wide river moves slowly and "
    "leaves fine sand along its banks after every spring flood.",
    "Fishermen follow the river to the deep pools below the old bridge. The river water is cold "
    "and clear until the heavy rains of early summer arrive.",
)


def two_column_page(dpi: int = 150) -> SamplePage:
    """A title over two columns; every left sentence is about apples, every right one about rivers."""
    s = _Sheet(*A4_INCHES, dpi)
    s.line(72, 72, TWO_COLUMN_TITLE, s.font("DejaVuSans-Bold.ttf", 18))
    body, columns = s.font("DejaVuSerif.ttf", 11), []
    for x, paragraphs in ((72, LEFT_COLUMN), (315, RIGHT_COLUMN)):
        first = len(s.lines)
        y = 120.0
        for text in paragraphs:
            y = s.paragraph(x, y, text, body, width_pt=208, leading_pt=16) + 12
        columns.append(s.lines[first:])
    return s.page(title=TWO_COLUMN_TITLE, columns=columns)


def text_page(title: str = "A Short Note on Bridges", paragraphs: tuple[str, ...] | None = None,
              dpi: int = 150, size_in: tuple[float, float] = A4_INCHES) -> SamplePage:
    """A plain page of text: a title and wrapped paragraphs."""
    paragraphs = paragraphs or (
        "Stone bridges were built to last for centuries. Their arches carry the weight of the road down "
        "into the ground on both banks of the river.",
        "Modern bridges use steel cables and concrete towers. Engineers check them every year for cracks, "
        "rust and movement caused by wind and traffic.",
    )
    s = _Sheet(*size_in, dpi)
    s.line(72, 72, title, s.font("DejaVuSans-Bold.ttf", 18))
    y = 120.0
    for text in paragraphs:
        y = s.paragraph(72, y, text, s.font("DejaVuSerif.ttf", 11), width_pt=size_in[0] * 72 - 144,
                        leading_pt=16) + 10
    return s.page(title=title)


LANGUAGE_LINES = {
    "de": ("Größenänderung der Bilder ist jetzt möglich.", "Die Prüfung der Übersetzung dauert bis März.",
           "Äpfel und Birnen liegen auf dem großen Tisch."),
    "fr": ("La façade de l'école a été rénovée cet été.", "Le garçon a déjà mangé une crème brûlée.",
           "Noël approche et la forêt est très froide."),
    "es": ("El niño pequeño comió una piña en el jardín.", "La canción de la señora fue muy bonita.",
           "¿Dónde está la estación de autobuses?"),
    "nl": ("Eén van de twee ideeën werd snel gekozen.", "De reünie vond plaats in een café in België.",
           "Hij zei dat het geen probleem was, zeker één keer."),
}


def language_page(lang: str, dpi: int = 150) -> SamplePage:
    """A page of sentences with the diacritics of ``lang`` (``de``, ``fr``, ``es`` or ``nl``), one per line."""
    s = _Sheet(*A4_INCHES, dpi)
    font = s.font("DejaVuSans.ttf", 14)
    for i, text in enumerate(LANGUAGE_LINES[lang]):
        s.line(72, 90 + i * 28, text, font)
    return s.page()


def dense_page(dpi: int = 200, font_pt: float = 7) -> SamplePage:
    """A4 filled edge to edge with small text: many lines for batching and speed checks."""
    s = _Sheet(*A4_INCHES, dpi)
    font, leading, width = s.font("DejaVuSans.ttf", font_pt), font_pt * 1.4, A4_INCHES[0] * 72 - 108
    wrapped = (line for text in cycle(LEFT_COLUMN + RIGHT_COLUMN + REPORT_PARAGRAPHS)
               for line in s.wrap(text, font, width))
    y = 54.0
    while y + leading < A4_INCHES[1] * 72 - 54:
        s.line(54, y, next(wrapped), font)
        y += leading
    return s.page()


LARGE_SCAN_UPPER = (
    "Inspection record for the north warehouse, section A, carried out on the third of April.",
    "All fire doors on the ground floor were tested and closed without delay or unusual noise.",
    "Two ceiling lights near the loading bay need new tubes before the night shift next week.",
    "The emergency exit signs are clearly visible at night and their batteries were replaced.",
    "Shelving units in aisle three were anchored to the wall with the brackets ordered in May.",
    "The forklift charging area is clean, well ventilated and marked with yellow floor paint.",
    "Pallets stacked beside the north gate were moved so that the fire lane is free at all times.",
    "Staff confirmed that the new safety gloves fit well and are stored next to the packing desk.",
)
LARGE_SCAN_LOWER = (
    "Findings for the south office on the second floor, inspected on the same afternoon.",
    "The printer room window does not lock properly and should be repaired by the landlord.",
    "Cables under the reception desk should be covered to prevent visitors from tripping.",
    "First aid kits were restocked on the fifth of May and the expiry dates were written down.",
    "Heating in the meeting room works in every zone, but the thermostat display is faint.",
    "The kitchen sink drains slowly; a plumber has been asked to visit before the end of June.",
    "Visitor badges are kept in a locked drawer, and the sign-in book was replaced this month.",
    "Next inspection is planned for the end of September, with the same checklist as today.",
)


def large_scan() -> SamplePage:
    """A 4000x2864 px, 300-DPI scan with lines of 11 pt text in its upper and its lower half.

    The regression page: at PaddleOCR's default detector sizing every line of
    the upper half was lost.
    """
    s = _Sheet(4000 / 300, 2864 / 300, 300, background=246)  # scanner paper is rarely pure white
    font = s.font("DejaVuSans.ttf", 11)
    for top_pt, lines in ((36, LARGE_SCAN_UPPER), (380, LARGE_SCAN_LOWER)):
        for i, text in enumerate(lines):
            s.line(54, top_pt + i * 36, text, font)
    assert s.image.size == (4000, 2864)
    return s.page()


def encode(image: Image.Image, fmt: str, dpi: int | None = None, **params) -> bytes:
    """``image`` saved as ``fmt`` ("PNG", "JPEG", "TIFF", "BMP", "WEBP", "PDF"...)."""
    if dpi and fmt == "PDF":
        params["resolution"] = dpi
    elif dpi:
        params["dpi"] = (dpi, dpi)
    buf = io.BytesIO()
    image.save(buf, fmt, **params)
    return buf.getvalue()


def pdf_from_images(images: list[Image.Image], dpi: int = 150) -> bytes:
    """A PDF with one image per page, each page sized so the image is ``dpi`` dots per inch.

    JPEG quality 95 keeps compression noise out of the recognition figures.
    """
    buf = io.BytesIO()
    images[0].save(buf, "PDF", save_all=True, append_images=images[1:], resolution=dpi, quality=95)
    return buf.getvalue()


def report_pdf(pages: int = 3, dpi: int = 150) -> SampleDocument:
    """Page 1 the report with its table, page 2 the two-column page, page 3 a text page, then again.

    Repeats reuse the same three images, so a long PDF costs three pages of memory to make.
    """
    distinct = [report_page(dpi), two_column_page(dpi), text_page(dpi=dpi)]
    chosen = list(islice(cycle(distinct), pages))
    return SampleDocument(pdf_from_images([p.image for p in chosen], dpi), "application/pdf", chosen)


def multipage_tiff(dpi: int = 100) -> SampleDocument:
    """Three TIFF pages of different sizes and modes: RGB A4, 1-bit A5, grayscale letter."""
    pages = [
        text_page("Page one of three", dpi=dpi),
        text_page("Page two of three", dpi=dpi, size_in=(5.83, 8.27)),
        text_page("Page three of three", dpi=dpi, size_in=(8.5, 11.0)),
    ]
    frames = [pages[0].image, pages[1].image.convert("1"), pages[2].image.convert("L")]
    data = encode(frames[0], "TIFF", dpi=dpi, save_all=True, append_images=frames[1:], compression="tiff_deflate")
    return SampleDocument(data, "image/tiff", pages)


def exif_rotated_jpeg(orientation: int = 6, dpi: int = 100) -> SampleDocument:
    """A portrait page stored on its side with EXIF Orientation 6 or 8, as phones save photos.

    ``pages[0]`` is the upright page a viewer shows after applying the orientation.
    """
    upright = text_page("Rotated Photo of a Letter", dpi=dpi)
    # The inverse of what exif_transpose applies for this orientation.
    stored = upright.image.transpose({6: Image.Transpose.ROTATE_90, 8: Image.Transpose.ROTATE_270}[orientation])
    exif = Image.Exif()
    exif[0x0112] = orientation  # Orientation
    return SampleDocument(encode(stored, "JPEG", dpi=dpi, quality=92, exif=exif.tobytes()), "image/jpeg", [upright])


def paper_pdf(seed: int = 1) -> bytes:
    """A typeset two-column paper (Times, justified, headings, page numbers), made with reportlab.

    Unlike the Pillow pages, its columns start at different heights and its
    paragraphs do not line up across columns; the PDF's own text layer, written
    column by column, is the ground truth for reading order.
    """
    import random

    from reportlab.lib.enums import TA_CENTER, TA_JUSTIFY
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import BaseDocTemplate, Frame, FrameBreak, NextPageTemplate, PageTemplate, Paragraph

    rng = random.Random(seed)
    words = ("the model layout page document reading order column text recognition table region line detector "
             "scan language results method evaluation accuracy error rate benchmark dataset training images "
             "characters structure paragraph figure").split()
    body = ParagraphStyle("body", fontName="Times-Roman", fontSize=10, leading=12, alignment=TA_JUSTIFY, spaceAfter=6)
    heading = ParagraphStyle("heading", fontName="Times-Bold", fontSize=12, leading=14, spaceBefore=8, spaceAfter=6)
    width, height = A4
    column = (width - 144 - 18) / 2

    def number(canvas, doc):
        canvas.setFont("Times-Roman", 9)
        canvas.drawCentredString(width / 2, 30, str(doc.page))

    out = io.BytesIO()
    doc = BaseDocTemplate(out, pagesize=A4)
    doc.addPageTemplates([
        PageTemplate("first", [Frame(72, height - 160, width - 144, 90), Frame(72, 60, column, height - 230),
                               Frame(90 + column, 60, column, height - 230)], onPage=number),
        PageTemplate("rest", [Frame(72, 60, column, height - 130), Frame(90 + column, 60, column, height - 130)],
                     onPage=number),
    ])
    story = [Paragraph("Reading Order in Two-Column Documents",
                       ParagraphStyle("title", fontName="Times-Bold", fontSize=17, leading=20, alignment=TA_CENTER)),
             Paragraph("A. Author and B. Writer", ParagraphStyle("by", parent=body, alignment=TA_CENTER)),
             NextPageTemplate("rest"), FrameBreak()]
    for section in ("1 Introduction", "2 Related Work", "3 Method", "4 Experiments", "5 Conclusion"):
        story.append(Paragraph(section, heading))
        for _ in range(3):
            sentences = (" ".join(rng.choice(words) for _ in range(rng.randint(8, 16))).capitalize() + "."
                         for _ in range(4))
            story.append(Paragraph(" ".join(sentences), body))
    doc.build(story)
    return out.getvalue()


TABLE_PAPER_ROWS = [["Method", "Pages", "Error rate", "Time per page"], ["Column cut", "120", "2.1 %", "0.8 s"],
                    ["Line order", "120", "4.7 %", "0.6 s"], ["Layout model", "120", "1.9 %", "1.4 s"]]


def paper_with_table_pdf(seed: int = 2) -> bytes:
    """A two-column page cut by a full-width ruled table with its caption, columns above and below.

    Read in order: the left then the right column above the table, the table row by row, its
    caption, then the left and the right column below it (the order of the PDF's text layer).
    """
    import random

    from reportlab.lib.enums import TA_CENTER, TA_JUSTIFY
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import ParagraphStyle
    from reportlab.platypus import BaseDocTemplate, Frame, FrameBreak, PageTemplate, Paragraph, Table, TableStyle

    rng = random.Random(seed)
    words = ("layout page reading order column text table region line scan results method error rate "
             "dataset images structure paragraph figure caption band").split()
    body = ParagraphStyle("body", fontName="Times-Roman", fontSize=10, leading=12, alignment=TA_JUSTIFY, spaceAfter=6)
    width, height = A4
    column = (width - 144 - 18) / 2
    top, band = height - 72, 170  # the band the table and caption take, under 250 pt of columns
    frames = [Frame(72, top - 250, column, 250), Frame(90 + column, top - 250, column, 250),
              Frame(72, top - 250 - band, width - 144, band),
              Frame(72, 60, column, top - 250 - band - 60), Frame(90 + column, 60, column, top - 250 - band - 60)]

    def paragraph() -> Paragraph:
        sentences = (" ".join(rng.choice(words) for _ in range(rng.randint(8, 14))).capitalize() + "."
                     for _ in range(3))
        return Paragraph(" ".join(sentences), body)

    table = Table(TABLE_PAPER_ROWS, colWidths=[(width - 144) / 4] * 4)
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, "black"), ("FONT", (0, 0), (-1, -1), "Helvetica", 9)]))
    caption = Paragraph("Table 1: Error rate and time per page of each method on the test pages; lower is better.",
                        ParagraphStyle("caption", parent=body, alignment=TA_CENTER, spaceBefore=8))
    story = [paragraph(), paragraph(), FrameBreak(), paragraph(), paragraph(), FrameBreak(), table, caption,
             FrameBreak()] + [paragraph() for _ in range(3)] + [FrameBreak()] + [paragraph() for _ in range(3)]
    out = io.BytesIO()
    doc = BaseDocTemplate(out, pagesize=A4)
    doc.addPageTemplates([PageTemplate("page", frames)])
    doc.build(story)
    return out.getvalue()
