"""The LLM client: any OpenAI-compatible chat endpoint (vLLM, Ollama, llama.cpp's server), asked for JSON.

``chat_json(messages, schema)`` posts to ``{OCR_LLM_URL}/chat/completions`` with the
server's JSON-schema constrained output (``OCR_LLM_RESPONSE_FORMAT``: ``json_schema``,
the OpenAI spelling that vLLM, Ollama and llama.cpp's ``llama-server`` take, or
``json_object`` with a ``schema`` member, the only one llama-cpp-python's server takes),
then checks the answer itself: constrained decoding is the server's promise, the
``jsonschema`` check is ours, and a truncated or off-schema answer is never passed on.

Each failure is retried with exponential backoff (``OCR_LLM_ATTEMPTS`` tries in all), then
raised as an ``LlmError`` whose code says what went wrong: ``llm_unavailable`` (refused,
unreachable, 5xx, 429, or a 4xx such as a wrong key or model), ``llm_timeout`` (no answer
within ``OCR_LLM_TIMEOUT_SECONDS``) or ``llm_invalid_answer`` (not JSON, or not of the
schema). The retries live here and only here: the fields task catches ``LlmError`` and marks
the extraction failed instead of letting the queue retry on top (one scheduler for a piece
of work). The worst case, ``attempts x timeout`` plus the backoffs, stays below ``Q_TIMEOUT``.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import httpx2 as httpx
import jsonschema
from django.conf import settings

from ocr_engine.errors import OcrError

logger = logging.getLogger(__name__)

RESPONSE_FORMATS = ("json_schema", "json_object")
# The first sample is the model's best answer (greedy); the others are drawn warmer so that
# their agreement with it says something (OCR_LLM_SAMPLES=2).
FIRST_SAMPLE_TEMPERATURE = 0.0
OTHER_SAMPLE_TEMPERATURE = 0.7
# A server that accepts no connection in this long is down, however long its answers may take.
CONNECT_TIMEOUT_SECONDS = 10.0
# A Retry-After longer than this is not waited for: the attempt counts as failed.
MAX_RETRY_AFTER_SECONDS = 30.0


class LlmError(OcrError):
    """The LLM could not give a usable answer; the fields stage fails with this code, never the OCR result."""

    code = "llm_error"


class LlmUnavailable(LlmError):
    code = "llm_unavailable"


class LlmTimeout(LlmError):
    code = "llm_timeout"


class LlmInvalidAnswer(LlmError):
    code = "llm_invalid_answer"


@dataclass(frozen=True)
class LlmConfig:
    url: str  # the API's base, up to and including /v1 (as the OpenAI SDK's base_url)
    model: str
    api_key: str = ""
    timeout: float = 60.0  # seconds for one request's answer
    attempts: int = 3
    backoff: float = 2.0  # seconds before the 2nd try, doubled before each next
    response_format: str = "json_schema"
    max_tokens: int = 2048

    @classmethod
    def from_settings(cls) -> "LlmConfig":
        return cls(url=settings.OCR_LLM_URL, model=settings.OCR_LLM_MODEL, api_key=settings.OCR_LLM_API_KEY,
                   timeout=settings.OCR_LLM_TIMEOUT_SECONDS, attempts=settings.OCR_LLM_ATTEMPTS,
                   backoff=settings.OCR_LLM_BACKOFF_SECONDS, response_format=settings.OCR_LLM_RESPONSE_FORMAT,
                   max_tokens=settings.OCR_LLM_MAX_TOKENS)


def llm_configured() -> bool:
    """True when an LLM endpoint is set (``OCR_LLM_URL``): the ``auto`` backend is then ``llm``."""
    return bool(settings.OCR_LLM_URL)


def chat_json(messages: list[dict], schema: dict, *, samples: int = 1,
              config: LlmConfig | None = None) -> list[dict]:
    """Up to ``samples`` answers to ``messages``, each a dict valid against ``schema``; ``LlmError`` after the retries.

    The first answer is required. A later (warmer) sample that stays invalid after its retries is
    left out rather than failing the whole extraction: the caller counts it as disagreeing.
    """
    config = config or LlmConfig.from_settings()
    if not config.url:
        raise LlmUnavailable("No LLM is configured (OCR_LLM_URL is empty).")
    headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
    timeout = httpx.Timeout(config.timeout, connect=CONNECT_TIMEOUT_SECONDS)
    with httpx.Client(base_url=config.url.rstrip("/") + "/", headers=headers, timeout=timeout) as client:
        answers = [_answer(client, config, _request(config, messages, schema, 0))]
        for sample in range(1, samples):
            try:
                answers.append(_answer(client, config, _request(config, messages, schema, sample)))
            except LlmInvalidAnswer:
                logger.warning("LLM sample %d of %d left out: no valid answer", sample + 1, samples)
        return answers


def _request(config: LlmConfig, messages: list[dict], schema: dict, sample: int) -> dict:
    if config.response_format == "json_object":
        response_format = {"type": "json_object", "schema": schema}
    else:
        response_format = {"type": "json_schema", "json_schema": {"name": "fields", "schema": schema, "strict": True}}
    return {"model": config.model, "messages": messages, "response_format": response_format,
            "max_tokens": config.max_tokens, "seed": sample,
            "temperature": FIRST_SAMPLE_TEMPERATURE if sample == 0 else OTHER_SAMPLE_TEMPERATURE}


def _answer(client: httpx.Client, config: LlmConfig, body: dict) -> dict:
    """One sample: tried up to ``config.attempts`` times; the last failure is raised."""
    for attempt in range(1, config.attempts + 1):
        wait = config.backoff * 2 ** (attempt - 1)
        try:
            return _parse(_post(client, body), body["response_format"])
        except _Retryable as failure:
            error, wait = failure.error, failure.retry_after if failure.retry_after is not None else wait
        except LlmError as failure:
            error = failure
        logger.warning("LLM attempt %d of %d failed: %s: %s", attempt, config.attempts, error.code, error.message)
        if isinstance(error, _Refused):
            break
        if attempt < config.attempts:
            time.sleep(wait)
    raise error


class _Refused(LlmUnavailable):
    """A refusal that a retry gets again: a wrong key, model name or response format (HTTP 4xx)."""


class _Retryable(Exception):
    """A failure worth waiting for (a busy server's 429 or 503 may say how long)."""

    def __init__(self, error: LlmError, retry_after: float | None = None):
        self.error, self.retry_after = error, retry_after


def _post(client: httpx.Client, body: dict) -> dict:
    try:
        response = client.post("chat/completions", json=body)
    except httpx.ConnectTimeout:
        raise LlmUnavailable("The LLM server cannot be reached (no connection within the time-out).") from None
    except httpx.TimeoutException as exc:
        raise LlmTimeout(f"The LLM did not answer in time ({type(exc).__name__}).") from None
    except httpx.TransportError as exc:
        raise LlmUnavailable(f"The LLM server cannot be reached ({type(exc).__name__}: {exc}).") from None
    if response.status_code in (408, 429) or response.status_code >= 500:
        raise _Retryable(LlmUnavailable(f"The LLM server answered HTTP {response.status_code}: "
                                        f"{response.text[:300]}"), _retry_after(response))
    if response.status_code != 200:
        raise _Refused(f"The LLM server refused the request, HTTP {response.status_code}: {response.text[:300]}")
    try:
        return response.json()
    except ValueError:
        raise LlmUnavailable(f"The LLM server's reply is not JSON: {response.text[:300]!r}") from None


def _retry_after(response: httpx.Response) -> float | None:
    try:
        seconds = float(response.headers.get("retry-after", ""))
    except ValueError:
        return None
    return seconds if 0 <= seconds <= MAX_RETRY_AFTER_SECONDS else None


def _parse(reply: dict, response_format: dict) -> dict:
    """The answer's JSON object, checked against the schema that constrained it."""
    try:
        choice = reply["choices"][0]
        content = choice["message"]["content"] or ""
    except (KeyError, IndexError, TypeError):
        raise LlmInvalidAnswer(f"The reply has no message: {str(reply)[:300]}") from None
    if choice.get("finish_reason") == "length":
        raise LlmInvalidAnswer(f"The answer was cut at the token limit: {content[-200:]!r}")
    try:
        answer = json.loads(content)
    except ValueError:
        raise LlmInvalidAnswer(f"The answer is not JSON: {content[:300]!r}") from None
    schema = response_format.get("schema") or response_format["json_schema"]["schema"]
    try:
        jsonschema.validate(answer, schema)
    except jsonschema.ValidationError as exc:
        raise LlmInvalidAnswer(f"The answer does not follow the schema: {exc.message[:300]}") from None
    return answer
