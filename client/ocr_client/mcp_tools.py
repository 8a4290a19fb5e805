"""What the MCP server's tools do, over the SDK: plain functions of a ``Client`` (``ocr_client.mcp_server``
registers them, with the descriptions agents read).

Every quoted line goes out with its page, its line id and its deep link (the review UI on that page with
that line selected, as the search answer's ``links.review``), so an agent can cite it and a person can
check it. Coordinates are pixels of the page image (``Client.job(id).page_image(n)``), origin top-left.
"""

from __future__ import annotations

import io
import math
from typing import Any
from urllib.parse import urlencode, urlsplit

from PIL import Image

from ocr_client.errors import NotFound
from ocr_client.fields import Field
from ocr_client.models import Line, Page, Result, Table

CROP_MARGIN = 8  # px around the box: a line's glyphs touch its polygon


class ToolInputError(ValueError):
    """The agent's arguments cannot be answered (no such page, line or table): said in its words."""


def review_link(base_url: str, job_id: str, page: int, line_id: str | None = None) -> str:
    """The review UI on ``page`` (with ``line_id`` selected and in view): docs/review.md, "Search"."""
    query = {"page": page, **({"line": line_id} if line_id else {})}
    return f"{base_url.rstrip('/')}/jobs/{job_id}/?{urlencode(query)}"


def is_url(source: str) -> bool:
    return urlsplit(source).scheme in ("http", "https")


def parse_pages(pages: str | None, available: list[int]) -> list[int]:
    """``"3"``, ``"2-4"`` or ``"1-2,5"`` → those of ``available`` (all of them for None or "")."""
    if not pages or not pages.strip():
        return available
    wanted: set[int] = set()
    for part in pages.split(","):
        first, _, last = part.strip().partition("-")
        try:
            low, high = int(first), int(last or first)
        except ValueError:
            raise ToolInputError(f"pages={pages!r}: give a page number or a range such as 2-4 or 1-2,5.") from None
        wanted.update(range(low, high + 1))
    chosen = [n for n in available if n in wanted]
    if not chosen:
        raise ToolInputError(f"pages={pages!r}: the job's result has pages {available} only.")
    return chosen


def job_status(job) -> dict[str, Any]:
    """A job's state as an agent needs it: ``finished`` says whether to read it or wait again."""
    progress = job.progress
    return {"job": job.id, "status": job.status, "finished": job.final, "pages_done": progress.get("pages_done"),
            "pages_total": progress.get("pages_total"), "error": job.error, "document": job.document.get("name")}


def _cite(base_url: str, job_id: str, page: int, line: Line, markdown: bool) -> str:
    link = review_link(base_url, job_id, page, line.id)
    if markdown:
        return f"{line.text} [page {page}, line {line.id}]({link})"
    return f"{line.text}  (page {page}, line {line.id}, {link})"


def page_blocks(page: Page) -> list[tuple[str | None, str, list[Line]]]:
    """The page's blocks (region id, type, lines) in reading order, each block's lines in reading order;
    lines whose region is missing come last, as one block."""
    blocks = [(region.id, region.type, sorted(page.region_lines(region.id), key=lambda line: line.order))
              for region in sorted(page.regions, key=lambda region: region.order)]
    known = {region.id for region in page.regions}
    orphans = [line for line in page.lines if line.region_id not in known]
    return [block for block in [*blocks, (None, "text", orphans)] if block[2]]


def render_page(base_url: str, job_id: str, page: Page, fmt: str) -> str:
    markdown = fmt == "markdown"
    number = page.page_number
    header = (f"<!-- page {number}: {review_link(base_url, job_id, number)} -->" if markdown
              else f"=== page {number} ({review_link(base_url, job_id, number)}) ===")
    tables = {table.region_id: table.id for table in page.tables}
    blocks = [header]
    for region_id, region_type, lines in page_blocks(page):
        cited = [_cite(base_url, job_id, number, line, markdown) for line in lines]
        if region_id in tables:  # the lines alone lose the grid
            cited.insert(0, f"[table {tables[region_id]}: ocr_table gives its rows and cells]")
        if markdown and region_type == "title":
            cited = [f"## {text}" for text in cited]
        elif markdown and region_type == "list":
            cited = [f"- {text}" for text in cited]
        elif markdown:
            cited = [text + "  " for text in cited[:-1]] + cited[-1:]  # a Markdown line break keeps the lines
        blocks.append("\n".join(cited))
    return "\n\n".join(blocks)


def read(client, base_url: str, job_id: str, pages: str | None, fmt: str) -> str:
    """The job's text in reading order, one block a region, every line cited; ``fmt``: text or markdown."""
    result: Result = client.job(job_id).result()
    chosen = parse_pages(pages, [page.page_number for page in result.pages])
    return "\n\n".join(render_page(base_url, job_id, result.page(n), fmt) for n in chosen)


def find(client, query: str, job_id: str | None, page: int | None) -> list[dict[str, Any]]:
    """The user's matching lines, best first (GET /api/v1/search)."""
    return [{"job": hit.job, "page": hit.page, "line_id": hit.line_id, "text": hit.text,
             "polygon": hit.polygon, "confidence": hit.confidence, "region_type": hit.region_type,
             "link": hit.links.get("review")}
            for hit in client.search(query, job=job_id, page=page)]


