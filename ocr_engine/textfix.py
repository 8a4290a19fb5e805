"""Text clean-up applied to recognised text in the normalized result (raw output stays untouched)."""

from __future__ import annotations

import re

# PP-OCRv6's dictionary holds the full-width forms of ASCII (U+FF01-U+FF5E) for
# CJK text, and the recogniser sometimes picks them on Latin pages ("8％").
# Outside CJK they are never intended, and they break search and exports.
_FULLWIDTH_TO_ASCII = {0xFF01 + i: 0x21 + i for i in range(0x5E)} | {0x3000: 0x20}
CJK_LANGS = frozenset({"ch", "chinese_cht", "japan", "korean"})


# The recogniser reads the wide cells of a monospace name inside prose as spaces
# around its dots: "systemd . unit(5)", "exim4. conf(8)", "/etc/init . d". Prose
# never puts a space on both sides of a dot before a lowercase letter or a digit
# (a sentence after a spaced dot starts with a capital: "source_name . Example"),
# nor ends a sentence right before a lowercase name that opens a parenthesis.
_SPACED_DOT = re.compile(r"(?<=\w) \. (?=[a-z0-9])")
_DOT_SPACE_CALL = re.compile(r"(?<=\w)\. (?=[a-z][\w-]*\()")


def fold_fullwidth(text: str) -> str:
    return text.translate(_FULLWIDTH_TO_ASCII)


def join_spaced_dots(text: str) -> str:
    return _DOT_SPACE_CALL.sub(".", _SPACED_DOT.sub(".", text))


def space_quotes(text: str) -> str:
    """A space outside each pair of straight double quotes that touches a letter.

    Quoted monospace names in prose lose the space outside their quotes:
    ``Sie"Noch ausstehende Aktionen"im Menü``. Only a line whose quotes pair up
    is changed, and only where a letter touches a quote from outside."""
    parts = text.split('"')
    if len(parts) < 3 or len(parts) % 2 == 0:
        return text
    for k in range(0, len(parts) - 1, 2):  # parts[k] is outside, parts[k + 1] inside a pair
        if parts[k][-1:].isalpha():
            parts[k] += " "
        if parts[k + 2][:1].isalpha():
            parts[k + 2] = " " + parts[k + 2]
    return '"'.join(parts)


def fix_latin(text: str) -> str:
    return space_quotes(join_spaced_dots(fold_fullwidth(text)))


def text_fixer(lang: str):
    """The clean-up function for a language: identity for CJK; elsewhere full-width forms folded,
    dotted monospace names joined again and quoted ones spaced from the prose around them."""
    return (lambda s: s) if lang in CJK_LANGS else fix_latin
