"""The published JSON Schema and ``validate_result``/``validate_page``: the contract clients rely on."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from pathlib import Path

import jsonschema
import pytest

from ocr_engine import schema
from ocr_engine.config import BACKENDS
from ocr_engine.pipelines import names as pipeline_names
from ocr_engine.exports.markdown import document_markdown
from ocr_engine.exports.text import document_text
from ocr_engine.validation import InvalidResult, load_schema, validate_page, validate_result


def page_dict() -> dict:
    """One page with every kind of field: layout and ocr regions, words, a correction, a table."""
    page = schema.Page(
        page_number=2, width=600, height=800, scale=2.0, dpi=144.0,
        regions=[
            schema.Region("p2-r1", "text", "text", 1, [10, 10, 590, 60], [[10, 10], [590, 10], [590, 60], [10, 60]],
                          0.93, "Hello world", "layout"),
            schema.Region("p2-r2", "table", "table", 2, [10, 100, 590, 200],
                          [[10, 100], [590, 100], [590, 200], [10, 200]], 0.88, "a b", "layout"),
            schema.Region("p2-r3", "text", "", 3, [10, 700, 200, 730], [[10, 700], [200, 700], [200, 730], [10, 730]],
                          None, "stray", "ocr"),
        ],
        lines=[
            schema.Line("p2-l1", "p2-r1", 1, [[10, 10], [590, 10], [590, 60], [10, 60]], [10, 10, 590, 60],
                        "Hello world", 0.98, words=[schema.Word("Hello", [10, 10, 250, 60], 0.99),
                                                     schema.Word("world", [270, 10, 590, 60], None)]),
            schema.Line("p2-l2", "p2-r2", 2, [[20, 110], [100, 110], [100, 140], [20, 140]], [20, 110, 100, 140],
                        "a", 0.9),
            schema.Line("p2-l3", "p2-r2", 3, [[320, 110], [400, 110], [400, 140], [320, 140]], [320, 110, 400, 140],
                        "b", 0.5, original_text="6"),
            schema.Line("p2-l4", "p2-r3", 4, [[10, 700], [200, 700], [200, 730], [10, 730]], [10, 700, 200, 730],
                        "stray", 0.7),
        ],
        tables=[schema.Table("p2-t1", "p2-r2", "<table><tr><td>a</td><td>b</td></tr></table>", 1, 2, [
            schema.TableCell(0, 0, 1, 1, [10, 100, 300, 200], "a"),
            schema.TableCell(0, 1, 1, 1, None, "b"),
        ])],
        text="Hello world\n\na\nb\n\nstray", markdown="Hello world",
    )
    return schema.to_dict(page)


def result_dict() -> dict:
    engine = schema.EngineInfo("ocr", "en", "onnxruntime", "cpu", {"text_detection": "PP-OCRv6_small_det"}, "0.1.0")
    result = schema.DocumentResult(
        engine=engine, pages=[schema.page_from_dict(page_dict())], text="Hello world", markdown="",
        source={"filename": "a.png", "media_type": "image/png", "sha256": "0" * 64, "page_count": 3},
    )
    return schema.to_dict(result)


def test_schema_is_valid_draft_2020_12():
    jsonschema.Draft202012Validator.check_schema(load_schema())


@pytest.mark.parametrize(
    ("definition", "cls"),
    [
        ("Word", schema.Word), ("Line", schema.Line), ("TableCell", schema.TableCell), ("Table", schema.Table),
        ("Region", schema.Region), ("Page", schema.Page), ("EngineInfo", schema.EngineInfo),
    ],
)
def test_schema_describes_every_dataclass_field(definition, cls):
    properties = load_schema()["$defs"][definition]["properties"]
    assert set(properties) == {field.name for field in dataclasses.fields(cls)}


def test_schema_matches_the_code_constants():
    published = load_schema()
    defs = published["$defs"]
    assert set(published["properties"]) == {f.name for f in dataclasses.fields(schema.DocumentResult)}
    assert tuple(defs["Region"]["properties"]["type"]["enum"]) == schema.REGION_TYPES
    assert tuple(defs["EngineInfo"]["properties"]["pipeline"]["enum"]) == tuple(pipeline_names())
    assert tuple(defs["EngineInfo"]["properties"]["backend"]["enum"]) == BACKENDS
    jsonschema.validate(schema.SCHEMA_VERSION, published["properties"]["schema_version"])


def test_valid_result_and_page_pass():
    validate_result(result_dict())
    validate_page(page_dict())
    without_words = page_dict()
    del without_words["lines"][1]["words"], without_words["lines"][1]["original_text"]
    validate_page(without_words)


def _set(path: str, value):
    def change(data):
        *parents, last = path.split("/")
        target = data
        for key in parents:
            target = target[int(key)] if key.isdigit() else target[key]
        if value is _DELETE:
            del target[int(last) if last.isdigit() else last]
        else:
            target[int(last) if last.isdigit() else last] = value
    return change


_DELETE = object()


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (_set("pages/0/lines/0/region_id", _DELETE), "pages/0/lines/0: 'region_id' is a required property"),
        (_set("pages/0/regions/0/type", "paragraph"), "pages/0/regions/0/type: 'paragraph' is not one of"),
        (_set("pages/0/lines/1/confidence", 1.5), "pages/0/lines/1/confidence: 1.5 is greater than the maximum"),
        (_set("pages/0/regions/0/bbox/0", -3), "pages/0/regions/0/bbox/0: -3 is less than the minimum of 0"),
        (_set("pages/0/lines/0/polygon", [[0, 0], [1, 0], [1, 1]]), "pages/0/lines/0/polygon: "),
        (_set("pages/0/lines/0/id", "line-1"), "pages/0/lines/0/id: 'line-1' does not match"),
        (_set("pages/0/width", "600"), "pages/0/width: '600' is not of type 'integer'"),
        (_set("pages/0/extra", 1), "pages/0: Additional properties are not allowed ('extra' was unexpected)"),
        (_set("schema_version", "2.0"), "schema_version: '2.0' does not match"),
        (_set("engine/pipeline", "fast"), "engine/pipeline: 'fast' is not one of"),
        (_set("pages/0/lines/3/region_id", "p2-r9"), "pages/0/lines/3/region_id: no region 'p2-r9' on this page"),
        (_set("pages/0/tables/0/region_id", "p2-r1"), "pages/0/tables/0/region_id: region 'p2-r1' is not of type"),
        (_set("pages/0/lines/1/id", "p2-l1"), "pages/0/lines/1/id: duplicate id 'p2-l1'"),
        (_set("pages/0/lines/2/order", 7), "pages/0/lines: reading orders must run 1..4"),
        (_set("pages/0/regions/2/bbox", [10, 700, 200, 900]), "regions/2/bbox: [10, 700, 200, 900] is not a box"),
        (_set("pages/0/lines/0/bbox", [590, 10, 10, 60]), "pages/0/lines/0/bbox: [590, 10, 10, 60] is not a box"),
        (_set("pages/0/tables/0/cells/1/col_span", 2), "pages/0/tables/0/cells/1: cell does not fit the 1x2 grid"),
        (_set("pages/0/tables/0/cells/1/col", 0), "pages/0/tables/0/cells/1: a second cell at row 0, col 0"),
    ],
)
def test_invalid_results_fail_with_the_path_and_reason(change, expected):
    data = result_dict()
    change(data)
    with pytest.raises(InvalidResult) as caught:
        validate_result(data)
    assert caught.value.code == "invalid_result"
    assert expected in caught.value.message


def test_duplicate_ids_across_pages_and_page_order_are_checked():
    data = result_dict()
    data["pages"].append(copy.deepcopy(data["pages"][0]))
    with pytest.raises(InvalidResult) as caught:
        validate_result(data)
    assert "pages: page numbers must be unique and ascending" in caught.value.message
    assert "pages/1/regions/0/id: duplicate id 'p2-r1'" in caught.value.message


def test_validate_page_reports_paths_inside_the_page():
    data = page_dict()
    data["regions"][0]["type"] = "banner"
    del data["lines"][0]["region_id"]
    with pytest.raises(InvalidResult) as caught:
        validate_page(data)
    message = caught.value.message
    assert message.startswith("Invalid page: ")
    assert "lines/0: 'region_id' is a required property" in message
    assert "regions/0/type: 'banner' is not one of" in message
    assert caught.value.to_dict()["code"] == "invalid_result"


def test_many_problems_are_summarised():
    data = page_dict()
    for region in data["regions"]:
        region["type"] = "banner"
        region["label"] = 1
        region["confidence"] = 7
        region["order"] = 0
    with pytest.raises(InvalidResult) as caught:
        validate_page(data)
    assert caught.value.message.endswith("(and 2 more)")


def test_documented_example_is_valid_and_consistent():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "result-schema.md").read_text("utf-8")
    example = json.loads(re.search(r"```json\n(.*?)\n```", doc, re.S).group(1))
    validate_result(example)
    result = schema.document_from_dict(example)
    assert example["schema_version"] == schema.SCHEMA_VERSION
    assert (result.text, result.markdown) == (document_text(result.pages), document_markdown(result.pages))
