"""OCR throughput with and without the fields stage running beside it (docs/extraction.md).

    make run                                            # in another shell; it prints an API token
    .venv/bin/python bench/fields_stage.py --token <API token> --pages 8 --rounds 2

Rounds of two phases on the same drawn invoices (``bench/fields_draw.py``), each file made distinct
by a PNG text chunk (the pixels, and so the OCR work, stay the same):

* ``ocr only``: the user has no document type, so no fields stage runs;
* ``ocr + fields``: the user has an invoice type (``bench/fields_schemas.py``): every job that
  succeeds is queued on the ``llm`` cluster, which classifies and reads its fields while the OCR
  cluster reads the next pages.

Each phase submits all its pages at once and times them from the first submit to the last OCR job's
end: OCR pages per minute. The second phase also waits for every job's fields and reports the mean
time from a job's OCR end to its fields (the server's ``ocr_fields_seconds`` in /metrics) and the
share of values grounded. Phases alternate, so a machine's drift in speed falls on both alike.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from pathlib import Path

import requests
from PIL.PngImagePlugin import PngInfo
from prometheus_client.parser import text_string_to_metric_families

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fields_draw import invoice  # noqa: E402
from fields_schemas import SCHEMAS  # noqa: E402


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--token", default=os.environ.get("OCR_API_TOKEN"), help="API token (or $OCR_API_TOKEN)")
    parser.add_argument("--pages", type=int, default=8, help="invoices per phase")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the two phases")
    args = parser.parse_args()
    if not args.token:
        parser.error("--token is required (make run prints one)")
    return args


def files(count: int, tag: str) -> list[tuple[str, bytes]]:
    out = []
    for n in range(count):
        page = invoice(n)
        info = PngInfo()
        info.add_text("bench", f"{tag}-{n}-{time.time_ns()}")  # a new file for the dedup, the same pixels
        data = io.BytesIO()
        page.image.save(data, "PNG", pnginfo=info)
        out.append((page.lang, data.getvalue()))
    return out


def run_phase(api: requests.Session, base: str, pages: list[tuple[str, bytes]], *, with_fields: bool) -> dict:
    started = time.monotonic()
    jobs = []
    for n, (lang, data) in enumerate(pages):
        answer = api.post(f"{base}/api/v1/jobs", files={"file": (f"invoice-{n}.png", data)},
                          data={"lang": lang, "pipeline": "ocr"})
        answer.raise_for_status()
        jobs.append(answer.json()["id"])
    ended = {}
    for job_id in jobs:
        while job_id not in ended:
            job = api.get(f"{base}/api/v1/jobs/{job_id}", params={"wait": 50}).json()
            if job["status"] in ("succeeded", "failed", "canceled"):
                assert job["status"] == "succeeded", job
                ended[job_id] = time.monotonic()
    ocr_seconds = max(ended.values()) - started
    report = {"pages_per_minute": 60 * len(pages) / ocr_seconds}
    if with_fields:
        grounded, values = 0, 0
        for job_id in jobs:
            while (fields := api.get(f"{base}/api/v1/jobs/{job_id}/fields").json())["status"] == "pending":
                time.sleep(0.1)
            for value in fields["fields"].values():
                cells = [c for row in value for c in row.values()] if isinstance(value, list) else [value]
                values += len(cells)
                grounded += sum(c["grounded"] for c in cells)
        report["grounded"] = grounded / max(values, 1)
    return report


def fields_seconds(api: requests.Session, base: str) -> tuple[float, float]:
    """(sum, count) of the server's ocr_fields_seconds: each stage's time from OCR's end to its answer."""
    totals = [0.0, 0.0]
    for family in text_string_to_metric_families(api.get(f"{base}/metrics").text):
        for sample in family.samples:
            if sample.name in ("ocr_fields_seconds_sum", "ocr_fields_seconds_count"):
                totals[sample.name.endswith("_count")] += sample.value
    return totals[0], totals[1]


def main() -> int:
    args = parse_args()
    api = requests.Session()
    api.headers["Authorization"] = f"Token {args.token}"
    base = args.url.rstrip("/")
    results: dict[str, list[dict]] = {"ocr only": [], "ocr + fields": []}
    for round_number in range(args.rounds):
        for phase in results:
            with_fields = phase == "ocr + fields"
            type_id = None
            if with_fields:
                created = api.post(f"{base}/api/v1/document-types", json={
                    "name": f"bench-invoice-{time.time_ns()}", "match": "invoice rechnung facture factura",
                    "matching_algorithm": "any", "fields_schema": SCHEMAS["invoice"], "backend": "rules"})
                created.raise_for_status()
                type_id = created.json()["id"]
            try:
                before = fields_seconds(api, base)
                report = run_phase(api, base, files(args.pages, f"{phase}-{round_number}"), with_fields=with_fields)
                after = fields_seconds(api, base)
                if with_fields:  # the stages of this phase: mean seconds from OCR's end to their answer
                    report["fields_mean_seconds"] = (after[0] - before[0]) / max(after[1] - before[1], 1)
            finally:
                if type_id is not None:
                    api.delete(f"{base}/api/v1/document-types/{type_id}")
            results[phase].append(report)
            print(f"round {round_number + 1} {phase:13s} " + "  ".join(
                f"{k} {v:.2f}" for k, v in report.items()), flush=True)
    for phase, reports in results.items():
        print(f"{phase:13s} pages/min median {statistics.median(r['pages_per_minute'] for r in reports):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
