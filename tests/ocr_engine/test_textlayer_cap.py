"""A text-layer page past EngineConfig.text_layer_max_glyphs is OCR'd: its characters are never read one by one."""

from __future__ import annotations

import pytest

from ocr_engine import textlayer
from ocr_engine.config import EngineConfig
from ocr_engine.engine import Engine
from ocr_engine.errors import UnsupportedOption
from ocr_engine.inputs import open_document
from ocr_engine.metrics import cer
from tests.ocr_engine import textlayer_samples as tls

DEFAULT_CAP = EngineConfig().text_layer_max_glyphs


def plan(data: bytes, max_glyphs: int) -> textlayer.PagePlan:
    with open_document(data) as doc:
        image = doc.render(1, scale=1.0)
        return textlayer.plan_page(doc, 1, image, "auto", max_glyphs=max_glyphs)


def test_a_page_past_the_cap_is_planned_for_ocr_with_the_reason():
    assert plan(tls.glyph_flood_pdf(DEFAULT_CAP + 200), DEFAULT_CAP).rejected == "too_many_glyphs"
    title, body = tls.TEXT_PAGES[0]
    under = plan(tls.text_page_pdf(), max_glyphs=len(title + body) + 10)
    assert under.use_text and [line.text for line in under.lines] == [title, body]
    over = plan(tls.text_page_pdf(), max_glyphs=len(title) // 2)
    assert not over.use_text and over.rejected == "too_many_glyphs" and not over.lines


def test_the_cap_must_be_positive():
    with pytest.raises(UnsupportedOption):
        EngineConfig(text_layer_max_glyphs=0)


@pytest.mark.models
def test_a_page_past_the_cap_is_read_by_ocr(models_dir):
    engine = Engine(EngineConfig(pipeline="ocr", models_dir=models_dir, text_layer_max_glyphs=20))
    with open_document(tls.text_page_pdf()) as doc:
        (out,) = list(engine.process_document(doc))
    page = out.page
    assert (page.text_source, page.text_layer_rejected) == ("ocr", "too_many_glyphs")
    assert page.lines and all(line.source == "ocr" for line in page.lines)
    assert cer(tls.TEXT_PAGES[0][0], page.lines[0].text) < 0.1
