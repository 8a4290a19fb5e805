"""Exports of hand-built results: reading order, corrections, structure and geometry in every format.

No models here: the results are built by hand (``hand_results``) with the cases
the engine produces, so each assertion pins one export rule. The searchable PDF
has its own module (``test_exports_pdf``).
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pypdf
import pytest
from lxml import etree

from ocr_engine import exports
from ocr_engine.errors import UnsupportedOption
from ocr_engine.exports.markdown import join_lines
from ocr_engine.exports.text import page_text
from ocr_engine.schema import DocumentResult, Line, document_from_dict, to_dict
from tests.ocr_engine.hand_results import document, first_page, page_images, second_page
from ocr_engine.validation import validate_result

DATA = Path(__file__).parent / "data"
ALTO = "{http://www.loc.gov/standards/alto/ns-v4#}"
XHTML = "{http://www.w3.org/1999/xhtml}"
@pytest.fixture
def result() -> DocumentResult:
    return document(first_page(), second_page())


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
