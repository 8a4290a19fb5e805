"""Markdown: headings, paragraphs with line breaks undone, tables, figure placeholders.

``page_markdown`` is also what the engine stores in ``Page.markdown``.

Region types map as follows: ``title`` becomes ``#`` for the engine label
``doc_title`` and ``##`` otherwise; ``caption`` is italic; ``table`` is a pipe
table, or HTML when cells span rows or columns (pipe tables cannot); ``figure``
is an HTML comment; ``list`` keeps one item per bullet; ``header``, ``footer`` and
``page_number`` are left out (running heads interrupt the reading text; the plain
text export keeps them). Everything else is a paragraph.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable

from ..schema import DocumentResult, Line, Page, Table
from .blocks import Block, cell_texts, page_blocks

_OMITTED = frozenset({"header", "footer", "page_number"})
_HYPHENS = "-\u00ad\u2010"  # hyphen-minus, soft hyphen, hyphen
_BULLET = re.compile(r"^(?:[-*+\u2022\u25aa\u25cf\u00b7\u2013]|\(?\d{1,3}[.)])\s+")
_LEADING_BULLET = re.compile(r"^[-*+\u2022\u25aa\u25cf\u00b7\u2013]\s+")
_SPECIAL = re.compile(r"([\\`*_\[\]<])")  # would start emphasis, code, links or raw HTML


def page_markdown(page: Page) -> str:
    parts = (_block_markdown(block) for block in page_blocks(page) if block.region.type not in _OMITTED)
    return "\n\n".join(part for part in parts if part)


def document_markdown(pages: Iterable[Page]) -> str:
    """Every page preceded by ``<!-- page N -->``, as in ``DocumentResult.markdown``.

    The comment stands before the first page too, so a client can split the
    document on it without a special case.
    """
    return "\n\n".join(
        "\n\n".join(filter(None, (f"<!-- page {page.page_number} -->", page_markdown(page)))) for page in pages
    )


def render(result: DocumentResult) -> bytes:
    return (document_markdown(result.pages) + "\n").encode("utf-8")


def join_lines(texts: Iterable[str]) -> str:
    """Undo line breaks inside a paragraph.

    "exam-" + "ple" reads "example" (the hyphen only broke the word);
    "Jean-" + "Paul" keeps its hyphen; lines of CJK text join without a space.
    """
    joined = ""
    for text in (t.strip() for t in texts):
        if not text:
            continue
        if not joined:
            joined = text
        elif joined[-1] in _HYPHENS and len(joined) > 1 and joined[-2].isalpha():
            joined = (joined[:-1] if text[0].islower() else joined) + text
        elif _is_wide(joined[-1]) and _is_wide(text[0]):
            joined += text
        else:
            joined += " " + text
    return joined


def escape(text: str) -> str:
    """Backslash-escape OCR text so it reads as text, not as Markdown or HTML.

    Inline markers are escaped wherever they are; "#" and ">" only where they
    would open a heading or a quote.
    """
    text = _SPECIAL.sub(r"\\\1", text)
    return "\\" + text if text[:1] in ("#", ">") else text


def table_markdown(table: Table, lines: list[Line]) -> str:
    """A pipe table (first row as header), or the cells as HTML when any cell spans."""
    texts = cell_texts(table, lines)
    if any(cell.row_span > 1 or cell.col_span > 1 for cell in table.cells):
        return _table_html(table, texts)
    grid = [[""] * table.n_cols for _ in range(table.n_rows)]
    for cell, text in zip(table.cells, texts):
        grid[cell.row][cell.col] = escape(" ".join(text.split())).replace("|", "\\|")
    rows = ["| " + " | ".join(row) + " |" for row in grid]
    rows.insert(1, "|" + " --- |" * table.n_cols)
    return "\n".join(rows)


def _block_markdown(block: Block) -> str:
    kind = block.region.type
    if kind == "figure":
        return "<!-- figure -->"
    if kind == "table" and block.table and block.table.cells:
        return table_markdown(block.table, block.lines)
    if kind == "list":
        return _list_markdown([ln.text for ln in block.lines])
    text = escape(join_lines(ln.text for ln in block.lines))
    if not text:
        return ""
    if kind == "title":
        return ("# " if block.region.label == "doc_title" else "## ") + text
    if kind == "caption":
        return f"*{text}*"
    return text


def _list_markdown(texts: list[str]) -> str:
    """One item per line that starts with a bullet or number; other lines continue the item."""
    if not any(_BULLET.match(t.strip()) for t in texts):
        return escape(join_lines(texts))
    items: list[list[str]] = []
    for text in (t.strip() for t in texts if t.strip()):
        if _BULLET.match(text) or not items:
            items.append([_LEADING_BULLET.sub("- ", text)])
        else:
            items[-1].append(text)
    return "\n".join(_item_markdown(join_lines(item)) for item in items)


def _item_markdown(item: str) -> str:
    bullet = _LEADING_BULLET.match(item) or _BULLET.match(item)
    return item[: bullet.end()] + escape(item[bullet.end():]) if bullet else escape(item)


def _table_html(table: Table, texts: list[str]) -> str:
    rows = []
    for row in range(table.n_rows):
        cells = sorted(((c, t) for c, t in zip(table.cells, texts) if c.row == row), key=lambda ct: ct[0].col)
        tds = []
        for cell, text in cells:
            spans = (f' rowspan="{cell.row_span}"' if cell.row_span > 1 else "") + (
                f' colspan="{cell.col_span}"' if cell.col_span > 1 else ""
            )
            tds.append(f"<td{spans}>{html.escape(text)}</td>")
        rows.append("<tr>" + "".join(tds) + "</tr>")
    return "<table>" + "".join(rows) + "</table>"


def _is_wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")
