"""Full-text search over a user's own results: lines that hold every term of a query, best first.

One query language on both databases: words (all must be there), ``"a phrase"`` (those words in that
order) and ``prefix*`` terms, case-insensitive. PostgreSQL matches ``SearchLine.vector`` in each job's
language configuration (so "invoices" also finds "invoice" in English) and ranks by ``ts_rank``; SQLite
matches its FTS5 table word by word and ranks by ``bm25``. The index (``jobs.services.search``) holds
the lines as corrected, so a corrected word is found and the word it replaced is not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connection
from django.db.models import F, Q, QuerySet
from django.utils.html import escape

from jobs.models import SearchLine

WORD = re.compile(r"\w+")
TERM = re.compile(r'"([^"]*)"(\*?)|(\S+)')


@dataclass(frozen=True)
class Term:
    words: tuple[str, ...]  # lower case; more than one: a phrase
    prefix: bool  # the last word may go on


def parse_query(q: str) -> list[Term]:
    """The terms of a query; punctuation separates words, as both databases' tokenizers do."""
    terms = []
    for match in TERM.finditer(q):
        phrase, quoted_star, bare = match.groups()
        text = phrase if bare is None else bare
        words = tuple(WORD.findall(text.lower()))
        if words:
            terms.append(Term(words, prefix=bool(quoted_star) or (bare or "").endswith("*")))
    return terms


def _tsquery(terms: list[Term]) -> str:
    """PostgreSQL's to_tsquery syntax; every word is a quoted \\w+ run, so nothing in it is an operator."""
    return " & ".join(
        "(" + " <-> ".join(f"'{w}'" for w in term.words) + (":*" if term.prefix else "") + ")" for term in terms
    )


def _fts5_query(terms: list[Term]) -> str:
    """SQLite FTS5's MATCH syntax: each term a quoted string (a phrase), ``*`` after a prefix."""
    return " AND ".join('"' + " ".join(term.words) + '"' + (" *" if term.prefix else "") for term in terms)


def search_lines(user, terms: list[Term], *, job_id=None, page_number: int | None = None) -> QuerySet[SearchLine]:
    """``user``'s lines that match every term (of job ``job_id`` and page ``page_number`` if given), best first."""
    lines = SearchLine.objects.filter(owner=user)
    if job_id is not None:
        lines = lines.filter(job_id=job_id)
    if page_number is not None:
        lines = lines.filter(page_number=page_number)
    if connection.vendor == "postgresql":
        raw = _tsquery(terms)
        # One condition per configuration the user's jobs use, each with a constant query: the GIN
        # index answers them, where a query parsed in each row's own configuration would scan every row.
        configs = lines.order_by().values_list("config", flat=True).distinct()
        match = Q(pk__in=[])
        for config in configs:
            match |= Q(config=config, vector=SearchQuery(raw, config=config, search_type="raw"))
        rank = SearchRank(F("vector"), SearchQuery(raw, config=F("config"), search_type="raw"))
        return lines.filter(match).annotate(rank=rank).order_by("-rank", "job_id", "page_number", "position")
    return lines.extra(  # noqa: S610 - the query is a parameter; FTS5's MATCH and bm25 have no ORM form
        tables=["jobs_searchline_fts"],
        where=["jobs_searchline_fts.rowid = jobs_searchline.id", "jobs_searchline_fts MATCH %s"],
        params=[_fts5_query(terms)],
        select={"rank": "bm25(jobs_searchline_fts)"},
        order_by=["rank", "job_id", "page_number", "position"],
    )


def snippet(text: str, terms: list[Term]) -> str:
    """``text`` as HTML-escaped text, each word that starts with a query word in ``<mark>``.

    The same on both databases. Starting with, not equal to: a prefix term's word goes on, and a stemmed
    match ("invoices" for "invoice") shares its stem's start.
    """
    starts = tuple({word for term in terms for word in term.words})
    parts, end = [], 0
    for match in WORD.finditer(text):
        if match.group().lower().startswith(starts):
            parts += [escape(text[end:match.start()]), f"<mark>{escape(match.group())}</mark>"]
            end = match.end()
    return "".join(parts) + escape(text[end:])
