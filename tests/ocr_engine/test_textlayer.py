"""Born-digital PDF pages read from their text layer; scans, images and untrustworthy layers OCR'd."""

from __future__ import annotations

import time
import unicodedata
from pathlib import Path

import pypdfium2
import pytest

from ocr_engine import stages
from ocr_engine.config import EngineConfig
from ocr_engine.engine import Engine
from ocr_engine.inputs import open_document
from ocr_engine.schema import to_dict
from ocr_engine.validation import validate_page
from ocr_engine.metrics import cer
from tests.ocr_engine import textlayer_samples as tls

pytestmark = pytest.mark.models

TIMING_ROUNDING = 0.001  # stage timings are rounded to 0.1 ms each


@pytest.fixture(scope="module")
def ocr_engine(models_dir):
    return Engine(EngineConfig(pipeline="ocr", models_dir=models_dir))


def read_all(engine: Engine, data: bytes):
    with open_document(data) as doc:
        return [out.page for out in engine.process_document(doc)]


def test_auto_reads_text_pages_from_the_layer_and_ocrs_the_rest(ocr_engine):
    pages = read_all(ocr_engine, tls.mixed_pdf())
    assert [p.text_source for p in pages] == ["pdf", "pdf", "pdf", "ocr", "mixed"]
    assert all(p.text_layer_rejected is None for p in pages)
    for page, (title, body) in zip(pages, tls.TEXT_PAGES):
        assert [line.text for line in page.lines] == [title, body]
        assert all(line.source == "pdf" and line.confidence == 1.0 for line in page.lines)
        assert [w.text for w in page.lines[1].words] == body.split()
        validate_page(to_dict(page))
    scan = pages[3]
    assert all(line.source == "ocr" for line in scan.lines)
    assert cer(tls.SCANNED_TITLE, scan.lines[0].text) < 0.1
    mixed = pages[4]
    by_source = {s: " ".join(line.text for line in mixed.lines if line.source == s) for s in ("pdf", "ocr")}
    assert by_source["pdf"].startswith("Harbour operations")
    assert all(word in by_source["ocr"] for word in tls.IMAGE_WORDS)
    ocr_line = next(line for line in mixed.lines if line.source == "ocr")
    # Image-area lines are mapped back into the page: inside the picture, below the text.
    assert ocr_line.bbox[1] > mixed.lines[1].bbox[3]
    validate_page(to_dict(mixed))


def test_each_page_image_is_handed_over_before_the_page_is_read(ocr_engine):
    """``on_image`` (a worker encodes the stored page image meanwhile) gets the image the result's
    frame is in, for text-layer pages and OCR'd ones, before their text is read."""
    read_by = set()
    with open_document(tls.mixed_pdf()) as doc:
        for number in doc.select_pages(None):
            handed = []
            out = ocr_engine.process_page(doc, number, on_image=lambda image: handed.append((image, time.perf_counter())))
            read_ended = time.perf_counter()
            [(image, handed_at)] = handed
            assert image is out.image and image.size == (out.page.width, out.page.height)
            reading = stages.TEXT_LAYER if stages.TEXT_LAYER in out.timings else stages.OCR
            read_by.add(reading)
            read_started = read_ended - out.timings[reading] - out.timings[stages.NORMALIZE]
            assert handed_at <= read_started + TIMING_ROUNDING
            out.image.close()
    assert read_by == {stages.TEXT_LAYER, stages.OCR}


def test_ocr_mode_ocrs_every_page(ocr_engine):
    pages = read_all(ocr_engine.with_options(text_layer="ocr"), tls.mixed_pdf())
    assert [p.text_source for p in pages] == ["ocr"] * 5
    assert all(line.source == "ocr" for p in pages for line in p.lines)
    assert cer(tls.TEXT_PAGES[0][0], pages[0].lines[0].text) < 0.1


