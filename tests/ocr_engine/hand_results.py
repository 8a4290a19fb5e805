"""Results built by hand with the cases the engine produces, for the export tests (no models).

Title, two-line paragraph with a corrected line, 2x2 table, figure, caption, a
line outside every layout box in its own "ocr" region, header and page number.
"""

from __future__ import annotations

from PIL import Image, ImageDraw

from ocr_engine.exports.markdown import page_markdown
from ocr_engine.exports.text import document_text, page_text
from ocr_engine.schema import DocumentResult, EngineInfo, Line, Page, Region, Table, TableCell, Word

ENGINE = EngineInfo(
    pipeline="structure", lang="en", backend="onnxruntime", device="cpu",
    models={"text_detection": "PP-OCRv6_small_det", "text_recognition": "PP-OCRv6_small_rec"}, version="0.1.0",
)


def box(x0, y0, x1, y1):
    return [x0, y0, x1, y1]


def quad(x0, y0, x1, y1):
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def region(page, n, kind, label, order, bbox, source="layout", confidence=0.9):
    return Region(
        id=f"p{page}-r{n}", type=kind, label=label, order=order, bbox=bbox, polygon=quad(*bbox),
        confidence=confidence, text="", source=source,
    )


def line(page, n, region_n, text, bbox, confidence=0.95, **extra):
    return Line(
        id=f"p{page}-l{n}", region_id=f"p{page}-r{region_n}", order=n, polygon=extra.pop("polygon", quad(*bbox)),
        bbox=bbox, text=text, confidence=confidence, **extra,
    )


def first_page() -> Page:
    """A report page: header, title, paragraph (hyphenated, one line corrected), table, figure, caption, note."""
    lines = [
        line(1, 1, 1, "ACME Corp · Internal", box(100, 10, 600, 40)),
        line(1, 2, 2, "Annual Report 2024", box(100, 60, 900, 120), 0.99),
        line(
            1, 3, 3, "The committee reviewed the exam-", box(100, 150, 900, 200), 0.97,
            words=[
                Word("The", box(100, 150, 170, 200), 0.99), Word("committee", box(180, 150, 400, 200), 0.98),
                Word("reviewed", box(410, 150, 600, 200), 0.97), Word("the", box(610, 150, 680, 200), 0.99),
                Word("exam-", box(690, 150, 900, 200), 0.9),
            ],
        ),
        line(
            1, 4, 3, "ple results in détail.", box(100, 210, 700, 260), 0.61,
            original_text="p1e resu1ts in detai1.",
            words=[Word("p1e", box(100, 210, 170, 260), 0.5), Word("resu1ts", box(180, 210, 350, 260), 0.6)],
        ),
        line(1, 5, 4, "Item", box(120, 320, 300, 360)),
        line(1, 6, 4, "Cost", box(520, 320, 700, 360)),
        line(1, 7, 4, "Paper", box(120, 400, 300, 440)),
        line(1, 8, 4, "12", box(520, 400, 600, 440), 0.4, original_text="1Z"),
        line(1, 9, 6, "Figure 1: Sales by region", box(100, 910, 700, 950)),
        line(1, 10, 7, "Handwritten note: call Bob", box(600, 1000, 950, 1040), 0.71),
        line(1, 11, 8, "1", box(490, 1350, 510, 1380)),
    ]
    regions = [
        region(1, 1, "header", "header", 1, box(100, 10, 600, 40)),
        region(1, 2, "title", "doc_title", 2, box(100, 60, 900, 120)),
        region(1, 3, "text", "text", 3, box(100, 150, 900, 260)),
        region(1, 4, "table", "table", 4, box(100, 300, 900, 460)),
        region(1, 5, "figure", "image", 5, box(100, 500, 900, 900)),
        region(1, 6, "caption", "figure_title", 6, box(100, 910, 900, 950)),
        region(1, 7, "text", "text", 7, box(600, 1000, 950, 1040), source="ocr", confidence=None),
        region(1, 8, "page_number", "number", 8, box(480, 1350, 520, 1380)),
    ]
    table = Table(
        id="p1-t1", region_id="p1-r4", html="<table><tr><td>Item</td><td>Cost</td></tr>"
        "<tr><td>Paper</td><td>1Z</td></tr></table>", n_rows=2, n_cols=2,
        cells=[
            TableCell(0, 0, 1, 1, box(100, 300, 500, 380), "Item"),
            TableCell(0, 1, 1, 1, box(500, 300, 900, 380), "Cost"),
            TableCell(1, 0, 1, 1, box(100, 380, 500, 460), "Paper"),
            TableCell(1, 1, 1, 1, box(500, 380, 900, 460), "1Z"),
        ],
    )
    return Page(page_number=1, width=1000, height=1400, scale=2.0, dpi=144.0, regions=regions, lines=lines,
                tables=[table])


def second_page() -> Page:
    """Markup-like text, CJK lines, a table with a spanning cell, a bulleted list, a slanted line."""
    slant = [[100, 520], [500, 450], [507, 490], [107, 560]]  # ~10 degrees up to the right
    lines = [
        line(3, 1, 1, "Details & <Notes>", box(50, 40, 750, 80)),
        line(3, 2, 2, "中文测试", box(50, 100, 250, 140)),
        line(3, 3, 2, "第二行", box(50, 150, 200, 190)),
        line(3, 4, 3, "Header", box(60, 210, 300, 240)),
        line(3, 5, 3, "a", box(60, 260, 100, 290)),
        line(3, 6, 3, "b", box(420, 260, 460, 290)),
        line(3, 7, 4, "• First item", box(50, 320, 400, 350)),
        line(3, 8, 4, "continues here", box(70, 360, 400, 390)),
        line(3, 9, 4, "• Second item", box(50, 400, 400, 430)),
        line(3, 10, 5, "Slanted text", box(100, 450, 507, 560), polygon=slant),
    ]
    regions = [
        region(3, 1, "title", "paragraph_title", 1, box(50, 40, 750, 80)),
        region(3, 2, "text", "text", 2, box(50, 100, 250, 190)),
        region(3, 3, "table", "table", 3, box(50, 200, 750, 300)),
        region(3, 4, "list", "text", 4, box(50, 320, 400, 430)),
        region(3, 5, "text", "text", 5, box(100, 450, 507, 560)),
    ]
    table = Table(
        id="p3-t1", region_id="p3-r3", html="", n_rows=2, n_cols=2,
        cells=[
            TableCell(0, 0, 1, 2, box(50, 200, 750, 250), "Header"),
            TableCell(1, 0, 1, 1, box(50, 250, 400, 300), "a"),
            TableCell(1, 1, 1, 1, box(400, 250, 750, 300), "b"),
        ],
    )
    return Page(page_number=3, width=800, height=600, scale=2.0, dpi=144.0, regions=regions, lines=lines,
                tables=[table])


def document(*pages: Page, filename="report.pdf") -> DocumentResult:
    pages = list(pages)
    for page in pages:  # as the engine fills them
        page.text, page.markdown = page_text(page), page_markdown(page)
    return DocumentResult(
        engine=ENGINE, pages=pages, text=document_text(pages), markdown="",
        source={"filename": filename, "media_type": "application/pdf", "page_count": 3},
    )


def page_images(result: DocumentResult):
    """The page images the engine would have read: white pages with a grey block per line."""
    def image(page_number: int) -> Image.Image:
        page = next(p for p in result.pages if p.page_number == page_number)
        img = Image.new("RGB", (page.width, page.height), "white")
        draw = ImageDraw.Draw(img)
        for ln in page.lines:
            draw.rectangle(ln.bbox, fill=(90, 90, 90))
        return img
    return image
