"""Character error rate: the score of the real-page tests, the benchmarks and the review page."""

from __future__ import annotations

import random
from pathlib import Path

from ocr_engine.metrics import cer, edit_distance

CORPUS = Path(__file__).parent / "data" / "corpus"


def test_edit_distance_counts_insertions_deletions_and_substitutions():
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3 and edit_distance("abc", "") == 3
    assert edit_distance("Straße", "Strasse") == 2


def test_cer_of_a_real_page_is_the_edits_made_to_its_text_over_its_length():
    truth = " ".join((CORPUS / "debref-fr-79.txt").read_text().split())
    reading = list(truth)
    # Ten edits far apart, each of one character: no alignment does them in fewer.
    for position in sorted(random.Random(7).sample(range(10, len(truth) - 10, 100), 10), reverse=True):
        kind = position % 3
        if kind == 0:
            reading[position] = "#"
        elif kind == 1:
            del reading[position]
        else:
            reading.insert(position, "#")

    assert cer(truth, "".join(reading)) == 10 / len(truth)
    assert cer(truth, "\n".join(truth.split(" "))) == 0  # line breaks are not character errors
    assert cer("", "") == 0 and cer("", "x") == 1
