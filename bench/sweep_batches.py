"""The sweep's batch probes (``bench/sweep.py``): ZIPs built to take the web process down or fail the batch.

* a real page beside 785 bytes of bzip2 that inflate to 1 GiB, and beside an LZMA member: 202 within
  5 s, the page a job and the member refused as ``archive_unsupported_compression``;
* a ZIP whose end of central directory claims a million entries: 400 ``archive_too_many_members`` at once;
* a member named with 65,000 characters: refused as ``archive_name_invalid``, listed by a name cut to 255.
"""

from __future__ import annotations

import io
import time

import requests
from PIL import Image

from tests.jobs.zip_samples import bzip2_gigabyte_zip, claiming_entries, lzma_zip, zip_of

FAST_SECONDS = 5


def batch_probes(sweep, api: requests.Session) -> None:
    page = _page()
    for label, archive in (("bzip2", bzip2_gigabyte_zip(page)), ("LZMA", lzma_zip(page))):
        reply, seconds = _send(sweep, api, archive)
        errors = [(e["member"], e["code"]) for e in reply.json().get("errors", [])] if reply.ok else []
        sweep.expect(f"batch with a {label} member", reply.status_code == 202 and seconds < FAST_SECONDS
                     and errors == [("bomb.png", "archive_unsupported_compression")],
                     f"HTTP {reply.status_code} in {seconds:.1f} s: {reply.text[:200]}")
    reply, seconds = _send(sweep, api, claiming_entries(zip_of([("a.png", page)]), 1_000_000))
    sweep.expect("batch whose directory claims a million entries", reply.status_code == 400
                 and reply.json().get("code") == "archive_too_many_members" and seconds < FAST_SECONDS,
                 f"HTTP {reply.status_code} in {seconds:.1f} s: {reply.text[:200]}")
    reply, _ = _send(sweep, api, zip_of([("n" * 65_000 + ".png", page)]))
    errors = reply.json().get("errors", []) if reply.status_code == 202 else []
    sweep.expect("batch member with a 65,000-character name", len(errors) == 1
                 and errors[0]["code"] == "archive_name_invalid" and len(errors[0]["member"]) <= 255
                 and "nnn" not in errors[0]["detail"], f"HTTP {reply.status_code}: {reply.text[:200]}")


def _send(sweep, api: requests.Session, archive: bytes) -> tuple[requests.Response, float]:
    started = time.monotonic()
    reply = api.post(f"{sweep.url}/api/v1/batches", files={"file": ("probe.zip", archive, "application/zip")},
                     data={"pipeline": "ocr"}, timeout=120)
    return reply, time.monotonic() - started


def _page() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (200, 80), "white").save(buffer, "PNG")
    return buffer.getvalue()
