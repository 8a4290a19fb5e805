"""``python -m ocr_engine fields``: the fields of a document as JSON, from a file or a stored result.

    python -m ocr_engine fields invoice.pdf --schema invoice.schema.json --lang de
    python -m ocr_engine fields --result invoice.json --schema invoice.schema.json

It prints ``{"backend": "rules", "fields": {...}}``, ``fields`` shaped as the API's
``GET /api/v1/jobs/{id}/fields`` answer. With ``--result`` no OCR runs: the result's
own language is used for dates unless ``--lang`` says otherwise. Exit codes as for
``python -m ocr_engine``: 2 for unusable input (``invalid_fields_schema``,
``invalid_result``, ``file_not_found``), 3 when the engine cannot run here.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from ..cli import add_engine_arguments, read_file, run_reporting_errors, write_output
from ..errors import InputError
from ..schema import document_from_dict
from .extract import extract_fields
from .spec import parse_schema


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m ocr_engine fields",
                                     description="Extract the fields of a JSON Schema from a document.")
    parser.add_argument("file", type=Path, nargs="?", help="PDF or image to read (or --result)")
    parser.add_argument("--schema", type=Path, required=True, help="JSON Schema of the fields (docs/extraction.md)")
    parser.add_argument("--result", type=Path, default=None, help="an engine result (JSON) to use instead of OCR")
    add_engine_arguments(parser)
    parser.set_defaults(lang=None)
    args = parser.parse_args(argv)
    if (args.file is None) == (args.result is None):
        parser.error("give either FILE or --result")
    return args


def main(argv: list[str] | None = None) -> int:
    return run_reporting_errors(_run, parse_args(argv))


def _load_json(path: Path, what: str, code: str):
    if not path.is_file():
        raise InputError(f"No such file: {path}", code="file_not_found")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path} is not {what}: {exc}", code=code) from None


def _run(args: argparse.Namespace) -> int:
    schema = _load_json(args.schema, "a JSON Schema", "invalid_fields_schema")
    parse_schema(schema)  # a bad schema fails before minutes of OCR
    if args.result is not None:
        data = _load_json(args.result, "an engine result", "invalid_result")
        try:
            document = document_from_dict(data)
        except (KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"{args.result} is not an engine result ({type(exc).__name__}: {exc}).",
                             code="invalid_result") from None
        lang = args.lang or document.engine.lang
    else:
        from ..config import DEFAULT_LANG

        args.lang = args.lang or DEFAULT_LANG
        with read_file(args) as (_source, _config, document):
            lang = args.lang
    extraction = extract_fields(document, schema, lang=lang)
    answer = {"backend": extraction.backend, "fields": extraction.as_dict()}
    write_output(args, json.dumps(answer, ensure_ascii=False, indent=1).encode() + b"\n", len(document.pages))
    return 0
