"""Searchable PDF: each page image with the recognised lines over it as invisible text.

Page size is the image size at the page's resolution (PDF pages rendered at
``scale`` have 72 x scale DPI, so the output page matches the original's size in
points). Each line is written in reading order, in text render mode 3
(invisible), along its polygon's baseline and stretched horizontally to the
line's width, so selecting or searching highlights the words in the image. The
font is ``glyphless``: it covers every script, so CJK text is searchable too.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Callable

from PIL import Image
from reportlab import rl_config
from reportlab.lib.utils import ImageReader
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfgen import canvas

from ..errors import InputError
from ..schema import DocumentResult, Line, Page
from . import glyphless
from .blocks import page_blocks

JPEG_QUALITY = 80  # page images dominate the file; 80 keeps text crisp at a fraction of PNG's size

# reportlab wraps binary streams in ASCII85 by default, which inflates every
# page image by a quarter; PDFs are binary anyway. The setting is process-wide
# and only changes how streams are encoded, never what they show.
rl_config.useA85 = 0

PageImage = Callable[[int], Image.Image | None]

# The glyphless font covers the Basic Multilingual Plane only, and reportlab's
# ToUnicode map cannot write characters beyond it: such a character (an emoji,
# a rare CJK ideograph) would select .notdef, which PDF/A forbids, and extract as
# nothing. U+FFFD, the replacement character, at least says one is there.
_BEYOND_BMP = re.compile("[\U00010000-\U0010FFFF]")


def render(result: DocumentResult, page_image: PageImage | None) -> bytes:
    """``page_image(page_number)`` returns the image the engine read for that page."""
    if page_image is None:
        raise _missing("A searchable PDF needs the page images, and none were given.")
    pdf, buffer, font = _canvas(result)
    for page in result.pages:
        image = page_image(page.page_number)
        if image is None:
            raise _missing(f"The image of page {page.page_number} is no longer available, so no PDF can be made.")
        _page(pdf, page, image, font)
    pdf.save()
    return buffer.getvalue()


def invisible_text(result: DocumentResult, page: Page, lines: Callable[[Line], bool]) -> bytes:
    """A one-page PDF of ``page``'s size with the invisible text of the lines ``lines`` picks, and no image."""
    pdf, buffer, font = _canvas(result)
    _page(pdf, page, None, font, lines)
    pdf.save()
    return buffer.getvalue()


def _canvas(result: DocumentResult) -> tuple[canvas.Canvas, io.BytesIO, str]:
    font = glyphless.register()
    buffer = io.BytesIO()
    # The invisible-text font as the initial one: reportlab would otherwise list
    # Helvetica, never embedded and never used, in every page's resources.
    pdf = canvas.Canvas(buffer, pageCompression=1, initialFontName=font)
    pdf.setCreator(f"ocr_engine {result.engine.version}")
    if result.source.get("filename"):
        pdf.setTitle(result.source["filename"])
    return pdf, buffer, font


def _page(pdf: canvas.Canvas, page: Page, image: Image.Image | None, font: str,
          lines: Callable[[Line], bool] = lambda line: True) -> None:
    points_per_pixel = 72.0 / (page.dpi or 72.0 * page.scale)
    width, height = page.width * points_per_pixel, page.height * points_per_pixel
    pdf.setPageSize((width, height))
    if image is not None:
        # An image of another size than the engine saw is stretched to the page, so
        # the text layer, placed in the engine's pixel coordinates, still lines up.
        pdf.drawImage(_jpeg(image), 0, 0, width, height)
    for block in page_blocks(page):
        for line in block.lines:
            if lines(line):
                _line(pdf, line, points_per_pixel, height, font)
    pdf.showPage()


def _line(pdf: canvas.Canvas, line: Line, scale: float, page_height: float, font: str) -> None:
    text = _BEYOND_BMP.sub("\ufffd", line.text.strip())
    if not text:
        return
    x0, y0, x1, y1 = line.bbox
    corners = line.polygon if len(line.polygon) == 4 else [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
    # PDF space: points, origin bottom-left. Corners run top-left, top-right, bottom-right, bottom-left.
    (tlx, tly), _, (brx, bry), (blx, bly) = [(x * scale, page_height - y * scale) for x, y in corners]
    width = math.hypot(brx - blx, bry - bly)
    size = math.hypot(tlx - blx, tly - bly)  # the font's em is ascent + descent, so size = line height
    if width <= 0 or size <= 0:
        return
    cos, sin = (brx - blx) / width, (bry - bly) / width
    lift = -glyphless.DESCENT / glyphless.EM * size  # baseline sits one descent above the bottom edge
    layer = pdf.beginText()
    layer.setTextRenderMode(3)
    layer.setFont(font, size)
    layer.setTextTransform(cos, sin, -sin, cos, blx - sin * lift, bly + cos * lift)
    layer.setHorizScale(100.0 * width / pdfmetrics.stringWidth(text, font, size))
    layer.textOut(text)
    pdf.drawText(layer)


def _jpeg(image: Image.Image) -> ImageReader:
    if image.mode not in ("RGB", "L"):
        image = image.convert("RGB")
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=JPEG_QUALITY)
    buffer.seek(0)
    return ImageReader(buffer)


def _missing(message: str) -> InputError:
    return InputError(message, code="page_image_missing")