def fields(client, base_url: str, job_id: str, wait_seconds: float) -> dict[str, Any]:
    """The job's document type and fields (GET /api/v1/jobs/{id}/fields), each value flat by its path
    (``line_items.0.amount``) with its page, line ids and the review link that opens its first line."""
    found = client.job(job_id).fields(wait=wait_seconds)
    kind = found.document_type
    return {"job": job_id, "status": found.status, "finished": found.final, "error": found.error,
            "document_type": kind and {"name": kind.name, "source": kind.source, "confidence": kind.confidence},
            "fields": [_field(base_url, job_id, one) for one in found.flat().values()]}


def _field(base_url: str, job_id: str, one: Field) -> dict[str, Any]:
    first = one.evidence[0] if one.evidence else None
    return {"name": one.name, "value": one.value, "confidence": one.confidence, "grounded": one.grounded,
            "reason": one.reason, "page": first.page if first else None, "line_ids": one.line_ids,
            "link": review_link(base_url, job_id, first.page, first.line_id) if first else None}


def _page_of(client, job_id: str, page_number: int) -> tuple[Any, Page]:
    job = client.job(job_id)
    try:
        return job, job.page(page_number)
    except NotFound:
        raise ToolInputError(f"Job {job_id} has no page {page_number}.") from None


def _box_polygon(bbox: list[float] | None) -> list[list[float]] | None:
    if not bbox:
        return None
    x0, y0, x1, y1 = bbox
    return [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]


def _cell_lines(table_cell_bbox: list[float] | None, lines: list[Line]) -> list[str]:
    """The ids of the lines whose centre lies in the cell: what to cite for the cell's text."""
    if not table_cell_bbox:
        return []
    x0, y0, x1, y1 = table_cell_bbox
    return [line.id for line in lines
            if x0 <= (line.bbox[0] + line.bbox[2]) / 2 <= x1 and y0 <= (line.bbox[1] + line.bbox[3]) / 2 <= y1]


def table(client, base_url: str, job_id: str, page_number: int, table_id: str | None) -> dict[str, Any]:
    """One table of a page (``table_id``, or the page's first) as rows of cells, each cell with its polygon."""
    _, page = _page_of(client, job_id, page_number)
    if not page.tables:
        raise ToolInputError(f"Page {page_number} of job {job_id} has no table.")
    found: Table | None = page.tables[0] if table_id is None else next(
        (t for t in page.tables if t.id == table_id), None)
    if found is None:
        raise ToolInputError(f"Page {page_number} has no table {table_id!r}; its tables: "
                             f"{', '.join(t.id for t in page.tables)}.")
    region_lines = page.region_lines(found.region_id)
    rows: dict[int, list[dict[str, Any]]] = {}
    for cell in sorted(found.cells, key=lambda c: (c.row, c.col)):
        line_ids = _cell_lines(cell.bbox, region_lines)
        rows.setdefault(cell.row, []).append({
            "row": cell.row, "col": cell.col, "row_span": cell.row_span, "col_span": cell.col_span,
            "text": cell.text, "polygon": _box_polygon(cell.bbox), "line_ids": line_ids,
            "link": review_link(base_url, job_id, page_number, line_ids[0] if line_ids else None)})
    return {"job": job_id, "page": page_number, "table": found.id, "n_rows": found.n_rows, "n_cols": found.n_cols,
            "tables_on_page": [t.id for t in page.tables], "link": review_link(base_url, job_id, page_number),
            "rows": list(rows.values())}


def crop(client, base_url: str, job_id: str, page_number: int, line_id: str | None,
         polygon: list[list[float]] | None, margin: int = CROP_MARGIN) -> tuple[bytes, str]:
    """(PNG of the polygon's box on the page image, plus ``margin`` px; a caption citing it)."""
    job, page = _page_of(client, job_id, page_number)
    line = page.line(line_id) if line_id else None
    if line_id and line is None:
        raise ToolInputError(f"Page {page_number} of job {job_id} has no line {line_id!r}.")
    polygon = line.polygon if line else polygon
    if not polygon:
        raise ToolInputError("Give line_id, or a polygon [[x, y], ...] in page-image pixels.")
    image = Image.open(io.BytesIO(job.page_image(page_number)))
    # Polygons are in the result's page frame (width x height). The stored image is that frame; scaling
    # anyway keeps the crop right on a server that stores a smaller image.
    sx, sy = image.width / page.width, image.height / page.height
    xs, ys = [x * sx for x, _ in polygon], [y * sy for _, y in polygon]
    box = (max(0, math.floor(min(xs)) - margin), max(0, math.floor(min(ys)) - margin),
           min(image.width, math.ceil(max(xs)) + margin), min(image.height, math.ceil(max(ys)) + margin))
    if box[0] >= box[2] or box[1] >= box[3]:
        raise ToolInputError(f"The polygon {polygon} lies outside page {page_number} ({page.width}x{page.height}).")
    out = io.BytesIO()
    image.crop(box).save(out, format="PNG")
    what = f'line {line.id}: "{line.text}"' if line else "the polygon"
    caption = (f"Page {page_number}, {what}; pixels {list(box)} of the page image. "
               f"Review: {review_link(base_url, job_id, page_number, line.id if line else None)}")
    return out.getvalue(), caption
