"""A TrueType font with one blank glyph for every character of the Basic Multilingual Plane.

The searchable PDF's text layer is invisible, so glyph shapes never matter, but
each character must map to a glyph: reportlab writes characters a font lacks as
code 0, and they then extract as nothing. DejaVu Sans, for one, has no CJK, so
Chinese and Japanese pages came out of a DejaVu text layer empty. Tesseract and
OCRmyPDF solve this the same way ("GlyphLessFont"). The font is ~700 bytes,
built here once per process rather than shipped as a binary.

Metrics: 1000 units per em, every glyph 500 wide, ascent 800, descent -200, so a
font size equal to a line's height makes the text box match the line box. The
glyph's outline is that box: never drawn (the text is invisible), but viewers
size selection highlights from it, and pdfium drops one-character text whose
glyph has no outline at all.
"""

from __future__ import annotations

import functools
import io
import struct

from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont, TTFontMaker

FONT_NAME = "OcrInvisible"
ADVANCE = 500
ASCENT = 800
DESCENT = -200
EM = 1000
# created and modified, in seconds since 1904 (2024-01-01): font readers such as
# fontTools, which the PDF/A check uses, warn about a date of 0.
FONT_DATE = 3786912000


@functools.cache
def register() -> str:
    """Register the font with reportlab (once) and return its name."""
    # shapable=False: keep characters in logical order; shaping would reorder them for display.
    pdfmetrics.registerFont(TTFont(FONT_NAME, io.BytesIO(font_bytes()), shapable=False))
    return FONT_NAME


def font_bytes() -> bytes:
    # cmap format 13 maps whole ranges to one glyph: glyph 1 for every printable
    # BMP character (surrogates and U+FFFE/FFFF excluded; characters beyond the
    # BMP, rare in OCR output, are written as U+FFFD: see pdf.py).
    groups = [(0x20, 0xD7FF, 1), (0xE000, 0xFFFD, 1)]
    cmap = struct.pack(">HHHHI", 0, 1, 3, 10, 12) + struct.pack(
        ">HHIII", 13, 0, 16 + 12 * len(groups), 0, len(groups)
    ) + b"".join(struct.pack(">3I", *group) for group in groups)
    tables = {
        "cmap": cmap,
        # version, revision, checksum (filled by TTFontMaker), magic, flags, units/em,
        # created, modified, bbox, macStyle, lowest ppem, direction, short loca, glyf format
        "head": struct.pack(
            ">HHHHIIHHqq4h2H3h", 1, 0, 1, 0, 0, 0x5F0F3CF5, 0, EM, FONT_DATE, FONT_DATE,
            0, DESCENT, ADVANCE, ASCENT, 0, 8, 2, 0, 0
        ),
        "hhea": struct.pack(
            ">HH3hH3h3h4hhH", 1, 0, ASCENT, DESCENT, 0, ADVANCE, 0, 0, ADVANCE, 1, 0, 0, 0, 0, 0, 0, 0, 2
        ),
        # version 1.0, 2 glyphs, at most 4 points in 1 contour, 1 zone
        "maxp": struct.pack(">HHH13H", 1, 0, 2, 4, 1, 0, 0, 1, *([0] * 8)),
        # OS/2 version 1; fsType 0 allows embedding and subsetting.
        "OS/2": struct.pack(
            ">HhHHHhhhhhhhhhhh10s4I4sHHHhhhHH2I", 1, ADVANCE, 400, 5, 0, *([0] * 11), b"\0" * 10,
            0, 0, 0, 0, b"NONE", 0x40, 0x20, 0xFFFD, ASCENT, DESCENT, 0, ASCENT, -DESCENT, 1, 0,
        ),
        "post": struct.pack(">HHhHhhI4I", 3, 0, 0, 0, -100, 50, 0, 0, 0, 0, 0),
        "hmtx": struct.pack(">4H", ADVANCE, 0, ADVANCE, 0),
        # Short offsets (bytes / 2): .notdef is empty, glyph 1 follows.
        "loca": struct.pack(">3H", 0, 0, len(_BOX_GLYPH) // 2),
        "glyf": _BOX_GLYPH,
        "name": _name_table(),
    }
    maker = TTFontMaker()
    for tag, data in tables.items():
        maker.add(tag, data)
    return maker.makeStream()


# One closed contour around the advance box: contours, bbox, end point, no
# instructions, four on-curve flags, then x and y as deltas; padded to 4 bytes.
_BOX_GLYPH = struct.pack(
    ">h4hHH4B4h4h2x", 1, 0, DESCENT, ADVANCE, ASCENT, 3, 0, 1, 1, 1, 1,
    0, ADVANCE, 0, -ADVANCE, DESCENT, 0, ASCENT - DESCENT, 0,
)


def _name_table() -> bytes:
    records, strings = [], b""
    for name_id, value in ((1, FONT_NAME), (2, "Regular"), (4, FONT_NAME), (6, FONT_NAME)):
        encoded = value.encode("utf-16-be")
        records.append(struct.pack(">6H", 3, 1, 0x409, name_id, len(encoded), len(strings)))
        strings += encoded
    return struct.pack(">3H", 0, len(records), 6 + 12 * len(records)) + b"".join(records) + strings
