"""The LLM's document type: classification's last step, asked only when neither the rules nor the learned
classifier are confident and an LLM is configured (``OCR_LLM_URL``; ``jobs.llm``).

The model is given the owner's type names and the document's beginning, and must answer one of those
names or ``none`` (the server's JSON-schema constrained output: an ``enum``), so text in a document
that talks to the model can at worst pick another of the owner's types, never run anything.
Confidence: with one sample 0.5 (one answer says little); with ``OCR_LLM_SAMPLES=2``, 1 when the
second (warmer) sample agrees with the first, else 0.5.
"""

from __future__ import annotations

import logging

from django.conf import settings

from jobs.llm import LlmError, chat_json
from jobs.models import DocumentType

logger = logging.getLogger(__name__)

NONE = "none"
TEXT_CHARS = 4000  # a document's beginning (its title and headers) says what it is
SYSTEM = ("You sort documents into the document types a user has. Answer in JSON with the one type the "
          f"document is, or \"{NONE}\" when it is none of them.")


def llm_type(types: list[DocumentType], text: str) -> tuple[DocumentType, float] | None:
    """(the type the LLM picks among ``types``, its confidence), or None: the LLM picks none, or it failed
    (logged: the LLM is only classification's last resort, and a job then gets the earlier steps' answer)."""
    names = [document_type.name for document_type in types]
    schema = {"type": "object", "properties": {"document_type": {"type": "string", "enum": [*names, NONE]}},
              "required": ["document_type"], "additionalProperties": False}
    messages = [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": f"Document types: {', '.join(names)}\n\nDocument:\n{text[:TEXT_CHARS]}"}]
    try:
        answers = [answer["document_type"] for answer in chat_json(messages, schema, samples=settings.OCR_LLM_SAMPLES)]
    except LlmError as error:
        logger.warning("LLM classification failed: [%s] %s", error.code, error.message)
        return None
    if answers[0] == NONE:
        return None
    agreed = len(answers) > 1 and all(answer == answers[0] for answer in answers)
    return types[names.index(answers[0])], 1.0 if agreed else 0.5
