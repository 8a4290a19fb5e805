"""The searchable PDF export of hand-built results: page sizes, the image, and each line's text on its line."""

from __future__ import annotations

import io

import pypdf
import pypdfium2
import pytest

from ocr_engine import exports
from ocr_engine.errors import InputError
from ocr_engine.schema import DocumentResult, Page
from tests.ocr_engine.hand_results import document, first_page, page_images, second_page


@pytest.fixture
def result() -> DocumentResult:
    return document(first_page(), second_page())


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
