"""End to end over HTTP: a born-digital PDF with a scanned and a mixed page through the web server and a real worker."""

from __future__ import annotations

import time

import pytest
import requests
from rest_framework.authtoken.models import Token

from ocr_engine.schema import SCHEMA_VERSION
from tests.e2e.workers import assert_lines_belong_to_regions
from tests.ocr_engine import textlayer_samples as tls

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db(transaction=True)]


def run_job(base_url: str, headers: dict, data: bytes, **options) -> dict:
    response = requests.post(f"{base_url}/api/v1/jobs", headers=headers, timeout=30,
                             files={"file": ("mixed.pdf", data)}, data={"pipeline": "ocr", **options})
    assert response.status_code == 202, response.text
    job_id = response.json()["id"]
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        job = requests.get(f"{base_url}/api/v1/jobs/{job_id}", headers=headers, timeout=30).json()
        assert job["status"] not in ("failed", "canceled"), job
        if job["status"] == "succeeded":
            return requests.get(f"{base_url}/api/v1/jobs/{job_id}/result", headers=headers, timeout=30).json()["result"]
        time.sleep(0.3)
    raise AssertionError(f"job {job_id} did not finish")


def test_text_layer_provenance_over_http(user, asgi_server, qcluster):
    headers = {"Authorization": f"Token {Token.objects.create(user=user).key}"}
    qcluster()
    auto = run_job(asgi_server, headers, tls.mixed_pdf())
    assert auto["schema_version"] == SCHEMA_VERSION
    assert [p["text_source"] for p in auto["pages"]] == ["pdf", "pdf", "pdf", "ocr", "mixed"]
    assert all(p["text_layer_rejected"] is None for p in auto["pages"])
    assert [line["text"] for line in auto["pages"][0]["lines"]] == list(tls.TEXT_PAGES[0])
    assert {line["source"] for line in auto["pages"][0]["lines"]} == {"pdf"}
    mixed_ocr = " ".join(line["text"] for line in auto["pages"][4]["lines"] if line["source"] == "ocr")
    assert all(word in mixed_ocr for word in tls.IMAGE_WORDS)
    assert tls.TEXT_PAGES[1][1] in auto["text"]
    assert_lines_belong_to_regions(auto)

    forced = run_job(asgi_server, headers, tls.mixed_pdf(), text_layer="ocr")
    assert [p["text_source"] for p in forced["pages"]] == ["ocr"] * 5
    assert {line["source"] for p in forced["pages"] for line in p["lines"]} == {"ocr"}

    invisible = run_job(asgi_server, headers, tls.invisible_layer_pdf())
    assert invisible["pages"][0]["text_source"] == "ocr"
    assert invisible["pages"][0]["text_layer_rejected"] == "invisible_ocr_layer"
