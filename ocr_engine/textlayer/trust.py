"""When a page's text layer must not be used, and which areas of a text page still need OCR."""

from __future__ import annotations

import re

import numpy as np

from .extract import INVISIBLE_RENDER_MODE, Char, PageText

UNMAPPED_GLYPHS = "unmapped_glyphs"
INVISIBLE_OCR_LAYER = "invisible_ocr_layer"
INK_MISMATCH = "ink_mismatch"
TOO_MANY_GLYPHS = "too_many_glyphs"  # past EngineConfig.text_layer_max_glyphs: not read at all

# Shares of a page's characters past which its text layer is rejected. A few odd
# glyphs (a dingbat bullet, a logo font) are normal; a broken ToUnicode map
# garbles most of the page.
MAX_UNMAPPED_SHARE = 0.05
MAX_INVISIBLE_SHARE = 0.5
MIN_INKED_SHARE = 0.7
_INK_CONTRAST = 48  # grey levels between darkest and lightest pixel of a glyph box
_INK_SAMPLE = 400  # characters checked for ink; enough for the share, bounded time
_CID = re.compile(r"\(cid:\d+\)")
# An image needs this much of the page (and side in pixels) before it is worth OCR.
MIN_IMAGE_SHARE = 0.01
MIN_IMAGE_SIDE = 24


def rejection(text: PageText, gray: np.ndarray) -> str | None:
    """Why this page's text layer cannot be trusted, or None when it can."""
    glyphs = [c for c in text.chars if not c.text.isspace()]
    if not glyphs:
        return None
    joined = "".join(c.text for c in glyphs)
    unmapped = sum(_unmapped(c) for c in glyphs) + 5 * len(_CID.findall(joined))
    if unmapped > MAX_UNMAPPED_SHARE * len(glyphs):
        return UNMAPPED_GLYPHS
    visible = [c for c in glyphs if c.render_mode != INVISIBLE_RENDER_MODE]
    if len(visible) < (1 - MAX_INVISIBLE_SHARE) * len(glyphs):
        return INVISIBLE_OCR_LAYER
    step = max(1, len(visible) // _INK_SAMPLE)
    sample = [c for c in visible[::step] if _measurable(c)]
    if sample and sum(_inked(c, gray) for c in sample) < MIN_INKED_SHARE * len(sample):
        return INK_MISMATCH
    return None


def ocr_areas(text: PageText, width: int, height: int) -> list[list[int]]:
    """Image objects big enough to hold text that no text-layer character falls in: OCR these."""
    centres = [((c.box[0] + c.box[2]) / 2, (c.box[1] + c.box[3]) / 2) for c in text.chars if c.text.strip()]
    areas = []
    for box in text.image_boxes:
        x0, y0 = max(0, int(box[0])), max(0, int(box[1]))
        x1, y1 = min(width, int(box[2] + 1)), min(height, int(box[3] + 1))
        if min(x1 - x0, y1 - y0) < MIN_IMAGE_SIDE or (x1 - x0) * (y1 - y0) < MIN_IMAGE_SHARE * width * height:
            continue
        if any(x0 <= cx <= x1 and y0 <= cy <= y1 for cx, cy in centres):
            continue
        areas.append([x0, y0, x1, y1])
    return areas


def _unmapped(ch: Char) -> bool:
    code = ch.unicode
    return (code == 0 or code == 0xFFFD or 0xE000 <= code <= 0xF8FF or code >= 0xF0000
            or (code < 0x20 and ch.text not in "\t\r\n"))


def _measurable(ch: Char) -> bool:
    x0, y0, x1, y1 = ch.ink_box
    return x1 - x0 >= 1 and y1 - y0 >= 1


def _inked(ch: Char, gray: np.ndarray) -> bool:
    x0, y0, x1, y1 = ch.ink_box
    patch = gray[max(0, int(y0) - 1):int(y1) + 2, max(0, int(x0) - 1):int(x1) + 2]
    return patch.size > 0 and int(patch.max()) - int(patch.min()) >= _INK_CONTRAST
