"""Spaces the recogniser dropped or added: monospace gaps measured on the page, and text fixes."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from ocr_engine.normalize import RawLine
from ocr_engine.spacing import respaced, restore_spaces
from ocr_engine.textfix import text_fixer
from tests.ocr_engine.samples import FONT_DIR


def drawn_line(text: str, font: str = "DejaVuSansMono.ttf", size: int = 28) -> tuple[np.ndarray, list[int]]:
    """A line of text on white paper and its box, as the detector would give it."""
    face = ImageFont.truetype(str(FONT_DIR / font), size)
    left, top, right, bottom = face.getbbox(text)
    image = Image.new("L", (right + 80, bottom + 40), 255)
    ImageDraw.Draw(image).text((40, 20), text, font=face, fill=0)
    return np.asarray(image), [40 + left - 4, 20 + top - 6, 40 + right + 4, 20 + bottom + 6]


@pytest.mark.parametrize("shown", [
    "1.600 2.163 4.000 3.488 4.454 5.100",  # summary() output
    "[1] 1.6000 2.1585 4.0000 4.4585 5.1000",
    "18 | 000022233333335577777777888822335777888",  # a stem-and-leaf row
    "x <- c(10.4, 5.6, 3.1, 6.4, 21.7)",
])
def test_monospace_spaces_come_back(shown):
    gray, box = drawn_line(shown)
    for read in (shown.replace(" ", ""), shown.replace(" ", "", 2)):  # all or some spaces lost
        words = respaced(gray, box, read)
        assert words is not None and " ".join(w for w, _, _ in words) == shown
    xs = [(x0, x1) for _, x0, x1 in words]
    assert xs == sorted(xs) and all(box[0] <= x0 < x1 <= box[2] for x0, x1 in xs)


def test_a_line_read_right_is_left_alone():
    gray, box = drawn_line("1.600 2.163 4.000 3.488")
    assert respaced(gray, box, "1.600 2.163 4.000 3.488") is None


@pytest.mark.parametrize("shown", [
    "Information retrieval with illuminated manuscripts",
    "The committee will meet on Wednesday afternoon",
    "minimum millimetre WWW wall illicit",
])
def test_proportional_text_never_gets_a_wrong_space(shown):
    gray, box = drawn_line(shown, font="DejaVuSerif.ttf")
    words = respaced(gray, box, shown.replace(" ", ""))
    # Either not measurable as monospace (left as read) or split exactly where the page shows spaces.
    assert words is None or " ".join(w for w, _, _ in words) == shown


def test_restored_lines_get_words_with_their_boxes():
    gray, box = drawn_line("18 | 0000222333")
    line = RawLine(polygon=[], bbox=box, text="18|0000222333", confidence=0.97)
    restore_spaces(gray, [line])
    assert line.text == "18 | 0000222333"
    assert [w.text for w in line.words] == ["18", "|", "0000222333"]
    assert all(w.bbox[1] == box[1] and w.bbox[3] == box[3] and w.confidence == 0.97 for w in line.words)


@pytest.mark.parametrize(("read", "fixed"), [
    # Monospace names in prose: the recogniser reads their wide cells as spaces around dots.
    ("See systemd . service(5).", "See systemd.service(5)."),
    ("See systemd. mount(5).", "See systemd.mount(5)."),
    ("in /etc/init . d/rc", "in /etc/init.d/rc"),
    ('"multi-user. target". 3.2.1 The', '“multi-user.target”. 3.2.1 The'),
    ("de gentoo - 0.9. 12. tar. gz. Vous", "de gentoo-0.9.12.tar.gz. Vous"),
    ("apt - get und apt - cache (0 - 9)", "apt-get und apt-cache (0-9)"),
    # ...and drops the space outside quotes around them.
    ('Sie"Noch ausstehende Aktionen"im Menü', 'Sie “Noch ausstehende Aktionen” im Menü'),
    # Straight quotes become the typographic ones printed pages use.
    ('the “acmart" class; see "MAPPING OF" in', 'the “acmart” class; see “MAPPING OF” in'),
    ("In 'legacy' mode the page's authors' l'homme", "In ‘legacy’ mode the page’s authors’ l’homme"),
    # Prose stays as read.
    ("type source_name . Example using", "type source_name . Example using"),
    ("It ended. Then etc. and i.e. the", "It ended. Then etc. and i.e. the"),
    ("(e.g. stdout). x in spec. document) no vol. no.)", "(e.g. stdout). x in spec. document) no vol. no.)"),
    ("Paris - London", "Paris - London"),
    # Code keeps its straight quotes.
    ('x="abc" and print("a", "b")', 'x="abc" and print("a", "b")'),
    ('"?1","?2", ...', '"?1","?2", ...'),
    ("grep '\\bword' <'in'", "grep '\\bword' <'in'"),
    # Unpaired: only a quote with a space on its outer side is sure.
    ('wenn"-v"verwendet ("aptitude -v why', 'wenn"-v"verwendet (“aptitude -v why'),
    ("８％ of ＡＢＣ", "8% of ABC"),
])
def test_latin_text_fixes(read, fixed):
    assert text_fixer("en")(read) == fixed
    assert text_fixer("ch")(read) == read  # CJK text is left as read
