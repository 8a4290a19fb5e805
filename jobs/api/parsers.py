"""Request body parsers of the API (``DEFAULT_PARSER_CLASSES``)."""

from __future__ import annotations

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    """DRF's, with a body nested deeper than Python's parser can follow (``[[[[…``) refused as malformed JSON.

    DRF turns the ``ValueError`` of bad JSON into 400 ``parse_error``; the ``RecursionError`` of too deep
    a nesting it lets through, and that was a 500.
    """

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
