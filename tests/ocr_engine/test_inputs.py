"""Input stage: type detection, validation errors, page ranges, page images."""

from __future__ import annotations

import hashlib
import io
import math
import os
import time
import zipfile

import numpy as np
import pypdf
import pytest
from PIL import Image, ImageDraw

from ocr_engine.errors import (
    CorruptFile,
    EmptyDocument,
    EncryptedDocument,
    FileTooLarge,
    ImageTooLarge,
    InputError,
    InvalidPageRange,
    PageOutOfRange,
    TooManyPages,
    UnsupportedFileType,
    UnsupportedOption,
    WrongPassword,
)
from ocr_engine.inputs import Limits, detect_media_type, open_document, parse_page_range
from tests.ocr_engine import bad_files, samples

SUPPORTED = "PDF, PNG, JPEG, TIFF, BMP and WebP"
IMAGE_ENCODINGS = {
    "image/png": ("PNG", {}),
    "image/jpeg": ("JPEG", {}),
    "image/tiff": ("TIFF", {"compression": "tiff_deflate"}),
    "image/bmp": ("BMP", {}),
    "image/webp": ("WEBP", {"lossless": True}),
}


def sample_file(media_type: str) -> bytes:
    page = samples.text_page(dpi=50)
    if media_type == "application/pdf":
        return samples.pdf_from_images([page.image], dpi=50)
    fmt, params = IMAGE_ENCODINGS[media_type]
    return samples.encode(page.image, fmt, **params)


def box_image(mode: str, background, ink) -> Image.Image:
    """200x100 in ``mode``: ``background`` everywhere, a box of ``ink`` at (20, 20)-(80, 60)."""
    image = Image.new(mode, (200, 100), background)
    ImageDraw.Draw(image).rectangle((20, 20, 80, 60), fill=ink)
    return image


def open_fds(path) -> int:
    """How many of this process's file descriptors point at ``path`` (Linux)."""
    target = os.path.realpath(path)
    return sum(os.path.realpath(f"/proc/self/fd/{fd}") == target for fd in os.listdir("/proc/self/fd"))


# Detection ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("media_type", ["application/pdf", *IMAGE_ENCODINGS])
def test_every_supported_type_is_detected_by_signature_not_by_name(media_type, write_file):
    data = sample_file(media_type)
    assert detect_media_type(data[:1024]) == media_type
    with open_document(data, filename="notes.docx") as doc:
        assert (doc.media_type, doc.filename, doc.page_count) == (media_type, "notes.docx", 1)
    with open_document(write_file(data, "scan.gif")) as doc:
        assert (doc.media_type, doc.filename) == (media_type, "scan.gif")
        assert doc.kind == ("pdf" if media_type == "application/pdf" else "image")


