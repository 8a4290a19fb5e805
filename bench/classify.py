"""Score classification (rules + the learned classifier) on the labelled set of bench/fields.py (docs/extraction.md).

    .venv/bin/python bench/classify.py             # the set, OCR'd once (cached), scored by 5-fold cross-validation
    .venv/bin/python bench/classify.py --extra 0   # only bench/fields.py's 44 pages

The set: bench/fields.py's invoices, receipts and letters (en, de, fr, es), plus ``--extra`` more pages of
each kind drawn by the same code (``var/fields-bench/``, OCR'd once by the real engine and reused). Three
document types, as a user would write them: ``invoice`` and ``receipt`` with ``any`` rules naming the
printed titles in the four languages, ``letter`` with ``auto`` (the learned classifier only). Each fold's
classifier learns from the other folds' pages (their types given, as a user names them at submit) and
classifies its own with ``jobs.services.classification.classify``: exactly the stage's decision.
Reported: accuracy of the rules alone, of the learned classifier alone, and of both (the stage), and how
often each source decided.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ocrsite.settings.test")

import django  # noqa: E402

django.setup()

import fields as fields_bench  # noqa: E402
from fields_draw import invoice, letter, receipt  # noqa: E402

from jobs.models import DocumentType  # noqa: E402
from jobs.services.classification import classify  # noqa: E402
from jobs.services.classifier import fit  # noqa: E402
from ocr_engine.schema import document_from_dict  # noqa: E402

TYPES = [  # what a user would write for these documents; ids stand in for rows (nothing is stored)
    DocumentType(pk=1, name="invoice", match="invoice rechnung facture factura", matching_algorithm="any"),
    DocumentType(pk=2, name="letter", matching_algorithm="auto"),
    DocumentType(pk=3, name="receipt", match="receipt beleg kassenbon ticket recibo", matching_algorithm="any"),
]
TYPE_OF = {t.name: t for t in TYPES}
FOLDS = 5


def extra_pages(count: int) -> list[dict]:
    """``count`` more pages of each kind, after those bench/fields.py draws, saved beside its set."""
    records = []
    for kind, draw in (("invoice", invoice), ("receipt", receipt), ("letter", letter)):
        first = fields_bench.COUNTS[kind][1]
        for n in range(first, first + count):
            page = draw(n)
            path = fields_bench.OUT / f"{page.name}.png"
            if not path.exists():
                page.image.save(path)
            records.append({"name": page.name, "kind": kind, "lang": page.lang, "file": path.name})
    return records


def score(records: list[dict], texts: dict[str, str]) -> dict:
    """Accuracy of the rules alone, the model alone and the stage, over ``FOLDS`` folds (stratified by kind)."""
    order = sorted(records, key=lambda r: (r["kind"], random.Random(r["name"]).random()))
    fold_of = {r["name"]: i % FOLDS for i, r in enumerate(order)}
    auto_only = [DocumentType(pk=t.pk, name=t.name, matching_algorithm="auto") for t in TYPES]
    right = Counter()
    sources = Counter()
    misses = []
    for fold in range(FOLDS):
        train = [r for r in records if fold_of[r["name"]] != fold]
        model = fit([texts[r["name"]] for r in train], [TYPE_OF[r["kind"]].pk for r in train])
        for record in (r for r in records if fold_of[r["name"]] == fold):
            text, truth = texts[record["name"]], record["kind"]
            for name, found in (("rules", classify(TYPES, text, None)), ("model", classify(auto_only, text, model)),
                                ("stage", classify(TYPES, text, model))):
                right[name] += found is not None and found.document_type.name == truth
                if name == "stage":
                    sources[str(found.source) if found else "none"] += 1
                    if found is None or found.document_type.name != truth:
                        misses.append(f"{record['name']}: {found and (found.document_type.name, str(found.source))}")
    total = len(records)
    return {"pages": total, **{name: round(right[name] / total, 3) for name in ("rules", "model", "stage")},
            "sources": dict(sources), "misses": misses}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--extra", type=int, default=10, help="more pages of each kind (default 10)")
    args = parser.parse_args(argv)
    records = fields_bench.build() + extra_pages(args.extra)
    results = fields_bench.ocr(records, rebuild=False)
    texts = {name: document_from_dict(result).text for name, result in results.items()}
    started = time.perf_counter()
    scored = score(records, texts)
    kinds = Counter(r["kind"] for r in records)
    print(f"classification of {scored['pages']} pages ({', '.join(f'{n} {k}s' for k, n in sorted(kinds.items()))}), "
          f"{FOLDS}-fold: {time.perf_counter() - started:.1f} s")
    print(f"accuracy  rules alone {scored['rules']:.3f}  learned alone {scored['model']:.3f}  "
          f"rules + learned {scored['stage']:.3f}")
    print(f"decided by: {scored['sources']}")
    for miss in scored["misses"]:
        print(f"  miss {miss}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
