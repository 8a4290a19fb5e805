"""Score the ``rules`` field extraction on a labelled set drawn here (docs/extraction.md).

    .venv/bin/python bench/fields.py                # build the set, OCR it (cached), score it
    .venv/bin/python bench/fields.py --rebuild-ocr  # OCR every page again

The set (``var/fields-bench/``, outside git): 32 invoices (en, de, fr, es x four
layouts: label and value on one line, in columns, label above, and a block on the right
with labels in capitals and a numbered item table whose descriptions wrap), 6 receipts
and 6 letters, drawn with DejaVu and Liberation fonts, most of them slightly turned,
some blurred, some saved as JPEG. Each page is read by the real engine (pipeline
``ocr``) once; its result is kept beside the page and reused while the page's bytes
are the same.

A field counts as right only when its value equals the truth *and* one of its cited
lines holds the printed value (DocILE's rule: value and location). Line items count
cell by cell, row n against row n.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fields_draw import invoice, letter, receipt  # noqa: E402
from fields_schemas import SCHEMAS  # noqa: E402

from ocr_engine.fields import extract_fields  # noqa: E402
from ocr_engine.schema import document_from_dict  # noqa: E402

OUT = ROOT / "var" / "fields-bench"
COUNTS = {"invoice": (invoice, 32), "receipt": (receipt, 6), "letter": (letter, 6)}


def build() -> list[dict]:
    """Draw every page (deterministic) and write it and its truth; returns the truth records."""
    OUT.mkdir(parents=True, exist_ok=True)
    records = []
    for kind, (draw, count) in COUNTS.items():
        for n in range(count):
            page = draw(n)
            suffix = ".jpg" if page.noise["jpeg"] else ".png"
            path = OUT / f"{page.name}{suffix}"
            if page.noise["jpeg"]:
                page.image.save(path, quality=page.noise["jpeg"])
            else:
                page.image.save(path)
            records.append({"name": page.name, "kind": kind, "lang": page.lang, "file": path.name,
                            "fields": page.fields, "items": page.items, "noise": page.noise})
    (OUT / "truth.json").write_text(json.dumps(records, indent=1, ensure_ascii=False))
    for kind, schema in SCHEMAS.items():
        (OUT / f"{kind}.schema.json").write_text(json.dumps(schema, indent=1, ensure_ascii=False))
    return records


def ocr(records: list[dict], *, rebuild: bool) -> dict[str, dict]:
    """The engine's result of every page, read once and then from ``<page>.result.json``."""
    import hashlib

    results, todo = {}, []
    for record in records:
        cached = OUT / f"{record['name']}.result.json"
        sha = hashlib.sha256((OUT / record["file"]).read_bytes()).hexdigest()
        if cached.exists() and not rebuild and json.loads(cached.read_text())["source"]["sha256"] == sha:
            results[record["name"]] = json.loads(cached.read_text())
        else:
            todo.append(record)
    for lang in sorted({r["lang"] for r in todo}):
        from ocr_engine.config import EngineConfig
        from ocr_engine.engine import Engine, assemble_document
        from ocr_engine.inputs import open_document
        from ocr_engine.schema import to_dict

        engine = Engine(EngineConfig(pipeline="ocr", lang=lang, models_dir=ROOT / "models"))
        for record in (r for r in todo if r["lang"] == lang):
            started = time.perf_counter()
            path = OUT / record["file"]
            with open_document(path, filename=path.name) as document:
                pages = [out.page for out in engine.process_document(document)]
                source = {"filename": path.name, "media_type": document.media_type, "sha256": document.sha256,
                          "page_count": document.page_count}
            result = to_dict(assemble_document(pages=pages, engine=engine.info, source=source))
            (OUT / f"{record['name']}.result.json").write_text(json.dumps(result))
            results[record["name"]] = result
            print(f"ocr {record['name']}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return results


def _engine_point(x: float, y: float, noise: dict, page: dict) -> tuple[float, float]:
    """A point of the drawn page in the frame the engine read: turned by the noise, then by the engine's deskew.

    Both are PIL rotations about the centre with ``expand=True``.
    """
    size = tuple(noise["size"])
    for angle in (noise["angle"], page["skew"]):
        if angle:
            t = math.radians(angle)
            w, h = size
            size = (abs(w * math.cos(t)) + abs(h * math.sin(t)), abs(w * math.sin(t)) + abs(h * math.cos(t)))
            dx, dy = x - w / 2, y - h / 2
            x, y = size[0] / 2 + dx * math.cos(t) + dy * math.sin(t), size[1] / 2 - dx * math.sin(t) + dy * math.cos(t)
    return x, y


def _same(truth, value) -> bool:
    if value is None:
        return False
    if isinstance(truth, (int, float)) or (isinstance(truth, str) and _is_number(truth) and not isinstance(
            value, str)):
        return isinstance(value, (int, float)) and Decimal(str(value)) == Decimal(str(truth))
    return " ".join(str(truth).casefold().split()) == " ".join(str(value).casefold().split())


def _is_number(text: str) -> bool:
    try:
        Decimal(text)
    except ArithmeticError:
        return False
    return True


def _cites(truth: dict, evidence: list[dict], record: dict, result: dict) -> bool:
    """Whether every line printing the value (a wrapped description has two) is among the cited lines."""
    def held(box) -> bool:
        x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        for item in evidence:
            ex, ey = _engine_point(x, y, record["noise"], result["pages"][item["page"] - 1])
            xs, ys = zip(*item["polygon"])
            if min(xs) - 4 <= ex <= max(xs) + 4 and min(ys) - 4 <= ey <= max(ys) + 4:
                return True
        return False

    return all(held(box) for box in truth.get("lines") or [truth["box"]])


def score(records: list[dict], results: dict[str, dict]) -> dict[str, dict]:
    """Per kind: true positives, false positives, false negatives, precision, recall, F1, and the misses."""
    totals: dict[str, dict] = {}
    for record in records:
        document = document_from_dict(results[record["name"]])
        found = extract_fields(document, SCHEMAS[record["kind"]], lang=record["lang"]).as_dict()
        tally = totals.setdefault(record["kind"], {"tp": 0, "fp": 0, "fn": 0, "misses": []})
        pairs = [(name, truth, found.get(name)) for name, truth in record["fields"].items()]
        predicted_items = found.get("line_items") or []
        for i, row in enumerate(record["items"]):
            for name, truth in row.items():
                got = predicted_items[i].get(name) if i < len(predicted_items) else None
                pairs.append((f"line_items[{i}].{name}", truth, got))
        for i in range(len(record["items"]), len(predicted_items)):  # rows that are not there
            tally["fp"] += sum(1 for v in predicted_items[i].values() if v["value"] is not None)
        for name, truth, got in pairs:
            right = got is not None and _same(truth["value"], got["value"]) and _cites(
                truth, got["evidence"], record, results[record["name"]])
            if right:
                tally["tp"] += 1
                continue
            tally["fn"] += 1
            if got is not None and got["value"] is not None:
                tally["fp"] += 1
            tally["misses"].append(f"{record['name']} {name}: truth {truth['value']!r}, got "
                                   f"{got and got['value']!r} ({got and got['reason']})")
    for tally in totals.values():
        p = tally["tp"] / max(1, tally["tp"] + tally["fp"])
        r = tally["tp"] / max(1, tally["tp"] + tally["fn"])
        tally.update(precision=round(p, 3), recall=round(r, 3), f1=round(2 * p * r / max(1e-9, p + r), 3))
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rebuild-ocr", action="store_true", help="OCR every page again")
    parser.add_argument("--misses", action="store_true", help="list every field that was not right")
    args = parser.parse_args(argv)
    records = build()
    results = ocr(records, rebuild=args.rebuild_ocr)
    started = time.perf_counter()
    totals = score(records, results)
    print(f"extraction of {len(records)} pages: {time.perf_counter() - started:.2f} s")
    for kind, tally in totals.items():
        print(f"{kind:8} fields {tally['tp'] + tally['fn']:4}  right {tally['tp']:4}  wrong or extra {tally['fp']:3}  "
              f"precision {tally['precision']:.3f}  recall {tally['recall']:.3f}  F1 {tally['f1']:.3f}")
        if args.misses:
            print("\n".join(f"  {m}" for m in tally["misses"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
