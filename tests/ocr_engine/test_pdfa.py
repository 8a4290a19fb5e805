"""The PDF/A-2b export: an archival searchable PDF that keeps born-digital pages as they were."""

from __future__ import annotations

import io
from pathlib import Path

import pikepdf
import pypdf
import pypdfium2
import pytest
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas as reportlab_canvas

from ocr_engine import exports
from ocr_engine.config import EngineConfig
from ocr_engine.engine import Engine, assemble_document
from ocr_engine.errors import UnsupportedOption
from ocr_engine.exports.blocks import page_blocks
from ocr_engine.exports import glyphless
from ocr_engine.exports.glyphless import FONT_NAME
from ocr_engine.inputs import open_document
from tests.ocr_engine import textlayer_samples as tls
from tests.ocr_engine.hand_results import document, first_page, page_images, second_page
from tests.ocr_engine.pdfa_checks import assert_pdfa_2b
from tests.ocr_engine.test_exports_pdf import pdf_rect

BORN_DIGITAL = Path(__file__).parent / "data" / "born_digital"
EMBEDDED_FONTS = BORN_DIGITAL / "bash-groff-ghostscript.pdf"  # Ghostscript embedded every font
UNEMBEDDED_FONTS = BORN_DIGITAL / "fhs-docbook-fop.pdf"  # FOP left the 14 standard fonts out
CIDSETS = BORN_DIGITAL / "debian-reference-dblatex-xdvipdfmx.pdf"  # xdvipdfmx: TrueType CID subsets with CIDSets


def reading_order(page) -> list[str]:
    return [ln.text.strip() for block in page_blocks(page) for ln in block.lines if ln.text.strip()]


def extracted_lines(page: pypdf.PageObject) -> list[str]:
    return [text.strip() for text in page.extract_text().splitlines() if text.strip()]


def font_names(page: pikepdf.Page) -> set[str]:
    fonts = page.obj.Resources.get("/Font", pikepdf.Dictionary())
    return {str(font.get("/BaseFont")).split("+")[-1] for font in fonts.values()}


def test_image_pages_make_a_pdfa_2b_file_whose_text_reads_in_reading_order():
    result = document(first_page(), second_page())
    gray = page_images(result)
    data = exports.render(result, "pdf", page_image=lambda n: gray(n).convert("L") if n == 3 else gray(n),
                          pdfa="2b")
    assert_pdfa_2b(data)
    with pikepdf.open(io.BytesIO(data)) as pdf:
        assert str(pdf.docinfo.Title) == "report.pdf"
        assert [font_names(page) for page in pdf.pages] == [{FONT_NAME}, {FONT_NAME}]
    reader = pypdf.PdfReader(io.BytesIO(data))
    assert [extracted_lines(page) for page in reader.pages] == [reading_order(page) for page in result.pages]
    # Each line's invisible text lies over the line in the page image.
    document_pdf = pypdfium2.PdfDocument(data)
    try:
        for index, page in enumerate(result.pages):
            text_page = document_pdf[index].get_textpage()
            for ln in page.lines:
                found = text_page.get_text_bounded(*pdf_rect(page, ln.bbox)).strip().replace("\x02", "-")
                assert found == ln.text, (ln.id, found)
    finally:
        document_pdf.close()


def test_a_character_beyond_the_bmp_is_written_as_the_replacement_character():
    page = first_page()
    page.lines[0].text = "Smile 😀 ok"  # the font has no glyph for it: .notdef, which PDF/A forbids
    result = document(page)
    data = exports.render(result, "pdf", page_image=page_images(result), pdfa="2b")
    assert_pdfa_2b(data)
    assert extracted_lines(pypdf.PdfReader(io.BytesIO(data)).pages[0])[0] == "Smile \ufffd ok"


def test_only_pdfa_2b_of_the_pdf_export_is_offered():
    result = document(first_page())
    for fmt, level in (("pdf", "1a"), ("pdf", "3b"), ("pdf", ""), ("txt", "2b")):
        with pytest.raises(UnsupportedOption) as raised:
            exports.render(result, fmt, page_image=page_images(result), pdfa=level)
        assert raised.value.code == "unsupported_option"


@pytest.fixture(scope="module")
def born_digital_pages(tmp_path_factory) -> Path:
    """Page 1 with embedded fonts, page 2 without, page 3 with CIDSets: all born digital, one PDF."""
    path = tmp_path_factory.mktemp("pdfa") / "born-digital.pdf"
    with pikepdf.new() as pdf:
        for source in (EMBEDDED_FONTS, UNEMBEDDED_FONTS, CIDSETS):
            with pikepdf.open(source) as one:
                pdf.pages.append(one.pages[0])
        pdf.save(path)
    return path


