"""Character error rate between two readings (engine vs reviewer, engine vs ground truth)."""

from __future__ import annotations


def edit_distance(reference: str, hypothesis: str) -> int:
    """Levenshtein distance (insertions, deletions, substitutions), O(len(reference) * len(hypothesis))."""
    previous = list(range(len(hypothesis) + 1))
    for i, r in enumerate(reference, 1):
        current = [i]
        for j, h in enumerate(hypothesis, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r != h)))
        previous = current
    return previous[-1]


def squeeze(text: str) -> str:
    """Whitespace runs as one space: line breaks and layout spacing are not character errors."""
    return " ".join(text.split())


def cer(reference: str, hypothesis: str) -> float:
    """Character error rate: edit distance / reference length, whitespace runs counted as one space."""
    ref, hyp = squeeze(reference), squeeze(hypothesis)
    if not ref:
        return float(bool(hyp))
    return edit_distance(ref, hyp) / len(ref)
