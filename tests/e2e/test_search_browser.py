"""Search from the dashboard opens the review of the hit's page with its line selected and in view.

No OCR runs: the PDF's pages are stored through the worker's services, as in test_browser.py.
"""

from __future__ import annotations

import pytest
from PIL import Image
from playwright.sync_api import expect

from jobs.options import JobOptions
from jobs import services
from tests.e2e.conftest import browser_page
from tests.jobs.helpers import page_record
from tests.ocr_engine import samples

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

LINES = 40  # page 3's; the hit is near the end, below the panel's first screen


def test_a_search_hit_on_page_3_opens_the_review_with_its_line_selected(user, api_client, asgi_server):
    blank = Image.new("RGB", (200, 280), "white")
    job, _ = services.job_create(owner=user, file=samples.pdf_from_images([blank] * 3, dpi=20),
                                 filename="three.pdf", options=JobOptions(pipeline="ocr"))
    services.job_claim(job_id=job.pk, worker_id="test")
    for number in (1, 2, 3):
        texts = [f"Filler line {k}" for k in range(1, LINES + 1)] if number == 3 else ["Hello world"]
        if number == 3:
            texts[36] = "The zeppelin arrives at noon"
        record = page_record(number, texts=texts)
        record.page.height = 20 * (len(texts) + 2)  # every line on the page
        services.job_record_page(job_id=job.pk, worker_id="test", record=record)
    services.job_finish(job_id=job.pk, worker_id="test")

    hit = api_client.get("/api/v1/search", {"q": "zeppelin"}).json()["results"][0]
    assert (hit["page"], hit["line_id"]) == (3, "p3-l37")
    assert hit["polygon"] == [[0, 740], [100, 740], [100, 758], [0, 758]]
    base = asgi_server

    with browser_page(base, "alice", "pw-alice") as page:
        page.goto(f"{base}/")
        page.fill("#search-q", "zepp*")
        page.press("#search-q", "Enter")
        expect(page.locator("#search-count")).to_have_text("1 line found.")
        result = page.locator("#search-results li")
        expect(result.locator("mark")).to_have_text("zeppelin")
        result.locator("a").click()

        page.wait_for_url(f"**/jobs/{job.pk}/?page=3&line=p3-l37")
        page.wait_for_function("document.getElementById('stage').dataset.page === '3'")
        selected = page.locator('#text-panel li.ln[aria-selected="true"]')
        expect(selected).to_have_count(1)
        expect(selected).to_contain_text("The zeppelin arrives at noon")
        expect(selected).to_be_in_viewport()
        expect(page.locator("#overlay polygon.ln.sel")).to_have_count(1)