@pytest.mark.models
def test_born_digital_pages_keep_their_vector_text_where_pdfa_allows(models_dir, born_digital_pages):
    engine = Engine(EngineConfig(pipeline="ocr", models_dir=models_dir))
    with open_document(born_digital_pages, filename="born-digital.pdf") as doc:
        pages = [out.page for out in engine.process_document(doc)]
        result = assemble_document(pages=pages, engine=engine.info, source={"filename": "born-digital.pdf"})
        assert [page.text_source for page in pages] == ["pdf", "pdf", "pdf"]
        data = exports.render(result, "pdf", page_image=lambda n: doc.render(n, scale=pages[n - 1].scale),
                              pdfa="2b", source_pdf=born_digital_pages)
    assert_pdfa_2b(data)
    source = pypdf.PdfReader(born_digital_pages)
    output = pypdf.PdfReader(io.BytesIO(data))
    with pikepdf.open(io.BytesIO(data)) as pdf, pikepdf.open(born_digital_pages) as original:
        kept, rasterised, kept_without_cidsets = pdf.pages
        # Page 1 is the uploaded page: its own fonts and text operators, no page image, no second text layer.
        assert font_names(kept) == font_names(original.pages[0]) and FONT_NAME not in font_names(kept)
        operators = [(str(op), list(operands)) for operands, op in pikepdf.parse_content_stream(kept)]
        assert {"Tj", "TJ"} & {op for op, _ in operators}
        assert ("Tr", [3]) not in operators and not kept.get_images()
        # Page 2's fonts are not embedded, so PDF/A cannot keep it: the page image with the invisible text.
        assert font_names(rasterised) == {FONT_NAME} and len(rasterised.get_images()) == 1
        # PDF/A-2 makes CIDSets optional and the validator cannot check them: they go, the page stays.
        assert font_names(kept_without_cidsets) == font_names(original.pages[2])
        assert not kept_without_cidsets.get_images()
    assert output.pages[0].extract_text() == source.pages[0].extract_text()
    assert output.pages[2].extract_text() == source.pages[2].extract_text()
    assert extracted_lines(output.pages[1]) == reading_order(pages[1])

    # A reviewer's correction cannot be shown by the original page: that page is rasterised too.
    pages[0].lines[0].original_text, pages[0].lines[0].text = pages[0].lines[0].text, "Corrected heading"
    with open_document(born_digital_pages) as doc:
        data = exports.render(result, "pdf", page_image=lambda n: doc.render(n, scale=pages[n - 1].scale),
                              pdfa="2b", source_pdf=born_digital_pages.read_bytes())
    assert_pdfa_2b(data)
    assert "Corrected heading" in pypdf.PdfReader(io.BytesIO(data)).pages[0].extract_text()


def test_a_kept_page_keeps_its_web_links_and_brings_no_other_page_along(tmp_path):
    path = tmp_path / "linked.pdf"
    with pikepdf.new() as pdf:
        with pikepdf.open(EMBEDDED_FONTS) as one:
            pdf.pages.extend([one.pages[0], one.pages[0]])
        first, second = pdf.pages

        def link(**entries) -> pikepdf.Dictionary:
            return pdf.make_indirect(pikepdf.Dictionary(
                Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.Link, Rect=[72, 72, 144, 90], F=4, **entries))

        first.obj.Annots = pikepdf.Array([
            link(Dest=pikepdf.Array([second.obj, pikepdf.Name.Fit])),
            link(A=pikepdf.Dictionary(S=pikepdf.Name.URI, URI="https://www.gnu.org/software/bash/")),
        ])
        pdf.save(path)
    page = first_page()
    page.text_source = "pdf"  # only page 1 was asked for, read from its text layer, and left uncorrected
    for line in page.lines:
        line.original_text = None
    result = document(page)
    data = exports.render(result, "pdf", page_image=page_images(result), pdfa="2b", source_pdf=path)
    assert_pdfa_2b(data)
    with pikepdf.open(io.BytesIO(data)) as pdf:
        (kept,) = pdf.pages
        assert not kept.get_images()
        assert [str(a.A.URI) for a in kept.obj.Annots] == ["https://www.gnu.org/software/bash/"]
        assert sum(1 for obj in pdf.objects if isinstance(obj, pikepdf.Dictionary) and obj.get("/Type") == "/Page") == 1


