"""Text clean-up applied to recognised text in the normalized result (raw output stays untouched)."""

from __future__ import annotations

# PP-OCRv6's dictionary holds the full-width forms of ASCII (U+FF01-U+FF5E) for
# CJK text, and the recogniser sometimes picks them on Latin pages ("8％").
# Outside CJK they are never intended, and they break search and exports.
_FULLWIDTH_TO_ASCII = {0xFF01 + i: 0x21 + i for i in range(0x5E)} | {0x3000: 0x20}
CJK_LANGS = frozenset({"ch", "chinese_cht", "japan", "korean"})


def fold_fullwidth(text: str) -> str:
    return text.translate(_FULLWIDTH_TO_ASCII)


def text_fixer(lang: str):
    """The clean-up function for a language: identity for CJK, full-width folding elsewhere."""
    return (lambda s: s) if lang in CJK_LANGS else fold_fullwidth
