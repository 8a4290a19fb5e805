"""The ``llm`` backend in the platform: ``ocr_engine.fields.llm`` asking the configured server (``jobs.llm``).

Raises ``jobs.llm.LlmError`` (codes ``llm_unavailable``, ``llm_timeout``, ``llm_invalid_answer``)
once the client's retries are spent; the fields stage stores that code as the extraction's
error, and the OCR result is never touched.
"""

from __future__ import annotations

from django.conf import settings

from jobs.llm import chat_json
from ocr_engine.fields import Extraction
from ocr_engine.fields.llm import extract_fields_llm
from ocr_engine.schema import DocumentResult


def llm_extract(result: DocumentResult, schema: dict, *, lang: str) -> Extraction:
    """The fields of ``schema`` read from ``result`` by the LLM (``OCR_LLM_SAMPLES`` answers), each verified."""
    return extract_fields_llm(result, schema, lang=lang, chat=chat_json, samples=settings.OCR_LLM_SAMPLES)
