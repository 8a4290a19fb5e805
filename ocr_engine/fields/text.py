"""Text normalisation shared by the parsers, the label matcher and the verifier."""

from __future__ import annotations

import re
import unicodedata

_SPACES = re.compile(r"\s+")
_TOKEN = re.compile(r"[^\W_]+|#")  # "#" is a word of labels: "Invoice #"
# OCR and typography write these for one another.
_LOOKALIKES = str.maketrans({"°": "o", "º": "o", "ª": "a", "−": "-", "–": "-", "—": "-", "’": "'", "\u00a0": " ",
                             "\u202f": " "})


def fold(text: str) -> str:
    """Case-folded, accents removed, look-alike marks unified, spaces collapsed."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_LOOKALIKES))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _SPACES.sub(" ", plain.casefold()).strip()


def compact(text: str) -> str:
    """``fold`` without any spaces: OCR splits and joins words of IDs freely."""
    return fold(text).replace(" ", "")


def tokens(text: str) -> list[tuple[str, int, int]]:
    """Words of ``text`` (letters and digits, or "#") as (folded word, start, end) in the original string."""
    return [(fold(m.group()), m.start(), m.end()) for m in _TOKEN.finditer(text)]
