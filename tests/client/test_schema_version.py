"""The client's check of the server's result ``schema_version`` (no server needed)."""

from __future__ import annotations

import dataclasses
import json
import warnings
from pathlib import Path

import pytest
from ocr_client import SCHEMA_VERSION, SchemaMismatch, models
from ocr_client.models import Result, check_schema_version

from ocr_engine.schema import SCHEMA_VERSION as SERVER_VERSION


def test_another_major_version_is_refused_naming_both():
    with pytest.raises(SchemaMismatch) as caught:
        check_schema_version("2.0")
    assert caught.value.code == "schema_mismatch"
    assert "2.0" in caught.value.detail and SCHEMA_VERSION in caught.value.detail


def test_a_newer_minor_version_is_read_with_a_warning_and_its_new_fields_skipped():
    major = SCHEMA_VERSION.split(".")[0]
    page = {"page_number": 1, "width": 10, "height": 10, "scale": 1.0, "dpi": None, "added_later": True,
            "lines": [{"id": "p1-l1", "region_id": "p1-r1", "order": 1, "polygon": [[0, 0], [1, 0], [1, 1], [0, 1]],
                       "bbox": [0, 0, 1, 1], "text": "hi", "confidence": 0.9, "also_new": 1}]}
    data = {"schema_version": f"{major}.99", "engine": {"pipeline": "ocr", "lang": "en", "backend": "onnxruntime",
            "device": "cpu", "models": {}, "version": "x"}, "pages": [page], "text": "hi", "markdown": "hi"}
    with pytest.warns(UserWarning, match=f"{major}.99"):
        result = Result.from_dict(data)
    assert result.pages[0].lines[0].text == "hi" and result.raw["pages"][0]["added_later"] is True
    with pytest.warns(UserWarning):
        check_schema_version(f"{major}.99")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_schema_version(SCHEMA_VERSION)  # the same version: no warning


@pytest.mark.parametrize("name", ["Word", "Line", "TableCell", "Table", "Region", "Page", "EngineInfo"])
def test_the_client_mirrors_every_field_of_the_servers_result_schema(name):
    """The client copies the result schema's shapes (it cannot import ocr_engine): this keeps the copy
    whole, field for field, and its version the server's."""
    schema = json.loads((Path(__file__).parents[2] / "ocr_engine" / "result.schema.json").read_text())
    fields = {f.name for f in dataclasses.fields(getattr(models, name))} - {"raw"}
    assert fields == set(schema["$defs"][name]["properties"])
    assert SCHEMA_VERSION == SERVER_VERSION
