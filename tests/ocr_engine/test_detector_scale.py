"""The detector's input is sized by the page's own text: fine scans are detected smaller, and read as well."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ocr_engine import detector_scale
from ocr_engine.config import EngineConfig
from ocr_engine.errors import UnsupportedOption
from ocr_engine.metrics import cer

DATA = Path(__file__).parent / "data"
PAGE = DATA / "corpus" / "libtasn1-5"  # a real manual page rendered at 144 DPI, 10-pt body text
FINE = 300 / 144  # the same page as a 300-DPI scan


def page_image(zoom: float = 1.0) -> Image.Image:
    image = Image.open(f"{PAGE}.png").convert("RGB")
    if zoom == 1.0:
        return image
    return image.resize((round(image.width * zoom), round(image.height * zoom)), Image.Resampling.BICUBIC)


def gray(image: Image.Image) -> np.ndarray:
    return np.asarray(image.convert("L"))


def test_character_height_follows_the_resolution():
    coarse, fine = (detector_scale.small_char_height(gray(page_image(z))) for z in (1.0, FINE))
    assert 6 <= coarse <= 14  # 10-pt type at 144 DPI
    assert fine / coarse == pytest.approx(FINE, rel=0.15)


def test_fine_pages_are_detected_smaller_and_coarse_ones_as_they_are():
    coarse, fine = gray(page_image()), gray(page_image(FINE))
    assert detector_scale.detector_side(coarse, max_side=2560, char_px=10) == max(coarse.shape)
    side = detector_scale.detector_side(fine, max_side=2560, char_px=10)
    assert side <= 0.6 * max(fine.shape)
    assert side >= max(coarse.shape) * 0.9  # about the size at which 10-pt text is 10 px tall
    # Off, the page keeps its size up to the cap, as before.
    assert detector_scale.detector_side(fine, max_side=2560, char_px=None) == 2560


def test_a_page_without_characters_keeps_its_size():
    photo = gray(Image.open(DATA / "photo-no-text.jpg"))
    assert detector_scale.small_char_height(photo) is None
    assert detector_scale.detector_side(photo, max_side=2560, char_px=10) == min(max(photo.shape), 2560)


def test_large_type_is_never_shrunk_below_the_floor():
    blank = np.full((3000, 2000), 255, np.uint8)
    for n in range(60):  # sixty 150-px "characters"
        y, x = 100 + (n // 10) * 400, 100 + (n % 10) * 180
        blank[y:y + 150, x:x + 60] = 0
    assert detector_scale.detector_side(blank, max_side=4000, char_px=10) == detector_scale.MIN_DETECTOR_SIDE


def test_det_char_px_is_checked():
    with pytest.raises(UnsupportedOption, match="det_char_px"):
        EngineConfig(det_char_px=2)


@pytest.mark.models
def test_a_fine_scan_reads_as_well_with_a_smaller_detector_input(ocr_engine):
    truth = Path(f"{PAGE}.txt").read_text()
    coarse = ocr_engine.process_image(page_image(), page_number=1)
    fine_image = page_image(FINE)
    fine = ocr_engine.process_image(fine_image, page_number=1)
    # PaddleOCR records the detector input it was given.
    assert coarse.raw["text_det_params"]["limit_side_len"] == max(page_image().size)
    assert fine.raw["text_det_params"]["limit_side_len"] <= 0.6 * max(fine_image.size)
    assert cer(truth, fine.page.text) <= cer(truth, coarse.page.text) + 0.005
    assert len(fine.page.lines) == pytest.approx(len(coarse.page.lines), abs=2)
