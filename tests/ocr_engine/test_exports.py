"""Exports of hand-built results: reading order, corrections, structure and geometry in every format.

No models here: the results are built by hand with the cases the engine
produces (title, two-line paragraph with a corrected line, 2x2 table, figure,
caption, a line outside every layout box in its own "ocr" region, header and
page number), so each assertion pins one export rule.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pypdf
import pypdfium2
import pytest
from lxml import etree
from PIL import Image, ImageDraw

from ocr_engine import exports
from ocr_engine.errors import InputError, UnsupportedOption
from ocr_engine.exports.markdown import join_lines, page_markdown
from ocr_engine.exports.text import document_text, page_text
from ocr_engine.schema import (
    DocumentResult, EngineInfo, Line, Page, Region, Table, TableCell, Word, document_from_dict, to_dict,
)
from ocr_engine.validation import validate_result

DATA = Path(__file__).parent / "data"
ALTO = "{http://www.loc.gov/standards/alto/ns-v4#}"
XHTML = "{http://www.w3.org/1999/xhtml}"
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


@pytest.fixture
def result() -> DocumentResult:
    return document(first_page(), second_page())


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


def test_hand_built_results_are_valid(result):
    validate_result(to_dict(result))
    validate_result(to_dict(document(first_page(), filename=None)))


def test_formats_and_unknown_format(result):
    assert set(exports.FORMATS) == {"json", "txt", "md", "hocr", "alto", "pdf", "page"}
    assert exports.FORMATS["alto"] == ("application/xml", "xml")
    with pytest.raises(UnsupportedOption) as caught:
        exports.render(result, "docx")
    assert caught.value.code == "unsupported_option"
    assert "docx" in caught.value.message


def test_text_reads_lines_in_order_regions_apart_pages_by_form_feed(result):
    text = exports.render(result, "txt").decode("utf-8")
    first, second = text.rstrip("\n").split("\f")
    assert first == (
        "ACME Corp · Internal\n\nAnnual Report 2024\n\n"
        "The committee reviewed the exam-\nple results in détail.\n\n"
        "Item\nCost\nPaper\n12\n\nFigure 1: Sales by region\n\nHandwritten note: call Bob\n\n1"
    )
    assert second.startswith("Details & <Notes>\n\n中文测试\n第二行\n\nHeader\na\nb\n\n")
    assert result.text == text.rstrip("\n")


def test_text_follows_line_order_not_list_position():
    page = first_page()
    page.lines.reverse()
    page.regions.reverse()
    assert page_text(page) == page_text(first_page())


def test_markdown_structure(result):
    markdown = exports.render(result, "md").decode("utf-8")
    assert markdown == (
        "<!-- page 1 -->\n\n"
        "# Annual Report 2024\n\n"
        "The committee reviewed the example results in détail.\n\n"
        "| Item | Cost |\n| --- | --- |\n| Paper | 12 |\n\n"
        "<!-- figure -->\n\n"
        "*Figure 1: Sales by region*\n\n"
        "Handwritten note: call Bob\n\n"
        "<!-- page 3 -->\n\n"
        "## Details & \\<Notes>\n\n"
        "中文测试第二行\n\n"
        '<table><tr><td colspan="2">Header</td></tr><tr><td>a</td><td>b</td></tr></table>\n\n'
        "- First item continues here\n- Second item\n\n"
        "Slanted text\n"
    )


@pytest.mark.parametrize(
    ("lines", "joined"),
    [
        (["exam-", "ple"], "example"),
        (["Jean-", "Paul"], "Jean-Paul"),
        (["costs -", "see below"], "costs - see below"),
        (["two", "", "lines"], "two lines"),
        (["中文", "测试"], "中文测试"),
    ],
)
def test_join_lines(lines, joined):
    assert join_lines(lines) == joined


def test_corrections_reach_every_format_but_json_keeps_the_original(result):
    images = page_images(result)
    for fmt in ("txt", "md", "hocr", "alto"):
        data = exports.render(result, fmt).decode("utf-8")
        assert "détail" in data, fmt
        assert "detai1" not in data and "resu1ts" not in data and "1Z" not in data, fmt
    pdf_text = pypdf.PdfReader(io.BytesIO(exports.render(result, "pdf", page_image=images))).pages[0].extract_text()
    assert "ple results in détail." in pdf_text and "detai1" not in pdf_text

    data = json.loads(exports.render(result, "json"))
    corrected = data["pages"][0]["lines"][3]
    assert (corrected["text"], corrected["original_text"]) == ("ple results in détail.", "p1e resu1ts in detai1.")


def test_json_round_trips(result):
    data = exports.render(result, "json")
    assert "中文测试".encode() in data  # UTF-8, not \\u escapes
    assert document_from_dict(json.loads(data)) == result


def test_hocr(result):
    root = ET.fromstring(exports.render(result, "hocr"))
    assert root.tag == f"{XHTML}html"

    def by_class(name):
        return root.findall(f".//*[@class='{name}']")

    pages = by_class("ocr_page")
    assert [p.get("title") for p in pages] == [
        'image "report.pdf"; bbox 0 0 1000 1400; ppageno 0; scan_res 144 144',
        'image "report.pdf"; bbox 0 0 800 600; ppageno 2; scan_res 144 144',
    ]
    assert len(by_class("ocr_line")) == 21
    assert len(by_class("ocr_carea")) == 12 and len(by_class("ocr_photo")) == 1
    assert [a.get("id") for a in pages[0].findall(f"{XHTML}div")] == [f"p1-r{n}" for n in range(1, 9)]

    title_line = root.find(".//*[@id='p1-l2']")
    assert title_line.get("title") == "bbox 100 60 900 120; x_wconf 99"
    words = root.findall(".//*[@id='p1-l3']/*")
    assert [w.text for w in words] == ["The", "committee", "reviewed", "the", "exam-"]
    assert words[1].get("title") == "bbox 180 150 400 200; x_wconf 98"
    # The corrected line's engine words no longer spell it: one word with the corrected text.
    corrected = root.findall(".//*[@id='p1-l4']/*")
    assert [(w.text, w.get("title")) for w in corrected] == [
        ("ple results in détail.", "bbox 100 210 700 260; x_wconf 61"),
    ]
    assert root.find(".//*[@id='p3-l1']/*").text == "Details & <Notes>"
    # Words stay apart for readers that strip the markup.
    assert "".join(root.find(".//*[@id='p1-l3']").itertext()).split() == [w.text for w in words]


@pytest.fixture(scope="module")
def alto_schema() -> etree.XMLSchema:
    """The official ALTO 4.4 XSD; its xlink import is served from a local copy, offline."""
    class Local(etree.Resolver):
        def resolve(self, url, public_id, context):
            if url.endswith("xlink.xsd"):
                return self.resolve_filename(str(DATA / "xlink.xsd"), context)
            return None

    parser = etree.XMLParser(no_network=True)
    parser.resolvers.add(Local())
    return etree.XMLSchema(etree.parse(str(DATA / "alto-4-4.xsd"), parser))


def test_alto_is_valid_and_keeps_structure_and_geometry(result, alto_schema):
    data = exports.render(result, "alto")
    tree = etree.fromstring(data)
    alto_schema.assertValid(tree)
    ns = {"a": ALTO[1:-1]}

    assert tree.xpath("string(a:Description/a:MeasurementUnit)", namespaces=ns) == "pixel"
    pages = tree.xpath("a:Layout/a:Page", namespaces=ns)
    assert [(p.get("PHYSICAL_IMG_NR"), p.get("WIDTH"), p.get("HEIGHT")) for p in pages] == [
        ("1", "1000", "1400"), ("3", "800", "600"),
    ]
    first = pages[0]
    blocks = first.xpath("a:PrintSpace/*", namespaces=ns)
    assert [(etree.QName(b).localname, b.get("ID"), b.get("TAGREFS")) for b in blocks] == [
        ("TextBlock", "p1-r1", "type-header"), ("TextBlock", "p1-r2", "type-title"),
        ("TextBlock", "p1-r3", "type-text"), ("ComposedBlock", "p1-r4", "type-table"),
        ("Illustration", "p1-r5", "type-figure"), ("TextBlock", "p1-r6", "type-caption"),
        ("TextBlock", "p1-r7", "type-text"), ("TextBlock", "p1-r8", "type-page_number"),
    ]
    assert len(tree.xpath("//a:TextLine", namespaces=ns)) == 21

    paragraph = blocks[2]
    assert (paragraph.get("HPOS"), paragraph.get("VPOS"), paragraph.get("WIDTH"), paragraph.get("HEIGHT")) == (
        "100", "150", "800", "110",
    )
    first_line, corrected = paragraph.xpath("a:TextLine", namespaces=ns)
    strings = first_line.xpath("a:String", namespaces=ns)
    assert [s.get("CONTENT") for s in strings] == ["The", "committee", "reviewed", "the", "exam-"]
    assert len(first_line.xpath("a:SP", namespaces=ns)) == 4
    assert (strings[1].get("HPOS"), strings[1].get("WIDTH"), strings[1].get("WC")) == ("180", "220", "0.9800")
    assert first_line.xpath("string(a:Shape/a:Polygon/@POINTS)", namespaces=ns) == "100,150 900,150 900,200 100,200"
    assert corrected.get("CS") == "true"
    assert [(s.get("CONTENT"), s.get("CS")) for s in corrected.xpath("a:String", namespaces=ns)] == [
        ("ple results in détail.", "true"),
    ]

    cells = blocks[3].xpath("a:TextBlock", namespaces=ns)
    assert [(c.get("ID"), c.xpath("string(a:TextLine/a:String/@CONTENT)", namespaces=ns)) for c in cells] == [
        ("p1-r4-c0-0", "Item"), ("p1-r4-c0-1", "Cost"), ("p1-r4-c1-0", "Paper"), ("p1-r4-c1-1", "12"),
    ]
    note = blocks[6].xpath("a:TextLine/a:String", namespaces=ns)[0]
    assert (note.get("CONTENT"), note.get("WC")) == ("Handwritten note: call Bob", "0.7100")
    assert pages[1].xpath("string(.//a:TextLine[@ID='p3-l1']/a:String/@CONTENT)", namespaces=ns) == (
        "Details & <Notes>"
    )


def test_alto_keeps_empty_regions(alto_schema):
    page = first_page()
    page.lines = [ln for ln in page.lines if ln.region_id != "p1-r3"]
    page.lines = [Line(**{**vars(ln), "order": n}) for n, ln in enumerate(page.lines, start=1)]
    tree = etree.fromstring(exports.render(document(page), "alto"))
    alto_schema.assertValid(tree)
    empty = tree.xpath("//*[@ID='p1-r3']")
    assert len(empty) == 1 and etree.QName(empty[0]).localname == "TextBlock" and len(empty[0]) == 1  # Shape only


def pdf_rect(page: Page, bbox, margin=1.0):
    """A pixel bbox as (left, bottom, right, top) in PDF points."""
    k = 72 / page.dpi
    height = page.height * k
    return bbox[0] * k - margin, height - bbox[3] * k - margin, bbox[2] * k + margin, height - bbox[1] * k + margin


def test_searchable_pdf(result):
    data = exports.render(result, "pdf", page_image=page_images(result))
    reader = pypdf.PdfReader(io.BytesIO(data))
    assert len(reader.pages) == 2
    # 1000 x 1400 px at 144 DPI is 500 x 700 pt: the original PDF page's size.
    assert [(float(p.mediabox.width), float(p.mediabox.height)) for p in reader.pages] == [(500, 700), (400, 300)]
    first_text = reader.pages[0].extract_text()
    for ln in result.pages[0].lines:
        assert ln.text in first_text
    assert "中文测试" in reader.pages[1].extract_text()
    images = list(reader.pages[0].images)
    assert len(images) == 1 and images[0].image.size == (1000, 1400)
    assert list(reader.pages[0]["/Resources"]["/XObject"].values())[0].get_object()["/Filter"] == ["/DCTDecode"]

    # The text sits on its line: the text inside each line's box is that line.
    pdf = pypdfium2.PdfDocument(data)
    try:
        for index, page in enumerate(result.pages):
            text_page = pdf[index].get_textpage()
            for ln in page.lines:
                found = text_page.get_text_bounded(*pdf_rect(page, ln.bbox)).strip()
                found = found.replace("\x02", "-")  # pdfium marks a line-end hyphen as U+0002
                assert found == ln.text, (ln.id, found)
    finally:
        pdf.close()


def test_searchable_pdf_of_an_image_without_dpi_uses_pixels_as_points():
    page = first_page()
    page.scale, page.dpi = 1.0, None
    result = document(page, filename="scan.png")
    reader = pypdf.PdfReader(io.BytesIO(exports.render(result, "pdf", page_image=page_images(result))))
    assert (float(reader.pages[0].mediabox.width), float(reader.pages[0].mediabox.height)) == (1000, 1400)


def test_searchable_pdf_needs_page_images(result):
    with pytest.raises(InputError) as caught:
        exports.render(result, "pdf")
    assert caught.value.code == "page_image_missing"
    with pytest.raises(InputError) as caught:
        exports.render(result, "pdf", page_image=lambda n: None)
    assert caught.value.code == "page_image_missing"
    assert "page 1" in caught.value.message