@pytest.mark.parametrize(("build", "reason"), [
    (tls.garbage_tounicode_pdf, "unmapped_glyphs"),
    (tls.invisible_layer_pdf, "invisible_ocr_layer"),
    (tls.blank_text_pdf, "ink_mismatch"),
])
def test_untrustworthy_text_layers_are_ocred_with_the_reason(ocr_engine, build, reason):
    (page,) = read_all(ocr_engine, build())
    assert page.text_source == "ocr"
    assert page.text_layer_rejected == reason
    assert all(line.source == "ocr" for line in page.lines)
    if build is not tls.blank_text_pdf:
        text = " ".join(line.text for line in page.lines)
        assert cer(tls.IMAGE_TEXT, text) < 0.1
        assert "Zebra" not in text


def test_with_options_shares_the_loaded_models(ocr_engine):
    view = ocr_engine.with_options(text_layer="ocr")
    assert view._built is ocr_engine._built
    assert (view.config.text_layer, ocr_engine.config.text_layer) == ("ocr", "auto")


BORN_DIGITAL = sorted((Path(__file__).parent / "data" / "born_digital").glob("*.pdf"))
MAX_TEXT_LAYER_CER = 0.002


def layout_words(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


@pytest.mark.parametrize("path", BORN_DIGITAL, ids=lambda p: p.stem)
def test_real_born_digital_pages_match_pdftotext(ocr_engine, path):
    (page,) = read_all(ocr_engine, path.read_bytes())
    assert page.text_source == "pdf" and page.text_layer_rejected is None
    assert page.lines and all(line.source == "pdf" for line in page.lines)
    # pdftotext -layout writes rows top to bottom, left to right: compare in that order.
    rows = sorted(page.lines, key=lambda ln: (round((ln.bbox[1] + ln.bbox[3]) / 2 / (8 * page.scale)), ln.bbox[0]))
    reference = layout_words(path.with_suffix(".txt").read_text())
    assert cer(reference, layout_words(" ".join(ln.text for ln in rows))) <= MAX_TEXT_LAYER_CER
    validate_page(to_dict(page))


def test_structure_reads_text_pages_with_layout_only(models_dir):
    engine = Engine(EngineConfig(pipeline="structure", models_dir=models_dir))
    with open_document(tls.mixed_pdf()) as doc:
        out = next(engine.process_document(doc, [1]))
    page = out.page
    assert page.text_source == "pdf"
    assert [line.text for line in page.lines] == list(tls.TEXT_PAGES[0])
    assert any(r.source == "layout" and r.confidence for r in page.regions)  # the layout model ran
    assert all(line.region_id in {r.id for r in page.regions} for line in page.lines)
    assert "ocr" not in out.timings and out.raw["overall_ocr_res"]["rec_scores"] == [1.0, 1.0]
    validate_page(to_dict(page))


@pytest.mark.parametrize("pipeline", ["ocr", "structure"])
def test_a_table_read_from_a_text_layer_reads_row_by_row(models_dir, pipeline):
    """FHS 3.0 p. 30: a two-column table of directories ("color", "dict", ...) and what they hold,
    one wrapped over two lines. Each name is followed by its own description, in the page's reading
    order, as the PDF's own text has them."""
    path = next(p for p in BORN_DIGITAL if p.stem == "fhs-docbook-fop")
    (page,) = read_all(Engine(EngineConfig(pipeline=pipeline, models_dir=models_dir)), path.read_bytes())
    text = page.text
    rows = ["color", "Color management information", "dict", "Word lists", "doc", "Miscellaneous documentation",
            "nls", "Message catalogs for Native language support", "(optional)", "ppd", "Printer definitions",
            "zoneinfo", "Timezone information"]
    positions = [text.index(f"\n{cell}") for cell in rows]
    assert positions == sorted(positions)
    truth = pypdfium2.PdfDocument(path.read_bytes())[0].get_textpage().get_text_range().replace("\r", "")
    assert cer(truth, text) <= 0.01  # column by column it was 0.066
