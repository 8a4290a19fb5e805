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
# Likewise after a dot inside a name when a short lowercase part follows, closed at once by
# a quote, a bracket or more punctuation ("multi-user. target”", "gentoo-0.9. 12. tar. gz.");
# prose puts a space after a sentence's dot, and then a capital or a word and a space. The
# name before the dot must look like one (longer than an abbreviation such as "vol." or
# "spec.", or holding a digit, dot, hyphen or underscore), and not be "e.g." or "i.e.".
_NAME_PART = re.compile(r"[a-z0-9][\w-]{0,7}[”\"’'.,;:)(/\]»]")
_ABBREVIATION = re.compile(r"[a-z]\.[a-z]|[A-Za-z]{1,4}")
# and around a hyphen between lowercase letters or digits ("apt - get", "(0 - 9)"): typeset
# prose sets a dash there (– or —), which the recogniser reads as such.
_SPACED_HYPHEN = re.compile(r"(?<=[a-z0-9]) - (?=[a-z0-9])")


# Quotes: which side of a word a straight quote touches decides its typographic form.
_APOSTROPHE = re.compile(r"(?<=[^\W\d_])'(?=[^\W\d_])")  # l'homme, page's
_CLOSING_DOUBLE = re.compile(r'(?<=\S)"(?=$|\W)')
_OPENING_DOUBLE = re.compile(r'(?:(?<=^)|(?<=[\s(\[{]))"(?=\S)')
_CLOSING_DOUBLE_SPACED = re.compile(r'(?<=[\w.,;:!?)\]])"(?=$|[\s.,;:!?)\]])')
_OPENING_DOUBLE_SPACED = re.compile(r'(?:(?<=^)|(?<=[\s(\[]))"(?=\w)')
_CLOSING_SINGLE = re.compile(r"(?<=\S)'(?=$|\W)")
_OPENING_SINGLE = re.compile(r"(?:(?<=^)|(?<=[\s(\[{]))'(?=\w)")
_CODE_QUOTES = re.compile(r"""\\|","|','|\w\(["']|["'][<>~|\[\]{}]|[<>~|\[\]{}]["']""")


def fold_fullwidth(text: str) -> str:
    return text.translate(_FULLWIDTH_TO_ASCII)


def _join_name_parts(text: str) -> str:
    words: list[str] = []
    for word in text.split(" "):
        if words and _NAME_PART.match(word) and re.search(r"[\w-]\.$", words[-1]):
            name = words[-1][:-1].lstrip("([{“”\"‘’'«")
            if not _ABBREVIATION.fullmatch(name):
                words[-1] += word
                continue
        words.append(word)
    return " ".join(words)


def join_spaced_names(text: str) -> str:
    text = _join_name_parts(_DOT_SPACE_CALL.sub(".", _SPACED_DOT.sub(".", text)))
    return _SPACED_HYPHEN.sub("-", text)


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


def typographic_quotes(text: str) -> str:
    """Straight quotes as the typographic ones printed pages use: ’ inside a word, “ ” and ‘ ’ by side.

    PP-OCRv6 reads most printed quotes and apostrophes as straight ones (" and ')
    although its dictionary holds “ ” ‘ ’, sometimes within one pair ("“float" to").
    Typeset documents print the typographic forms (on the real-page corpus about
    nine quotes in ten); code prints straight ones, so a line with the marks of code
    next to a quote (a backslash, ``","``, a call's parenthesis, brackets or
    comparison signs inside the quotes) is left as read.
    """
    if "'" not in text and '"' not in text or _CODE_QUOTES.search(text):
        return text
    text = _APOSTROPHE.sub("’", text)
    if sum(text.count(q) for q in '"“”') % 2 == 0:
        text = _OPENING_DOUBLE.sub("“", _CLOSING_DOUBLE.sub("”", text))
    else:  # a pair split over two lines, or a stray mark: only quotes with a space on their outer side
        text = _OPENING_DOUBLE_SPACED.sub("“", _CLOSING_DOUBLE_SPACED.sub("”", text))
    return _OPENING_SINGLE.sub("‘", _CLOSING_SINGLE.sub("’", text))


def fix_latin(text: str) -> str:
    return typographic_quotes(space_quotes(join_spaced_names(fold_fullwidth(text))))


def text_fixer(lang: str):
    """The clean-up function for a language: identity for CJK; elsewhere full-width forms folded,
    dotted monospace names joined again, quoted ones spaced from the prose around them, and
    straight quotes printed as typographic ones."""
    return (lambda s: s) if lang in CJK_LANGS else fix_latin
