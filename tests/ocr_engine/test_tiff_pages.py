"""A TIFF's pages are counted by walking its chain of page directories, before Pillow parses any."""

from __future__ import annotations

import io
import struct

import pytest
from PIL import Image

from ocr_engine.errors import CorruptFile, TooManyPages
from ocr_engine.inputs import open_document


def _tiny_tiff(frames: int) -> bytes:
    blank = Image.new("1", (8, 8))
    buffer = io.BytesIO()
    blank.save(buffer, "TIFF", save_all=True, append_images=[blank] * (frames - 1))
    return buffer.getvalue()


def test_a_tiff_of_ten_thousand_empty_pages_is_refused_before_any_is_parsed():
    # A hostile 60 KB file: a chain of 10,000 empty directories. Pillow's frame count parses
    # each one; the chain walk only follows the offsets and refuses the file.
    pages = 10_000
    chain = b"".join(struct.pack("<HI", 0, 8 + 6 * (k + 1) if k + 1 < pages else 0) for k in range(pages))
    with pytest.raises(TooManyPages) as caught:
        open_document(b"II*\x00" + struct.pack("<I", 8) + chain)
    assert "has 10000 pages; the limit is 2000" in caught.value.message


def test_a_tiff_whose_page_chain_loops_is_corrupt():
    data = bytearray(_tiny_tiff(2))
    first = int.from_bytes(data[4:8], "little")
    entries = int.from_bytes(data[first:first + 2], "little")
    second_next = int.from_bytes(data[first + 2 + 12 * entries:first + 6 + 12 * entries], "little")
    later = second_next + 2 + 12 * int.from_bytes(data[second_next:second_next + 2], "little")
    data[later:later + 4] = first.to_bytes(4, "little")  # the second page points back at the first
    with pytest.raises(CorruptFile, match="list of pages loops"):
        open_document(bytes(data))
