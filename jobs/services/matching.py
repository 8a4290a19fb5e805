"""A document type's rules over a document's text, as Paperless-ngx matches (``documents/matching.py``).

``any``: one of the words; ``all``: every word; ``literal``: the whole text as written; ``regex``:
a regular expression; ``fuzzy``: the text close to a run of the document (RapidFuzz's partial ratio,
at least 90); ``auto``: no rules, only the learned classifier (``jobs.services.classifier``).
Words are split on spaces, and a quoted run (``"purchase order"``) is one word whose spaces match
any run of spaces. Matching ignores case, as Paperless-ngx's default ``is_insensitive`` does.
"""

from __future__ import annotations

import logging
import string

import regex
from rapidfuzz import fuzz

from jobs.models import DocumentType
from ocr_engine.errors import InputError

logger = logging.getLogger(__name__)
Matching = DocumentType.Matching

# A type's ``match`` regex is a user's regular expression run over whole documents: ``regex``
# (unlike ``re``) stops a search after a time, so a pattern with catastrophic backtracking
# cannot hold a worker. A pattern that needs longer counts as no match, and is logged.
MATCH_SECONDS = 0.5
FUZZY_CUTOFF = 90  # Paperless-ngx's partial-ratio threshold
_TERMS = regex.compile(r'"([^"]+)"|(\S+)')
_PUNCTUATION = str.maketrans("", "", string.punctuation)


class InvalidMatch(InputError):
    code = "invalid_match"


def match_words(match: str) -> list[str]:
    """The words of ``match`` as patterns: ``' a  "b   c" '`` -> ``["a", "b\\s+c"]``."""
    return [regex.escape(" ".join((quoted or word).split())).replace(r"\ ", r"\s+")
            for quoted, word in _TERMS.findall(match)]


def check_match(match: str, algorithm: str) -> None:
    """Refuse rules that could never run: a regex that does not compile, no words for a word rule."""
    if algorithm == Matching.REGEX:
        try:
            regex.compile(match)
        except regex.error as error:
            raise InvalidMatch(f"match: not a regular expression ({error}).") from None
    elif algorithm != Matching.AUTO and not match.strip():
        raise InvalidMatch(f"match: the {algorithm} rule needs words to look for.")


def _found(pattern: str, text: str) -> bool:
    return regex.search(pattern, text, flags=regex.IGNORECASE, timeout=MATCH_SECONDS) is not None


def rules_hold(document_type: DocumentType, text: str) -> bool:
    """Whether the type's rules hold on ``text`` (an ``any`` rule holds on one word as well as on all:
    counting them, a type listing its title in four languages would lose to one listing it in one)."""
    match, algorithm = document_type.match, document_type.matching_algorithm
    if not match.strip() or algorithm == Matching.AUTO:
        return False
    try:
        if algorithm == Matching.ANY:
            return any(_found(rf"\b{word}\b", text) for word in match_words(match))
        if algorithm == Matching.ALL:
            return all(_found(rf"\b{word}\b", text) for word in match_words(match))
        if algorithm == Matching.LITERAL:
            return _found(rf"\b{regex.escape(match)}\b", text)
        if algorithm == Matching.REGEX:
            return _found(match, text)
        if algorithm == Matching.FUZZY:
            wanted = match.translate(_PUNCTUATION).lower()
            return fuzz.partial_ratio(wanted, text.translate(_PUNCTUATION).lower(), score_cutoff=FUZZY_CUTOFF) > 0
    except (TimeoutError, regex.error) as error:  # a regex saved before its check, or one too slow
        logger.warning("document type %s: its %s rule failed (%s); no match", document_type.pk, algorithm, error)
        return False
    return False
