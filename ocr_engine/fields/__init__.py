"""Fields from pages: the values a business needs, each verified against the OCR lines it cites.

Plain Python, no Django: ``extract_fields(result, schema, lang="de")`` takes an engine
result (``ocr_engine.schema.DocumentResult``) and a JSON Schema of the fields
(``spec`` says how types are spelled) and returns each value with its confidence,
whether it is grounded, why not, and its evidence (page, line id, polygon).
docs/extraction.md describes the stages, the backends and the grounding rule.
"""

from .extract import Extraction, extract_fields
from .spec import InvalidFieldsSchema, parse_schema

__all__ = ["Extraction", "InvalidFieldsSchema", "extract_fields", "parse_schema"]
