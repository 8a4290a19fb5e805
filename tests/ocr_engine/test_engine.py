"""The engine on real models: recognised text, region types, tables, reading order, schema."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from ocr_engine.config import EngineConfig
from ocr_engine.engine import Engine, assemble_document
from ocr_engine.inputs import open_document
from ocr_engine.schema import to_dict
from ocr_engine.validation import validate_page, validate_result
from ocr_engine.metrics import cer
from ocr_engine.pipelines.paddle import bgr_array
from tests.ocr_engine import samples, scans

pytestmark = pytest.mark.models
MAX_CER = 0.02


def read(engine: Engine, sample: samples.SamplePage):
    return engine.process_image(sample.image, page_number=1, scale=sample.dpi / 72, dpi=sample.dpi).page


def line_text(page) -> str:
    return "\n".join(line.text for line in page.lines)


def assert_lines_mapped(page):
    region_ids = {r.id for r in page.regions}
    assert page.lines, "no lines recognised"
    assert all(line.region_id in region_ids for line in page.lines)
    assert [line.order for line in page.lines] == list(range(1, len(page.lines) + 1))
    assert [r.order for r in page.regions] == list(range(1, len(page.regions) + 1))


def test_report_page_structure_finds_title_text_and_table(structure_engine):
    sample = samples.report_page(dpi=144)
    page = read(structure_engine, sample)

    validate_page(to_dict(page))
    assert_lines_mapped(page)
    assert cer(sample.text, line_text(page)) <= MAX_CER
    by_type = {}
    for region in page.regions:
        by_type.setdefault(region.type, []).append(region)
    assert {"title", "text", "table"} <= set(by_type)
    assert cer(samples.REPORT_TITLE, by_type["title"][0].text) <= MAX_CER
    assert by_type["title"][0].order < by_type["table"][0].order

    (table,) = page.tables
    assert table.region_id == by_type["table"][0].id
    assert (table.n_rows, table.n_cols) == (4, 3)
    grid = [[c.text for c in table.cells if c.row == r] for r in range(table.n_rows)]
    assert grid == samples.REPORT_TABLE
    assert all(c.bbox is not None for c in table.cells)
    assert "<table" in table.html and "Revenue" in table.html


def test_table_lines_read_row_by_row(structure_engine):
    sample = samples.report_page(dpi=144)
    page = read(structure_engine, sample)
    table_region = next(r for r in page.regions if r.type == "table")
    cells_read = [line.text for line in page.lines if line.region_id == table_region.id]
    assert cells_read == [cell for row in samples.REPORT_TABLE for cell in row]


def test_ocr_pipeline_has_the_same_shape(ocr_engine):
    sample = samples.report_page(dpi=144)
    page = read(ocr_engine, sample)
    validate_page(to_dict(page))
    assert_lines_mapped(page)
    assert cer(sample.text, line_text(page)) <= MAX_CER
    assert all(r.source == "ocr" for r in page.regions)
    # Without a layout model the table is found from its aligned rows, read row by row.
    (table,) = page.tables
    assert [[c.text for c in table.cells if c.row == r] for r in range(table.n_rows)] == samples.REPORT_TABLE
    # Paragraph grouping: the title and each paragraph are separate regions.
    assert any(r.text == samples.REPORT_TITLE for r in page.regions)
    # Words come back with boxes inside their line.
    line = page.lines[1]
    # PaddleOCR splits punctuation into words of its own, so compare without spaces.
    assert line.words and "".join(w.text for w in line.words) == line.text.replace(" ", "")
    assert all(line.bbox[0] - 2 <= w.bbox[0] and w.bbox[2] <= line.bbox[2] + 2 for w in line.words)


def test_two_columns_read_column_by_column(engine):
    sample = samples.two_column_page(dpi=144)
    page = read(engine, sample)
    assert_lines_mapped(page)
    left, right = sample.columns
    expected = "\n".join([sample.title, *left, *right])
    assert cer(expected, line_text(page)) <= MAX_CER
    assert page.text.index("apple") < page.text.index("river")


def test_large_scan_is_read_in_full(ocr_engine):
    sample = samples.large_scan()
    page = read(ocr_engine, sample)
    assert cer(sample.text, line_text(page)) <= MAX_CER
    middle = sample.image.height / 2
    assert any(line.bbox[3] < middle for line in page.lines)
    assert any(line.bbox[1] > middle for line in page.lines)


def test_without_the_memory_arena_pages_read_the_same(models_dir, ocr_engine):
    from ocr_engine.pipelines import paddle

    config = EngineConfig(pipeline="ocr", models_dir=models_dir, memory_arena=False)
    assert paddle.prepare_process(config)["engine_config"]["enable_cpu_mem_arena"] is False
    sample = samples.text_page(dpi=100)
    lean = read(Engine(config), sample)
    assert [ln.text for ln in lean.lines] == [ln.text for ln in read(ocr_engine, sample).lines]
    assert cer(sample.text, line_text(lean)) <= MAX_CER


def _has_openvino_provider() -> bool:
    import onnxruntime

    return "OpenVINOExecutionProvider" in onnxruntime.get_available_providers()


@pytest.mark.skipif(not _has_openvino_provider(), reason="onnxruntime-openvino is not installed")
@pytest.mark.parametrize("pipeline", ["ocr", "structure"])
def test_openvino_reads_a_real_page_as_onnxruntime_does(models_dir, request, pipeline):
    from ocr_engine.pipelines import paddle

    config = EngineConfig(pipeline=pipeline, models_dir=models_dir, inference="openvino", cpu_threads=1)
    options = paddle.prepare_process(config)["engine_config"]
    assert options["providers"] == ["OpenVINOExecutionProvider"]
    assert options["provider_options"]["num_of_threads"] == "1"
    image, truth = scans.real_page("debian-reference-en-p108")
    openvino = Engine(config).process_image(image, page_number=1).page
    onnxruntime = request.getfixturevalue(f"{pipeline}_engine").process_image(image, page_number=1).page
    # f32 on both: the same lines, and the page's text within the bound the real-page tests hold.
    assert [ln.text for ln in openvino.lines] == [ln.text for ln in onnxruntime.lines]
    assert cer(truth, openvino.text) <= 0.04


@pytest.mark.skipif(_has_openvino_provider(), reason="onnxruntime-openvino is installed")
def test_openvino_without_its_provider_says_what_to_install(models_dir):
    from ocr_engine.errors import EngineUnavailable

    with pytest.raises(EngineUnavailable, match="onnxruntime-openvino"):
        Engine(EngineConfig(pipeline="ocr", models_dir=models_dir, inference="openvino"))


def test_openvino_is_for_the_onnxruntime_backend_on_the_cpu():
    from ocr_engine.errors import UnsupportedOption

    with pytest.raises(UnsupportedOption, match="openvino"):
        EngineConfig(inference="openvino", backend="paddle")
    with pytest.raises(UnsupportedOption, match="inference"):
        EngineConfig(inference="tensorrt")


@pytest.mark.parametrize("lang", ["de", "fr", "es", "nl"])
def test_languages_with_diacritics(models_dir, ocr_engine, lang):
    sample = samples.language_page(lang, dpi=144)
    # PP-OCRv6 small is multilingual: one model set serves every offline language.
    assert EngineConfig(pipeline="ocr", lang=lang, models_dir=models_dir).lang == lang
    page = read(ocr_engine, sample)
    assert cer(sample.text, line_text(page)) <= MAX_CER


def test_multipage_tiff_and_exif_rotation(ocr_engine):
    tiff = samples.multipage_tiff()
    with open_document(tiff.data) as doc:
        pages = [out.page for out in ocr_engine.process_document(doc)]
    assert len(pages) == len(tiff.pages) >= 2
    for page, expected in zip(pages, tiff.pages):
        assert cer(expected.text, line_text(page)) <= MAX_CER

    jpeg = samples.exif_rotated_jpeg()
    with open_document(jpeg.data) as doc:
        (out,) = list(ocr_engine.process_document(doc))
    assert cer(jpeg.pages[0].text, line_text(out.page)) <= MAX_CER


def test_pdf_document_result_is_valid_and_complete(structure_engine):
    pdf = samples.report_pdf(pages=2)
    with open_document(pdf.data, filename="report.pdf") as doc:
        outputs = list(structure_engine.process_document(doc, doc.select_pages("1-2")))
        source = {"filename": doc.filename, "media_type": doc.media_type, "sha256": doc.sha256,
                  "page_count": doc.page_count}
    result = assemble_document(pages=[o.page for o in outputs], engine=structure_engine.info, source=source)
    validate_result(to_dict(result))
    assert [p.page_number for p in result.pages] == [1, 2]
    assert result.pages[0].width == pytest.approx(8.27 * 72 * 2, abs=2)
    assert result.text.count("\f") == 1
    assert samples.REPORT_TITLE in result.markdown
    assert all(o.raw.get("parsing_res_list") is not None for o in outputs)
    assert result.engine.models["layout_detection"] == "PicoDet_layout_1x"


@pytest.mark.parametrize(("mode", "colour", "bgr"), [
    ("RGB", (200, 120, 40), [40, 120, 200]), ("RGBA", (200, 120, 40, 255), [40, 120, 200]), ("L", 90, [90, 90, 90]),
])
def test_images_reach_paddleocr_as_bgr(mode, colour, bgr):
    array = bgr_array(Image.new(mode, (3, 2), colour))
    assert array.shape == (2, 3, 3) and array.flags.c_contiguous
    assert array[1, 2].tolist() == bgr


def test_offline_languages_are_paddleocrs_pp_ocrv6_languages():
    from paddleocr._pipelines.ocr import _PPOCRV6_LANGS

    from ocr_engine.config import OFFLINE_LANGUAGES

    aliases = {"french", "german"}  # PaddleOCR's spelled-out duplicates of fr / de
    assert set(OFFLINE_LANGUAGES) == set(_PPOCRV6_LANGS) - aliases


@pytest.mark.parametrize("scan", [False, True], ids=["clean", "scanned"])
def test_typeset_two_column_paper(engine, scan):
    import pypdfium2

    pdf = samples.paper_pdf()
    truth = pypdfium2.PdfDocument(pdf)[0].get_textpage().get_text_range().replace("\r", "")
    with open_document(pdf) as doc:
        image = doc.render(1, scale=2.0)
    if scan:
        image = scans.scanned(image)
    page = engine.process_image(image, page_number=1, scale=2.0, dpi=144).page
    assert_lines_mapped(page)
    assert cer(truth, line_text(page)) <= MAX_CER  # wrong column order would cost far more
    if not scan:  # on a skewed, noisy scan heading splits and the tiny page number are not yet reliable
        headings = [r for r in page.regions if r.text.replace(" ", "") in {"1Introduction", "2RelatedWork", "4Experiments"}]
        assert len(headings) == 3  # each section heading is a region of its own
        assert page.regions[-1].type == "page_number" and page.regions[-1].text == "1"


# PP-OCR losses that OCRmyPDF 17.13-17.15 fixed in its path, checked in ours (the 1,000-region cap of
# the text detector: tests/ocr_engine/test_models_pack.py).
_DEJAVU = "/usr/share/fonts/truetype/dejavu/"


def test_narrow_column_of_short_values_is_read_value_by_value(ocr_engine):
    """Stacked short values at tight leading: not merged into one tall box and read as vertical text."""
    from PIL import ImageDraw, ImageFont

    font = ImageFont.truetype(_DEJAVU + "DejaVuSans.ttf", 18)
    values = [str((i * 37) % 100) for i in range(30)]
    page = Image.new("RGB", (1190, 1684), "white")
    draw = ImageDraw.Draw(page)
    for i, value in enumerate(values):
        draw.text((110, 110 + i * 21), value, font=font, fill="black")
        draw.text((300, 110 + i * 21), "the reading order of a page of text in columns", font=font, fill="black")
    out = ocr_engine.process_image(page, page_number=1)
    assert [ln.text for ln in out.page.lines if ln.bbox[2] < 250] == values


def test_one_bit_scan_reads_as_well_from_a_tiff_as_from_a_pdf(ocr_engine, tmp_path):
    """A 1-bit page is rendered with grey edges, never dithered: its strokes survive the PDF path."""
    from PIL import ImageDraw, ImageFont

    font = ImageFont.truetype(_DEJAVU + "DejaVuSerif.ttf", 24)
    text = "The quick brown fox jumps over the lazy dog 0123456789."
    page = Image.new("L", (2480, 640), 255)
    draw = ImageDraw.Draw(page)
    for i in range(10):
        draw.text((100, 100 + i * 40), text, font=font, fill=0)
    scan = page.point(lambda v: 255 if v > 128 else 0).convert("1", dither=Image.Dither.NONE)
    scan.save(tmp_path / "scan.tif", compression="group4", dpi=(300, 300))
    scan.save(tmp_path / "scan.pdf", resolution=300)
    with open_document(tmp_path / "scan.pdf") as doc:
        rendered = np.asarray(doc.render(1, 2.0).convert("L"))
    assert ((rendered > 40) & (rendered < 215)).mean() > 0.01  # grey edges: scaled, not dithered
    for name in ("scan.tif", "scan.pdf"):
        with open_document(tmp_path / name) as doc:
            (out,) = list(ocr_engine.process_document(doc))
        assert cer("\n".join([text] * 10), out.page.text) < 0.02
