"""The LLM client and the ``llm`` backend against a real llama.cpp server (SmolLM2-135M-Instruct).

A 135M model's answers are no guide to what a real model reads: these tests check the
mechanics (schema-valid JSON, citations, the verifier catching a made-up value, retries,
each failure's code), never the values' wisdom.
"""

from __future__ import annotations

import copy
import logging

import jsonschema
import pytest

from jobs.llm import LlmConfig, LlmInvalidAnswer, LlmTimeout, LlmUnavailable, chat_json, llm_configured
from jobs.services.llm_extraction import llm_extract
from ocr_engine.fields import parse_schema
from ocr_engine.fields.llm import answer_schema, extract_fields_llm, messages
from tests.llm_server import MODEL_ALIAS, LlamaServer, free_port
from tests.ocr_engine.fields.hand_invoice import SCHEMA, invoice

real_server = pytest.mark.llm

SPECS = parse_schema(SCHEMA)
# Few fields, few tokens: a 135M model on two busy cores writes about ten tokens a second.
HEADER = {"type": "object", "properties": {k: SCHEMA["properties"][k] for k in ("invoice_number", "customer")}}
# One constant member: the quickest answer there is, for the tests of what goes wrong.
TINY = {"type": "object", "properties": {"ok": {"const": True}}, "required": ["ok"]}
TINY_MESSAGES = [{"role": "user", "content": "Say ok."}]
FIELD_KEYS = {"value", "confidence", "grounded", "reason", "evidence"}


def config(url: str, **changes) -> LlmConfig:
    return LlmConfig(**{"url": url, "model": MODEL_ALIAS, "response_format": "json_object", "backoff": 0.2,
                        "attempts": 2, **changes})


def failed_attempts(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "jobs.llm" and "failed" in r.getMessage()]


def test_llm_configured_by_its_url(settings):
    settings.OCR_LLM_URL = ""
    assert not llm_configured()
    settings.OCR_LLM_URL = "http://127.0.0.1:8081/v1"
    assert llm_configured()


@real_server
def test_the_answer_is_json_of_the_answer_schema_line_items_and_cited_ids_included(llm_server):
    document = invoice()
    schema = answer_schema(SPECS, max_rows=sum(len(page.lines) for page in document.pages))
    [answer] = chat_json(messages(document, SPECS), schema, config=config(llm_server.url))
    jsonschema.validate(answer, schema)
    assert set(answer) == set(SCHEMA["properties"]) and isinstance(answer["line_items"], list)


@real_server
def test_every_value_of_the_llm_backend_is_verified_against_its_cited_lines(llm_settings):
    llm_settings.OCR_LLM_SAMPLES = 2
    extraction = llm_extract(invoice(), HEADER, lang="de")
    fields = extraction.as_dict()
    assert extraction.backend == "llm" and set(fields) == set(HEADER["properties"])
    lines = {line.id: line.text for line in invoice().pages[0].lines}
    for value in fields.values():
        assert set(value) == FIELD_KEYS
        if value["grounded"]:
            assert value["reason"] is None and value["evidence"] and 0 < value["confidence"] <= 0.9
            assert all(e["line_id"] in lines and e["page"] == 1 for e in value["evidence"])
        else:
            assert value["reason"] and value["confidence"] == 0


@real_server
def test_a_value_the_model_makes_up_comes_back_ungrounded_with_its_reason(llm_server):
    """The server's grammar makes the model write an invoice number that no line prints, citing line 1."""
    def chat_made_up(chat_messages, schema, *, samples=1):
        schema = copy.deepcopy(schema)
        schema["properties"]["invoice_number"]["properties"] = {
            "value": {"const": "INV-2024-999"}, "lines": {"type": "array", "items": {"const": "p1-l1"},
                                                          "minItems": 1, "maxItems": 1}}
        return chat_json(chat_messages, schema, samples=samples, config=config(llm_server.url))

    only_number = {"type": "object", "properties": {"invoice_number": SCHEMA["properties"]["invoice_number"]}}
    field = extract_fields_llm(invoice(), only_number, lang="de", chat=chat_made_up).as_dict()["invoice_number"]
    assert (field["value"], field["grounded"], field["reason"], field["confidence"]) == (
        "INV-2024-999", False, "not_in_cited_lines", 0)
    assert [e["line_id"] for e in field["evidence"]] == ["p1-l1"]  # what it cited, for the reviewer


@real_server
def test_a_server_that_comes_up_during_the_backoff_answers_a_retry_and_once_stopped_is_unavailable(caplog):
    caplog.set_level(logging.WARNING, logger="jobs.llm")
    server = LlamaServer()
    try:
        server.start(wait=False)  # loading takes seconds: the first tries find the port closed
        answers = chat_json(TINY_MESSAGES, TINY, config=config(server.url, attempts=8, backoff=0.5))
        assert answers == [{"ok": True}]
        retried = failed_attempts(caplog)
        assert retried and all("llm_unavailable" in message for message in retried)

        server.stop()
        caplog.clear()
        with pytest.raises(LlmUnavailable, match="cannot be reached"):
            chat_json(TINY_MESSAGES, TINY, config=config(server.url, attempts=3))
        assert len(failed_attempts(caplog)) == 3
    finally:
        server.close()


def test_no_server_at_all_is_unavailable_after_the_retries(caplog):
    with pytest.raises(LlmUnavailable) as failure:
        chat_json([{"role": "user", "content": "hi"}], {"type": "object"},
                  config=config(f"http://127.0.0.1:{free_port()}/v1", attempts=3, backoff=0.01))
    assert failure.value.code == "llm_unavailable" and len(failed_attempts(caplog)) == 3


@real_server
def test_an_answer_slower_than_the_timeout_is_llm_timeout(llm_server, caplog):
    with pytest.raises(LlmTimeout) as failure:
        chat_json(TINY_MESSAGES, TINY, config=config(llm_server.url, timeout=0.005, max_tokens=1))
    assert failure.value.code == "llm_timeout" and len(failed_attempts(caplog)) == 2


@real_server
def test_an_answer_cut_at_the_token_limit_is_llm_invalid_answer_after_the_retries(llm_server, caplog):
    with pytest.raises(LlmInvalidAnswer, match="cut at the token limit") as failure:
        chat_json(TINY_MESSAGES, TINY, config=config(llm_server.url, max_tokens=2))
    assert failure.value.code == "llm_invalid_answer" and len(failed_attempts(caplog)) == 2


@real_server
def test_a_request_the_server_refuses_is_not_retried(llm_server, caplog):
    """An OCR_LLM_URL without its /v1: the server's 404 is the same on every try."""
    with pytest.raises(LlmUnavailable, match="refused the request, HTTP 404") as failure:
        chat_json(TINY_MESSAGES, TINY, config=config(llm_server.url.removesuffix("/v1"), attempts=3))
    assert failure.value.code == "llm_unavailable" and len(failed_attempts(caplog)) == 1
