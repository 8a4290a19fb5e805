"""Full-text search over a user's own results: lines that hold every term of a query, best first.

One query language on both databases: words (all must be there), ``"a phrase"`` (those words in that
order) and ``prefix*`` terms, case-insensitive. PostgreSQL matches ``SearchLine.vector`` in each job's
language configuration (so "invoices" also finds "invoice" in English) and ranks by ``ts_rank``; SQLite
matches its FTS5 table word by word and ranks by ``bm25``. The index (``jobs.services.search``) holds
the lines as corrected, so a corrected word is found and the word it replaced is not.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connection
from django.db.models import F, Q, QuerySet
from django.utils.html import escape

from jobs.models import Job, SearchLine

# PaddleOCR language code -> PostgreSQL's text search configuration (stemming, stop words). Languages
# PostgreSQL has no configuration for are indexed word by word ("simple").
SEARCH_CONFIGS = {
    "en": "english", "de": "german", "fr": "french", "es": "spanish", "nl": "dutch", "it": "italian",
    "pt": "portuguese", "ca": "catalan", "da": "danish", "sv": "swedish", "no": "norwegian", "fi": "finnish",
    "ga": "irish", "rs_latin": "serbian", "ro": "romanian", "hu": "hungarian", "lt": "lithuanian",
    "tr": "turkish", "id": "indonesian", "eu": "basque", "ru": "russian", "ar": "arabic", "el": "greek",
    "hi": "hindi", "ta": "tamil", "ne": "nepali", "rs_cyrillic": "serbian",
}
DEFAULT_CONFIG = "simple"


def search_config(lang: str) -> str:
    return SEARCH_CONFIGS.get(lang, DEFAULT_CONFIG)


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


def search_lines(user, terms: list[Term], *, job_id=None, page_number: int | None = None) -> Sequence[SearchLine]:
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
        # The configurations come from the user's jobs (a few rows), not from their lines (all of them).
        langs = Job.objects.filter(owner=user).order_by().values_list("lang", flat=True).distinct()
        configs = sorted({search_config(lang) for lang in langs})
        match = Q(pk__in=[])
        for config in configs:
            match |= Q(config=config, vector=SearchQuery(raw, config=config, search_type="raw"))
        # Ranked with a constant query where one configuration is all there is (parsing the query once,
        # not once per matching line: most of the time of a word on thousands of lines).
        ranked = SearchQuery(raw, config=configs[0] if len(configs) == 1 else F("config"), search_type="raw")
        rank = SearchRank(F("vector"), ranked)
        return lines.filter(match).annotate(rank=rank).order_by("-rank", "job_id", "page_number", "position")
    return _RankedLines(lines, _fts5_query(terms))


class _RankedLines(Sequence):
    """SQLite: the matching lines, best first (``bm25``), as a sequence a paginator slices.

    One FTS5 query finds and orders the ids, its table leading the join (``CROSS JOIN``: SQLite's way to
    fix the order; with the lines' table leading, the owner's index wins and every line of the owner is
    matched one by one: seconds on 30,000 lines). A slice fetches only its rows.
    """

    def __init__(self, scope: QuerySet[SearchLine], match: str):
        where, params = scope.query.get_compiler(connection=connection).compile(scope.query.where)
        sql = ("SELECT jobs_searchline.id FROM jobs_searchline_fts CROSS JOIN jobs_searchline"
               " ON jobs_searchline.id = jobs_searchline_fts.rowid"
               f" WHERE jobs_searchline_fts MATCH %s AND {where}"
               " ORDER BY bm25(jobs_searchline_fts), jobs_searchline.job_id, jobs_searchline.page_number,"
               " jobs_searchline.position")
        with connection.cursor() as cursor:
            cursor.execute(sql, [match, *params])
            self.ids = [row[0] for row in cursor.fetchall()]

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, index):
        if not isinstance(index, slice):
            return self[index:index + 1][0]
        ids = self.ids[index]
        rows = SearchLine.objects.in_bulk(ids)
        return [rows[i] for i in ids]


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
