"""A PDF page's text layer through pypdfium2: characters with boxes -> words -> lines.

Boxes come out in the rendered page image's pixel frame (PDF points x scale,
y down, crop box origin, page rotation applied), the frame OCR lines use, so the
normaliser cannot tell the two apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

INVISIBLE_RENDER_MODE = 3  # PDF text render mode 3: neither fill nor stroke (an OCR layer)
_NEWLINES = {"\r", "\n"}
_LINE_END_HYPHEN = 0x02
# A gap wider than this many character heights ends a line: two columns or a
# table's cells share a baseline but are separate lines for reading order.
_LINE_GAP = 2.0
# Some producers (groff via Ghostscript) position words without space characters;
# a gap past this many character heights is a word break (letters sit at ~0).
_WORD_GAP = 0.12


@dataclass
class Char:
    text: str
    box: list[float]  # x0, y0, x1, y1 in image pixels (loose: font ascent to descent)
    ink_box: list[float]  # the glyph's own tight box, for the ink check
    unicode: int
    render_mode: int


@dataclass
class TextWord:
    text: str
    box: list[float]


@dataclass
class TextLine:
    text: str
    box: list[float]
    words: list[TextWord] = field(default_factory=list)


@dataclass
class PageText:
    chars: list[Char]
    lines: list[TextLine]
    image_boxes: list[list[float]]  # the page's image objects, in pixels


class _Frame:
    """PDF user space -> rendered image pixels."""

    def __init__(self, page: pdfium.PdfPage, width_px: int, height_px: int):
        # The visible box pdfium renders (crop box within media box, inherited
        # boxes resolved); get_cropbox() falls back to US Letter when inherited.
        left, bottom, right, top = page.get_bbox()
        self.left, self.top = left, top
        self.w, self.h = right - left, top - bottom
        self.rotation = page.get_rotation() % 360
        upright_w, upright_h = (self.h, self.w) if self.rotation in (90, 270) else (self.w, self.h)
        self.sx, self.sy = width_px / upright_w, height_px / upright_h

    def box(self, left: float, bottom: float, right: float, top: float) -> list[float]:
        corners = [self._point(x, y) for x in (left, right) for y in (bottom, top)]
        xs, ys = [c[0] for c in corners], [c[1] for c in corners]
        return [min(xs), min(ys), max(xs), max(ys)]

    def _point(self, x: float, y: float) -> tuple[float, float]:
        u, v = x - self.left, self.top - y  # unrotated, origin top left
        if self.rotation == 90:
            u, v = self.h - v, u
        elif self.rotation == 180:
            u, v = self.w - u, self.h - v
        elif self.rotation == 270:
            u, v = v, self.w - u
        return u * self.sx, v * self.sy


def read_page_text(page: pdfium.PdfPage, width_px: int, height_px: int, max_chars: int) -> PageText | None:
    """Characters, lines (with words) and image boxes of one open pdfium page; None when it has more than
    ``max_chars`` characters (counted by pdfium before any is read)."""
    frame = _Frame(page, width_px, height_px)
    textpage = page.get_textpage()
    try:
        count = textpage.count_chars()
        if count > max_chars:
            return None
        chars = [_char(textpage, frame, i) for i in range(count)]
    finally:
        textpage.close()
    images = [frame.box(*obj.get_bounds()) for obj in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3)]
    return PageText(chars=chars, lines=_lines(chars), image_boxes=images)


def _char(textpage: pdfium.PdfTextPage, frame: _Frame, index: int) -> Char:
    code = pdfium_c.FPDFText_GetUnicode(textpage.raw, index)
    # pdfium reports a hyphen that breaks a word at a line end as U+0002.
    text = "-" if code == _LINE_END_HYPHEN else chr(code) if 0 < code < 0x110000 else ""
    obj = pdfium_c.FPDFText_GetTextObject(textpage.raw, index)
    mode = pdfium_c.FPDFTextObj_GetTextRenderMode(obj) if obj else 0
    return Char(text=text, box=frame.box(*textpage.get_charbox(index, loose=True)),
                ink_box=frame.box(*textpage.get_charbox(index)), unicode=code, render_mode=mode)


def _lines(chars: list[Char]) -> list[TextLine]:
    """Chars in content order -> lines: a new line at a line break, a baseline change or a wide gap."""
    lines: list[list[Char]] = []
    current: list[Char] = []
    for ch in chars:
        if ch.text in _NEWLINES:
            _flush(lines, current)
            current = []
            continue
        if ch.text.isspace() or not ch.text:
            if current:
                current.append(ch)
            continue
        if current and _breaks(current, ch):
            _flush(lines, current)
            current = []
        current.append(ch)
    _flush(lines, current)
    return [line for line in (_build(cs) for cs in lines) if line is not None]


def _breaks(current: list[Char], ch: Char) -> bool:
    last = next(c for c in reversed(current) if c.text.strip())
    height = max(last.box[3] - last.box[1], ch.box[3] - ch.box[1], 1.0)
    centre = (ch.box[1] + ch.box[3]) / 2
    if not last.box[1] - 0.2 * height <= centre <= last.box[3] + 0.2 * height:
        return True
    return ch.box[0] - last.box[2] > _LINE_GAP * height or ch.box[2] < last.box[0] - height


def _flush(lines: list[list[Char]], current: list[Char]) -> None:
    if any(c.text.strip() for c in current):
        lines.append(current)


def _build(chars: list[Char]) -> TextLine | None:
    words, word = [], []
    for ch in chars + [None]:
        if word and (ch is None or ch.text.isspace() or not ch.text or _spaced(word[-1], ch)):
            words.append(TextWord("".join(c.text for c in word), _union([c.box for c in word])))
            word = []
        if ch is not None and ch.text.strip():
            word.append(ch)
    if not words:
        return None
    return TextLine(" ".join(w.text for w in words), _union([w.box for w in words]), words)


def _spaced(before: Char, after: Char) -> bool:
    height = max(before.box[3] - before.box[1], after.box[3] - after.box[1], 1.0)
    return after.box[0] - before.box[2] > _WORD_GAP * height


def _union(boxes: list[list[float]]) -> list[float]:
    return [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]