def mixed_page_pdf(path: Path) -> Path:
    """A born-digital page (embedded fonts) shrunk into the top of a page, a picture of text below it."""
    # Not reportlab's default initial font: Helvetica, listed though unused, is not embedded.
    canvas = reportlab_canvas.Canvas(str(path), pagesize=(595, 842), initialFontName=glyphless.register())
    picture = io.BytesIO()
    image = tls.text_image((tls.IMAGE_TEXT,))
    image.save(picture, "PNG")
    canvas.drawImage(ImageReader(io.BytesIO(picture.getvalue())), 100, 40, 400, 400 * image.height / image.width)
    canvas.showPage()
    canvas.save()
    with pikepdf.open(path, allow_overwriting_input=True) as pdf, pikepdf.open(EMBEDDED_FONTS) as text:
        pdf.pages[0].add_overlay(text.pages[0], pikepdf.Rectangle(60, 160, 535, 842))
        pdf.save()
    return path


@pytest.mark.models
def test_a_mixed_page_keeps_its_vector_text_and_gains_the_text_of_its_picture(models_dir, tmp_path):
    path = mixed_page_pdf(tmp_path / "mixed.pdf")
    engine = Engine(EngineConfig(pipeline="ocr", models_dir=models_dir))
    with open_document(path) as doc:
        (page,) = [out.page for out in engine.process_document(doc)]
        result = assemble_document(pages=[page], engine=engine.info, source={"filename": "mixed.pdf"})
        data = exports.render(result, "pdf", page_image=lambda n: doc.render(n, scale=page.scale),
                              pdfa="2b", source_pdf=path)
    assert page.text_source == "mixed"
    (ocr_line,) = [line for line in page.lines if line.source == "ocr"]
    assert ocr_line.text == tls.IMAGE_TEXT
    assert_pdfa_2b(data)
    with pikepdf.open(io.BytesIO(data)) as pdf:
        (kept,) = pdf.pages
        # The original content, then one form XObject with the picture's line as invisible text.
        assert len(kept.get_images()) == 1 and kept.get_images()[next(iter(kept.get_images()))].Width == 900
    text = pypdf.PdfReader(io.BytesIO(data)).pages[0].extract_text()
    own = pypdf.PdfReader(path).pages[0].extract_text()
    assert text.startswith(own.strip()) and text.count("DEFINITIONS") == 1  # no second layer of the page's text
    assert text[len(own.strip()):].strip() == tls.IMAGE_TEXT
    overlaid = pypdfium2.PdfDocument(data)
    try:  # the picture's invisible text lies over the picture's line
        assert overlaid[0].get_textpage().get_text_bounded(*pdf_rect(page, ocr_line.bbox)).strip() == tls.IMAGE_TEXT
    finally:
        overlaid.close()


@pytest.mark.parametrize(("rotate", "kept_as"), [
    (450, 90), (-90, 270), (180, 180), (pikepdf.Object.parse(b"180.0"), 180),
    (pikepdf.Object.parse(b"45.5"), None), (135, None), (pikepdf.String("abc"), None), (pikepdf.Name.Ninety, None),
])
@pytest.mark.parametrize("text_source", ["pdf", "mixed"])
def test_any_rotate_value_makes_a_pdfa_export(tmp_path, rotate, kept_as, text_source):
    """A page is kept turned by its /Rotate brought to 0-270; a value that is not a multiple of 90 (which
    viewers read differently) is rasterised as the engine read it. Either way the export is made."""
    path = tmp_path / "rotated.pdf"
    with pikepdf.new() as pdf:
        with pikepdf.open(EMBEDDED_FONTS) as one:
            pdf.pages.append(one.pages[0])
        pdf.pages[0].obj.Rotate = rotate
        pdf.save(path)
    page = first_page()
    page.text_source = text_source
    for line in page.lines:
        line.original_text = None
    page.lines[0].source = "ocr" if text_source == "mixed" else "pdf"
    result = document(page)
    data = exports.render(result, "pdf", page_image=page_images(result), pdfa="2b", source_pdf=path)
    assert_pdfa_2b(data)
    with pikepdf.open(io.BytesIO(data)) as pdf:
        (made,) = pdf.pages
        # A turned mixed page is rasterised too: its OCR'd lines are in the upright frame.
        kept = kept_as is not None and not (text_source == "mixed" and kept_as)
        assert bool(made.get_images()) is not kept
        assert made.obj.get("/Rotate", 0) == (kept_as if kept else 0)