def _zip(name: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        archive.writestr(name, "<w:document/>")
    return buf.getvalue()


@pytest.mark.parametrize("data, looks_like", [
    pytest.param(lambda: samples.encode(box_image("RGB", "white", "black"), "GIF"), "a GIF image", id="gif"),
    pytest.param(lambda: _zip("word/document.xml"), "a ZIP archive", id="docx"),
    pytest.param(lambda: b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504), "legacy Microsoft Office", id="doc"),
    pytest.param(lambda: b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + bytes(64), "HEIC", id="heic"),
    pytest.param(lambda: b"\x00\x00\x00\x1cftypisom\x00\x00\x02\x00isomiso2" + bytes(64), "video", id="mp4"),
    pytest.param(lambda: "Größe: 12 pages of notes\n".encode(), "a plain text file", id="text"),
    pytest.param(lambda: b"<!DOCTYPE html><html><body>hi</body></html>", "an HTML page", id="html"),
    pytest.param(lambda: bytes(1000), "not recognised", id="zeros"),
    pytest.param(lambda: b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>', "an SVG image", id="svg"),
    pytest.param(lambda: bytes(range(256)) * 4, "not recognised", id="binary"),
])
def test_unsupported_types_say_what_the_file_looks_like_and_what_is_supported(data, looks_like):
    with pytest.raises(UnsupportedFileType) as caught:
        open_document(data())
    assert caught.value.code == "unsupported_file_type"
    assert looks_like in caught.value.message
    assert SUPPORTED in caught.value.message


def test_an_empty_file_is_an_empty_document(write_file):
    for source in (b"", write_file(b"", "empty.pdf")):
        with pytest.raises(EmptyDocument) as caught:
            open_document(source)
        assert caught.value.to_dict() == {"code": "empty_document", "detail": caught.value.message}
        assert "empty" in caught.value.message


def test_a_missing_path_fails_with_its_own_code(tmp_path):
    with pytest.raises(InputError) as caught:
        open_document(tmp_path / "nowhere.pdf")
    assert caught.value.code == "file_not_found"


# Bad files ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("media_type", ["application/pdf", *IMAGE_ENCODINGS])
def test_a_truncated_file_fails_at_open(media_type):
    with pytest.raises(CorruptFile) as caught:
        open_document(bad_files.truncated(sample_file(media_type), keep=0.9))
    assert caught.value.code == "corrupt_file"
    assert "damaged or incomplete" in caught.value.message


def test_a_truncated_last_tiff_page_fails_at_open(multipage_tiff):
    with pytest.raises(CorruptFile):
        open_document(bad_files.truncated(multipage_tiff.data, keep=0.9))


def test_a_pdf_header_followed_by_garbage_is_corrupt():
    with pytest.raises(CorruptFile):
        open_document(b"%PDF-1.7\n" + bytes(range(256)) * 8)


def test_an_encrypted_pdf_needs_its_password(encrypted_pdf):
    with pytest.raises(EncryptedDocument) as caught:
        open_document(encrypted_pdf)
    assert caught.value.code == "encrypted_document"
    assert "password" in caught.value.message

    with pytest.raises(WrongPassword) as caught:
        open_document(encrypted_pdf, password="guess")
    assert caught.value.code == "wrong_password"
    assert "password" in caught.value.message

    with open_document(encrypted_pdf, password="s3cret") as doc:
        assert doc.page_count == 1
        assert doc.render(1).getextrema()[0][0] < 50  # the report's ink, not a blank page


def test_a_pdf_without_pages_is_an_empty_document(zero_page_pdf):
    with pytest.raises(EmptyDocument) as caught:
        open_document(zero_page_pdf)
    assert caught.value.code == "empty_document"


@pytest.mark.parametrize("fixture", ["report_pdf", "multipage_tiff"])
def test_more_pages_than_the_limit(fixture, request):
    with pytest.raises(TooManyPages) as caught:
        open_document(request.getfixturevalue(fixture).data, limits=Limits(max_pages=2))
    assert caught.value.code == "too_many_pages"
    assert "has 3 pages; the limit is 2" in caught.value.message



def test_a_file_over_the_size_limit_is_refused_before_it_is_read(report_pdf, write_file):
    limits = Limits(max_file_bytes=10_000)
    for source in (report_pdf.data, write_file(report_pdf.data, "big.pdf")):
        with pytest.raises(FileTooLarge) as caught:
            open_document(source, limits=limits)
        assert caught.value.code == "file_too_large"
        assert "the limit is 9.8 KB" in caught.value.message


def test_a_decompression_bomb_is_refused_from_its_header(bomb_png):
    assert len(bomb_png) < 200_000  # 900 megapixels in a small file
    started = time.perf_counter()
    with pytest.raises(ImageTooLarge) as caught:
        open_document(bomb_png)
    assert time.perf_counter() - started < 2  # decoding 900 MP would take far longer
    assert caught.value.code == "image_too_large"


def test_an_image_over_the_pixel_limit_names_its_size():
    data = samples.encode(box_image("RGB", "white", "black"), "PNG")
    with pytest.raises(ImageTooLarge) as caught:
        open_document(data, limits=Limits(max_pixels=19_999))
    assert "200x100 pixels" in caught.value.message
    with open_document(data, limits=Limits(max_pixels=20_000)) as doc:
        assert doc.render(1).size == (200, 100)


def test_a_tiff_page_over_the_pixel_limit_names_the_page(multipage_tiff):
    with pytest.raises(ImageTooLarge) as caught:
        open_document(multipage_tiff.data, limits=Limits(max_pixels=950_000))  # page 1 is 827x1169
    assert caught.value.message.startswith("Page 1 of the image is 827x1169 pixels")


# Page ranges --------------------------------------------------------------------------------------

@pytest.mark.parametrize("spec, pages", [
    (None, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
    ("", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]),
    ("1-3,7", [1, 2, 3, 7]),
    (" 7 , 1 - 2 ", [1, 2, 7]),
    ("3,3,2-4,1", [1, 2, 3, 4]),
    ("4-4", [4]),
    ("8-", [8, 9, 10]),
    ("-2", [1, 2]),
    ("10", [10]),
])
def test_page_ranges(spec, pages):
    assert parse_page_range(spec, 10) == pages


@pytest.mark.parametrize("spec", ["a", "3-1", "0", "0-2", "-0", "-", "1--2", "1-2-3", "1,,2", "2,", "1.5", "²", "٣"])
def test_malformed_page_ranges(spec):
    with pytest.raises(InvalidPageRange) as caught:
        parse_page_range(spec, 10)
    assert caught.value.code == "invalid_page_range"
    assert spec in caught.value.message


@pytest.mark.parametrize("spec", ["11", "8-12", "12-", "-11", "1,99999999999999999999"])
def test_page_ranges_past_the_end(spec):
    with pytest.raises(PageOutOfRange) as caught:
        parse_page_range(spec, 10)
    assert caught.value.code == "page_out_of_range"
    assert "the document has 10 pages" in caught.value.message


def test_document_selects_and_renders_only_its_pages(report_pdf):
    with open_document(report_pdf.data) as doc:
        assert doc.select_pages("2-") == [2, 3]
        with pytest.raises(PageOutOfRange, match="has 3 pages"):
            doc.select_pages("4")
        with pytest.raises(PageOutOfRange):
            doc.render(4)
        rendered = doc.iter_pages([1, 9])
        with pytest.raises(PageOutOfRange):
            next(rendered)  # checked before page 1 is rendered


# Page images --------------------------------------------------------------------------------------

@pytest.mark.parametrize("orientation", [6, 8])
def test_exif_orientation_gives_the_upright_page(orientation):
    jpeg = samples.exif_rotated_jpeg(orientation)
    upright = jpeg.pages[0].image
    stored = Image.open(io.BytesIO(jpeg.data))
    assert stored.size == upright.size[::-1]  # stored on its side
    with open_document(jpeg.data) as doc:
        page = doc.render(1)
    assert page.size == upright.size
    difference = np.abs(np.asarray(page, np.int16) - np.asarray(upright, np.int16)).mean()
    assert difference < 3  # same pixels up to JPEG noise; a wrong turn differs by far more


def _encoded(mode, fmt, background, ink, **params):
    return lambda: samples.encode(box_image(mode, background, ink), fmt, **params)


def _palette_with_transparent_black() -> bytes:
    # Both palette entries are black; only transparency tells the background from the ink.
    image = box_image("P", 0, 1)
    image.putpalette([0, 0, 0] * 2)
    return samples.encode(image, "PNG", transparency=0)


@pytest.mark.parametrize("make", [
    pytest.param(_encoded("1", "PNG", 1, 0), id="1-bit"),
    pytest.param(_encoded("L", "PNG", 255, 0), id="L"),
    pytest.param(lambda: samples.encode(box_image("RGB", "white", "black").convert("P"), "BMP"), id="palette-bmp"),
    pytest.param(_palette_with_transparent_black, id="palette-transparent"),
    pytest.param(_encoded("LA", "PNG", (0, 0), (0, 255)), id="LA"),
    pytest.param(_encoded("RGBA", "PNG", (0, 0, 0, 0), (0, 0, 0, 255)), id="RGBA"),
    pytest.param(_encoded("RGBA", "WEBP", (0, 0, 0, 0), (0, 0, 0, 255), lossless=True), id="RGBA-webp"),
    pytest.param(_encoded("CMYK", "TIFF", (0, 0, 0, 0), (0, 0, 0, 255)), id="CMYK-tiff"),
    pytest.param(_encoded("CMYK", "JPEG", (0, 0, 0, 0), (0, 0, 0, 255), quality=95), id="CMYK-jpeg"),
    # Mid-range ink: Pillow's own conversion clips 16-bit values at 255 and the box would vanish.
    pytest.param(_encoded("I;16", "PNG", 65535, 20000), id="I;16"),
    pytest.param(_encoded("I", "TIFF", 60000, 1000), id="I-32bit"),
    pytest.param(_encoded("F", "TIFF", 1.0, 0.0), id="F-float"),
])
def test_image_modes_become_rgb_on_white_paper(make):
    with open_document(make()) as doc:
        page = doc.render(1)
    assert page.mode == "RGB" and page.size == (200, 100)
    assert min(page.getpixel((5, 5))) >= 240  # background: white, also where it was transparent
    assert max(page.getpixel((50, 40))) <= 100  # the box stays dark


def test_partial_transparency_is_blended_onto_white():
    data = samples.encode(box_image("RGBA", (0, 0, 0, 0), (0, 0, 0, 128)), "PNG")
    with open_document(data) as doc:
        assert doc.render(1).getpixel((50, 40)) == (127, 127, 127)


def test_tiff_pages_are_counted_and_read_in_order(multipage_tiff):
    with open_document(multipage_tiff.data) as doc:
        assert doc.page_count == 3
        rendered = list(doc.iter_pages())
        assert doc.page_dpi(2) == 100.0
        assert doc.page_scale(2, scale=3.0) == 1.0  # images are read at their own size
    assert [n for n, _ in rendered] == [1, 2, 3]
    assert [image.size for _, image in rendered] == [page.image.size for page in multipage_tiff.pages]
    assert all(image.mode == "RGB" for _, image in rendered)  # page 2 is stored 1-bit


def test_pdf_pages_are_rendered_at_the_requested_scale(report_pdf):
    width_pt, height_pt = 1240 / 150 * 72, 1754 / 150 * 72  # the page images are 150 DPI
    with open_document(report_pdf.data) as doc:
        assert doc.page_scale(1) == 2.0 and doc.page_dpi(1) == 144.0
        page = doc.render(1)
        small = doc.render(1, scale=1.0)
        order = [n for n, _ in doc.iter_pages([3, 1], scale=0.5)]
        with pytest.raises(UnsupportedOption):
            doc.render(1, scale=0)
    # pdfium sizes the bitmap as ceil(points x scale)
    assert page.size == (math.ceil(width_pt * 2), math.ceil(height_pt * 2)) == (1191, 1684)
    assert small.size == (596, 842)
    assert page.mode == "RGB"
    assert order == [3, 1]
    original = report_pdf.pages[0].image
    difference = np.abs(np.asarray(page.resize(original.size), np.int16) - np.asarray(original, np.int16)).mean()
    assert difference < 3  # page 1 is the report page, not blank, not another page


def test_an_oversized_pdf_page_is_rendered_at_a_lower_scale(report_pdf):
    with open_document(report_pdf.data, limits=Limits(max_render_pixels=1_000_000)) as doc:
        scale = doc.page_scale(1)
        page = doc.render(1)
        assert doc.page_dpi(1) == pytest.approx(72 * scale)
    assert 1.3 < scale < 2.0
    assert page.width * page.height <= 1_000_000
    assert page.width == math.ceil(1240 / 150 * 72 * scale)


@pytest.mark.parametrize("media_type", ["application/pdf", "image/png", "image/tiff"])
def test_paths_and_bytes_give_the_same_document(media_type, write_file):
    data = sample_file(media_type)
    path = write_file(data, "upload.bin")
    with open_document(data) as from_bytes, open_document(path) as from_path:
        for doc in (from_bytes, from_path):
            assert doc.sha256 == hashlib.sha256(data).hexdigest()
            assert doc.size_bytes == len(data) and doc.media_type == media_type and doc.page_count == 1
        assert (from_bytes.filename, from_path.filename) == (None, "upload.bin")
        assert np.array_equal(np.asarray(from_bytes.render(1)), np.asarray(from_path.render(1)))


@pytest.mark.parametrize("fixture", ["report_pdf", "multipage_tiff"])
def test_closing_a_document_releases_its_file(fixture, request, write_file):
    path = write_file(request.getfixturevalue(fixture).data, "document")
    with open_document(path) as doc:
        doc.render(2)
        assert open_fds(path) == 1  # read from the file as pages need it, not loaded whole
    assert open_fds(path) == 0
    with pytest.raises(ValueError, match="closed"):
        doc.render(1)


def test_a_rotated_pdf_page_is_rendered_as_displayed(report_pdf):
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(report_pdf.data))
    writer.pages[0].rotate(90)
    buf = io.BytesIO()
    writer.write(buf)
    with open_document(buf.getvalue()) as doc:
        assert doc.render(1).size == (1684, 1191)  # landscape, as a viewer shows it
        assert doc.render(2).size == (1191, 1684)


def test_a_long_encrypted_pdf_renders_every_page():
    # Past the point where the reader reopens the document to free pdfium's caches.
    data = bad_files.encrypted_pdf("pw", samples.report_pdf(pages=40, dpi=30).data)
    with open_document(data, password="pw") as doc:
        pages = dict(doc.iter_pages(scale=0.5))
    assert sorted(pages) == list(range(1, 41))
    assert np.array_equal(np.asarray(pages[37]), np.asarray(pages[1]))  # both the report page
    assert not np.array_equal(np.asarray(pages[38]), np.asarray(pages[1]))
