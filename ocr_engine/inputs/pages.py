"""Page range specs such as ``1-3,7``, as users type them in print dialogs.

Grammar (pages are 1-based, spaces anywhere are ignored)::

    spec  := part ("," part)*
    part  := N | N "-" M | N "-" | "-" M      (N-: page N to the end; -M: pages 1 to M)

``None`` or an empty spec means every page. The result is sorted and without
duplicates. A part that does not parse, page 0 and reversed ranges (``3-1``)
raise ``InvalidPageRange``; a page past the end raises ``PageOutOfRange``
rather than being dropped silently, so a user never gets fewer pages than asked.
"""

from __future__ import annotations

import re

from ..errors import InvalidPageRange, PageOutOfRange

# ASCII digits only: str.isdigit() would accept "²" or Arabic-Indic digits.
_PART = re.compile(r"(?P<first>[0-9]*)(?P<dash>-?)(?P<last>[0-9]*)")
_EXAMPLE = "Use page numbers and ranges such as 1-3,7 or 5- (page 5 to the end)."


def parse_page_range(spec: str | None, page_count: int) -> list[int]:
    """Return the sorted, distinct 1-based pages ``spec`` selects from ``page_count``."""
    if spec is None or not spec.strip():
        return list(range(1, page_count + 1))
    pages: set[int] = set()
    for raw in "".join(spec.split()).split(","):
        first, last = _bounds(raw, spec, page_count)
        pages.update(range(first, last + 1))
    return sorted(pages)


def _bounds(part: str, spec: str, page_count: int) -> tuple[int, int]:
    match = _PART.fullmatch(part)
    if not match or not (match["first"] or match["last"]):
        raise InvalidPageRange(f"Invalid page range {spec!r}: {part!r} is not a page or a range. {_EXAMPLE}")
    if not match["dash"]:
        first = last = int(match["first"])
    else:
        first = int(match["first"]) if match["first"] else 1
        last = int(match["last"]) if match["last"] else page_count
    if first < 1 or (match["last"] and last < 1):
        raise InvalidPageRange(f"Invalid page range {spec!r}: pages are numbered from 1. {_EXAMPLE}")
    if first > last and match["last"]:
        raise InvalidPageRange(f"Invalid page range {spec!r}: {part!r} runs backwards; write it as {last}-{first}.")
    check_page(max(first, last), page_count)
    return first, last


def check_page(page_number: int, page_count: int) -> None:
    """Raise ``PageOutOfRange`` unless ``page_number`` is a page of the document."""
    if not 1 <= page_number <= page_count:
        pages = "1 page" if page_count == 1 else f"{page_count} pages"
        raise PageOutOfRange(f"Page {page_number} does not exist: the document has {pages}. "
                             f"Choose pages from 1 to {page_count}.")
