"""Plain text: lines in reading order, a blank line between regions, a form feed between pages.

``page_text`` is also what the engine stores in ``Page.text``, so the stored text
and the export can never disagree.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..schema import DocumentResult, Page
from .blocks import page_blocks


def page_text(page: Page) -> str:
    """The page's text: one line per OCR line, regions separated by a blank line.

    Headers, footers and page numbers are kept: plain text is for search and
    copying, where dropping words would surprise.
    """
    blocks = ("\n".join(ln.text for ln in block.lines if ln.text.strip()) for block in page_blocks(page))
    return "\n\n".join(block for block in blocks if block)


def document_text(pages: Iterable[Page]) -> str:
    """All pages' text, separated by a form feed (``\\f``), as in ``DocumentResult.text``."""
    return "\f".join(page_text(page) for page in pages)


def render(result: DocumentResult) -> bytes:
    return (document_text(result.pages) + "\n").encode("utf-8")
