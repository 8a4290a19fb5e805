"""Retyping a line in the review UI reads the one answer every edit gives (docs/review.md, "What an edit answers").

A retype is stored as a ``LineCorrection`` on a page without geometry edits and as a ``PageEdit``
on a page with one (or on a line a reviewer drew); the panel shows the new text at once either way.
No OCR runs: the pages are made through the worker's services, as in test_browser.py.
"""

from __future__ import annotations

import pytest
from PIL import Image
from playwright.sync_api import expect

from jobs.options import JobOptions
from jobs import services
from jobs.models import LineCorrection, PageEdit
from tests.e2e.conftest import browser_page
from tests.jobs.helpers import page_record
from tests.ocr_engine import samples

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# Every state the panel's line texts go through, with the toast's text at that moment: what the
# panel shows the instant "Correction saved." appears is what the edit's answer put there, before
# the job's live "corrected" event redraws the page. ``window.notReloaded`` is lost by a reload.
WATCH_PANEL = """() => {
  window.notReloaded = true;
  window.snapshots = [];
  const toast = document.getElementById('toast');
  const snap = () => window.snapshots.push({
    toast: toast.hidden ? '' : toast.textContent,
    texts: Array.from(document.querySelectorAll('#text-panel li.ln .tx'), (t) => t.textContent)});
  const observer = new MutationObserver(snap);
  const all = {subtree: true, childList: true, characterData: true, attributes: true};
  observer.observe(document.getElementById('text-panel'), all);
  observer.observe(toast, all);
}"""


def retype(page, old: str, new: str) -> None:
    """Retype the panel line reading ``old``: select it, Enter, type, Enter; the new text shows at once."""
    expect(page.locator("#toast")).to_be_hidden(timeout=5000)  # the last retype's "Correction saved." is gone
    page.evaluate("window.snapshots = []")
    page.locator("#text-panel li.ln", has_text=old).click()
    page.keyboard.press("Enter")
    page.locator("#text-panel input.line-edit").fill(new)
    page.keyboard.press("Enter")
    expect(page.locator("#toast")).to_be_visible()  # the answer came
    expect(page.locator("#toast")).to_have_text("Correction saved.")
    snapshots = page.evaluate("window.snapshots")
    at_once = next(s for s in snapshots if s["toast"] == "Correction saved.")
    assert new in at_once["texts"], at_once
    # Never a blank or "undefined" line in between (a missing text reads as "" in textContent).
    assert all(text not in ("", "undefined") for s in snapshots for text in s["texts"]), snapshots
    expect(page.locator("#text-panel li.ln.fix .tx", has_text=new)).to_have_count(1)


def test_retyping_a_line_shows_the_new_text_at_once_on_a_page_with_a_geometry_edit(user, api_client, asgi_server):
    blank = Image.new("RGB", (200, 280), "white")
    job, _ = services.job_create(owner=user, file=samples.pdf_from_images([blank, blank], dpi=20),
                                 filename="two.pdf", options=JobOptions(pipeline="ocr"))
    services.job_claim(job_id=job.pk, worker_id="test")
    for number in (1, 2):  # each: "Hello world", "Second line" in one region of 100x40 px
        services.job_record_page(job_id=job.pk, worker_id="test", record=page_record(number))
    services.job_finish(job_id=job.pk, worker_id="test")
    # Page 1's geometry edit: a line the reviewer drew (typed, so no worker reads it).
    drawn = api_client.post(f"/api/v1/jobs/{job.pk}/pages/1/lines",
                            {"polygon": [[50, 2], [95, 2], [95, 16], [50, 16]], "text": "Drawn line"}, format="json")
    assert drawn.status_code == 201, drawn.json()
    base = asgi_server

    with browser_page(base, "alice", "pw-alice") as page:
        page.goto(f"{base}/jobs/{job.pk}/?page=1")
        expect(page.locator("#text-panel li.ln")).to_have_count(3)
        page.evaluate(WATCH_PANEL)

        retype(page, "Second line", "Second line, retyped")  # an engine line of an edited page: a PageEdit
        retype(page, "Drawn line", "Drawn line, retyped")  # the drawn line: a PageEdit

        page.click('.thumb[data-n="2"]')
        page.wait_for_function("document.getElementById('stage').dataset.page === '2'")
        expect(page.locator("#text-panel li.ln")).to_have_count(2)
        retype(page, "Hello world", "Hello, world")  # a page without geometry edits: a LineCorrection

        assert page.evaluate("window.notReloaded === true")  # no reload of the job page in between

    assert sorted(PageEdit.objects.values_list("kind", flat=True)) == ["line_change", "line_change", "line_create"]
    assert list(LineCorrection.objects.values_list("page__page_number", "text")) == [(2, "Hello, world")]
