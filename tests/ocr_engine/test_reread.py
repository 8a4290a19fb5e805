"""ocr_engine.reread: a box cropped (deskewed) from a page image and read by the pipeline's recognition model."""

from __future__ import annotations

import math

import pytest
from PIL import Image, ImageDraw, ImageFont

from ocr_engine.config import EngineConfig
from ocr_engine.reread import crop_polygon

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"


def line_image(text: str, angle: float = 0) -> Image.Image:
    image = Image.new("RGB", (800, 300), "white")
    ImageDraw.Draw(image).text((100, 130), text, fill="black", font=ImageFont.truetype(FONT, 32))
    return image.rotate(angle, center=(400, 150), fillcolor="white")


def test_crop_of_an_upright_box_is_the_box():
    crop = crop_polygon(line_image("x"), [[90, 120], [500, 120], [500, 180], [90, 180]])
    assert crop.size == (410, 60)


def test_crop_of_a_turned_box_comes_out_upright():
    crop = crop_polygon(line_image("x"), [[0, 0], [400, 40], [394, 100], [-6, 60]])  # turned ~5.7 degrees
    assert crop.width > 5 * crop.height


@pytest.mark.models
def test_reader_reads_a_box_and_a_skewed_box(models_dir):
    from ocr_engine.reread import LineReader

    reader = LineReader(EngineConfig(pipeline="ocr", lang="en", models_dir=models_dir, cpu_threads=1))
    upright = reader.read(line_image("Invoice number 12345"), [[90, 120], [500, 120], [500, 180], [90, 180]])
    # Rotated 4 degrees counter-clockwise about the centre: the box follows the text.
    skewed_image = line_image("Invoice number 12345", angle=4)
    a = math.radians(-4)  # PIL turns counter-clockwise on screen, i.e. by -angle in y-down coordinates

    def turn(x, y):
        dx, dy = x - 400, y - 150
        return [400 + dx * math.cos(a) - dy * math.sin(a), 150 + dx * math.sin(a) + dy * math.cos(a)]

    skewed = reader.read(skewed_image, [turn(90, 120), turn(500, 120), turn(500, 180), turn(90, 180)])

    assert upright[0] == "Invoice number 12345" and upright[1] > 0.9
    assert skewed[0] == "Invoice number 12345"
