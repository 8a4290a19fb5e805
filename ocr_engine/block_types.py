"""Region types decided by rules on top of the layout model (or in place of one, for the ``ocr`` pipeline).

Cheap, conservative corrections of what a small layout model gets wrong, and
what a page without one still shows: page numbers, running headers, titles set
in large type. Each rule changes a block's type or
members in place, before reading order (``ocr_engine.normalize``).
"""

from __future__ import annotations

import re

from .geometry import body_line_height, overlap_1d
from .page_parts import Block, RawLine
from .thresholds import (
    BODY_SIZE_RATIO, MARGIN_SHARE, SAME_ROW_OVERLAP, SENTENCE_WORDS, TITLE_MAX_WORDS,
    TITLE_SIZE_RATIO,
)

_PAGE_NUMBER = re.compile(r"^(page|seite|página|pagina|p\.)?\s*([0-9]{1,4}|[ivxlcdm]{1,6})(\s*(/|of|von|de|sur)\s*[0-9]{1,4})?$", re.I)


def fix_types(blocks: list[Block], lines: list[RawLine], page_height: int) -> None:
    """Correct two systematic layout-model mistakes with cheap, conservative rules.

    - A lone number in the top or bottom margin is a page number, whatever the
      layout model called it (header, text, title for its large type, or nothing);
      body text in the bottom margin on its row is the running footer.
    - A "footnote" or "footer" in the upper half of the page is body text (the
      first line under a running header was seen labelled so, and read last).
    - A "title" set in body-size type that reads like a sentence (ends with a
      colon or full stop, or is long) is body text: small layout models label
      lead-in lines such as "Consider this definition:" as titles.
    """
    body_height = body_line_height(ln.bbox for ln in lines)
    for blk in blocks:
        text = " ".join(lines[i].text for i in blk.members).strip()
        in_margin = blk.bbox[3] < MARGIN_SHARE * page_height or blk.bbox[1] > (1 - MARGIN_SHARE) * page_height
        if in_margin and blk.type in ("header", "footer", "text", "title") and _PAGE_NUMBER.match(text):
            blk.type = "page_number"
        elif blk.type in ("footnote", "footer") and blk.bbox[3] < page_height / 2:
            blk.type = "text"  # above the middle of the page it is body text: never move it to the end
        elif blk.type == "title" and blk.label != "doc_title" and blk.members:
            mean_height = sum(lines[i].bbox[3] - lines[i].bbox[1] for i in blk.members) / len(blk.members)
            sentence = text.endswith((":", ".", ";", ",")) or len(text.split()) > SENTENCE_WORDS
            if mean_height <= BODY_SIZE_RATIO * body_height and sentence:
                blk.type = "text"
    numbers = [b for b in blocks if b.type == "page_number" and b.bbox[1] > (1 - MARGIN_SHARE) * page_height]
    for blk in blocks:
        if blk.type == "text" and blk.bbox[1] > (1 - MARGIN_SHARE) * page_height and any(
                overlap_1d(blk.bbox[1], blk.bbox[3], n.bbox[1], n.bbox[3])
                > SAME_ROW_OVERLAP * min(blk.bbox[3] - blk.bbox[1], n.bbox[3] - n.bbox[1]) for n in numbers):
            blk.type = "footer"


def mark_running_header(blocks: list[Block], page_height: int) -> None:
    """Without a layout model, body-size blocks in the top margin, over the rest of the page, are its header.

    Side by side there ("Title" at the left, "Conference, 2018" at the right of a
    two-column page), or one alone and clear of the body by a line's height. Read
    as body text, the right one would open the right column, or follow the first
    heading set at the left under it (the columns of an XY-cut).
    """
    top = [b for b in blocks if b.type == "text" and b.bbox[3] < MARGIN_SHARE * page_height]
    rest = [b for b in blocks if b not in top]
    for blk in top:
        height = blk.bbox[3] - blk.bbox[1]
        beside = any(other is not blk and overlap_1d(blk.bbox[1], blk.bbox[3], other.bbox[1], other.bbox[3])
                     > SAME_ROW_OVERLAP * min(height, other.bbox[3] - other.bbox[1]) for other in top)
        alone = len(top) == 1 and rest and min(b.bbox[1] for b in rest) - blk.bbox[3] >= height
        if beside or alone:
            blk.type = "header"


def mark_titles(blocks: list[Block], lines: list[RawLine]) -> None:
    """Without a layout model, a short block set clearly larger than body text is a title."""
    body_height = body_line_height(ln.bbox for ln in lines)
    for blk in blocks:
        if blk.type != "text" or len(blk.members) > 2:
            continue
        mean_height = sum(lines[i].bbox[3] - lines[i].bbox[1] for i in blk.members) / len(blk.members)
        words = sum(len(lines[i].text.split()) for i in blk.members)
        if mean_height >= TITLE_SIZE_RATIO * body_height and words <= TITLE_MAX_WORDS:
            blk.type, blk.label = "title", "title"
