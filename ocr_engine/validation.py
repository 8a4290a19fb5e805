"""Check a stored or received result against the published JSON Schema and its cross-references.

``result.schema.json`` fixes the shape; the few rules JSON Schema cannot state
are checked here too: ids are unique, every line and table points at a region on
its own page (a table at a region of type "table"), reading orders run 1..n,
boxes lie inside their page, and table cells fit their grid, one per position.
Failures raise ``InvalidResult`` naming each offending path, so a client sending
a bad page learns exactly what to fix.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

import jsonschema

from .errors import InputError

MAX_REPORTED = 10
_TOLERANCE = 1.0  # px: boxes may overshoot the page edge by rounding, not more


class InvalidResult(InputError):
    code = "invalid_result"


def load_schema() -> dict[str, Any]:
    return json.loads(resources.files("ocr_engine").joinpath("result.schema.json").read_text("utf-8"))


def validate_result(data: dict[str, Any]) -> None:
    """Raise ``InvalidResult`` unless ``data`` is a valid ``DocumentResult`` dict."""
    problems = _schema_problems(_validator("DocumentResult"), data, "")
    if not problems:
        seen_ids: set[str] = set()
        page_numbers = [page["page_number"] for page in data["pages"]]
        if page_numbers != sorted(set(page_numbers)):
            problems.append("pages: page numbers must be unique and ascending")
        for index, page in enumerate(data["pages"]):
            problems += _page_problems(page, f"pages/{index}/", seen_ids)
    _raise_if(problems, "result")


def validate_page(data: dict[str, Any]) -> None:
    """Raise ``InvalidResult`` unless ``data`` is a valid ``Page`` dict."""
    problems = _schema_problems(_validator("Page"), data, "")
    if not problems:
        problems = _page_problems(data, "", set())
    _raise_if(problems, "page")


@functools.cache
def _validator(definition: str) -> jsonschema.Draft202012Validator:
    schema = load_schema()
    if definition != "DocumentResult":
        # Same $defs, root pointed at one of them.
        schema = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return jsonschema.Draft202012Validator(schema)


def _schema_problems(validator: jsonschema.Draft202012Validator, data: Any, prefix: str) -> list[str]:
    errors = sorted(validator.iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    return [f"{_path(prefix, error.absolute_path)}: {_shorten(error.message)}" for error in errors]


def _page_problems(page: dict[str, Any], prefix: str, seen_ids: set[str]) -> list[str]:
    problems = []
    width, height = page["width"], page["height"]
    regions = {region["id"]: region for region in page["regions"]}
    for kind in ("regions", "lines", "tables"):
        for index, item in enumerate(page[kind]):
            where = f"{prefix}{kind}/{index}"
            if item["id"] in seen_ids:
                problems.append(f"{where}/id: duplicate id {item['id']!r}")
            seen_ids.add(item["id"])
            if kind != "regions" and item["region_id"] not in regions:
                problems.append(f"{where}/region_id: no region {item['region_id']!r} on this page")
            if kind == "tables" and regions.get(item["region_id"], {}).get("type", "table") != "table":
                problems.append(f"{where}/region_id: region {item['region_id']!r} is not of type 'table'")
            if "bbox" in item and not _inside(item["bbox"], width, height):
                problems.append(f"{where}/bbox: {item['bbox']} is not a box inside the {width}x{height} page")
    for kind in ("regions", "lines"):
        orders = [item["order"] for item in page[kind]]
        if sorted(orders) != list(range(1, len(orders) + 1)):
            problems.append(f"{prefix}{kind}: reading orders must run 1..{len(orders)} without gaps or repeats")
    for t_index, table in enumerate(page["tables"]):
        positions = set()
        for c_index, cell in enumerate(table["cells"]):
            where = f"{prefix}tables/{t_index}/cells/{c_index}"
            if cell["row"] + cell["row_span"] > table["n_rows"] or cell["col"] + cell["col_span"] > table["n_cols"]:
                problems.append(f"{where}: cell does not fit the {table['n_rows']}x{table['n_cols']} grid")
            if (cell["row"], cell["col"]) in positions:
                problems.append(f"{where}: a second cell at row {cell['row']}, col {cell['col']}")
            positions.add((cell["row"], cell["col"]))
    return problems


def _inside(bbox: list[float], width: int, height: int) -> bool:
    x0, y0, x1, y1 = bbox
    return x0 <= x1 and y0 <= y1 and x1 <= width + _TOLERANCE and y1 <= height + _TOLERANCE


def _raise_if(problems: list[str], what: str) -> None:
    if not problems:
        return
    shown = problems[:MAX_REPORTED]
    more = f" (and {len(problems) - MAX_REPORTED} more)" if len(problems) > MAX_REPORTED else ""
    raise InvalidResult(f"Invalid {what}: " + "; ".join(shown) + more)


def _path(prefix: str, path) -> str:
    return (prefix + "/".join(str(part) for part in path)) or "(root)"


def _shorten(message: str, limit: int = 200) -> str:
    # jsonschema quotes the whole offending value; a page's worth of it helps nobody.
    return message if len(message) <= limit else message[: limit - 3] + "..."
