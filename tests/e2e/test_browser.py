"""The review UI in headless Chromium (Debian's) against a real web server (uvicorn), a real qcluster, Redis and PostgreSQL.

Screenshots of the job page land in test-artifacts/ (gitignored).
"""

from __future__ import annotations

import re
import time

import pytest
from PIL import Image, ImageDraw, ImageFont
from playwright.sync_api import expect

from jobs.options import JobOptions
from jobs import services
from jobs.page_images import encode_page
from ocr_engine.normalize import refresh_texts
from ocr_engine.schema import Line, Page, Region, Table, TableCell
from tests.e2e.conftest import browser_page, screenshot
from tests.ocr_engine import samples

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

STATUS = ".job-head [data-role=status]"
PROGRESS = ".job-head [data-role=progress-text]"

# Keeps a log of every status/progress text the job header shows, in this
# document: a reload would lose the log, so a full log also proves no reload.
WATCH_HEADER = """([progress, status]) => {
  const read = () => document.querySelector(progress).textContent + ' ' + document.querySelector(status).textContent;
  window.seen = [read()];
  window.drawn = [];  // [page drawn, progress at that moment]
  new MutationObserver(() => { const now = read(); if (now !== seen[seen.length - 1]) seen.push(now); })
    .observe(document.querySelector('.job-head'), {subtree: true, childList: true, characterData: true});
  new MutationObserver(() => drawn.push([document.getElementById('stage').dataset.page, read()]))
    .observe(document.getElementById('stage'), {attributes: true, attributeFilter: ['data-page']});
}"""


def show_page(page, n: int, lines: int) -> None:
    page.click(f'.thumb[data-n="{n}"]')
    page.wait_for_function(
        "([n, lines]) => document.getElementById('stage').dataset.page === String(n)"
        " && document.querySelectorAll('#overlay polygon.ln').length === lines", arg=[n, lines])


@pytest.mark.models
def test_upload_follow_progress_review_and_correct(user, asgi_server, qcluster, tmp_path):  # noqa: F811
    qcluster()
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(samples.report_pdf(pages=2, dpi=100).data)
    base = asgi_server

    with browser_page(base, "alice", "pw-alice") as page:
        dashboard = page.context.new_page()  # open before the job exists: its row must appear live
        dashboard.goto(f"{base}/")
        expect(dashboard.locator("#live-note")).to_contain_text("Live")
        page.goto(f"{base}/upload/")
        page.set_input_files("input[type=file]", str(pdf))
        page.select_option("#id_pipeline", "ocr")
        page.click("#upload-submit")
        page.wait_for_url(re.compile(r".*/jobs/[0-9a-f-]+/.*"))
        job_id = re.search(r"/jobs/([0-9a-f-]+)/", page.url).group(1)
        page.evaluate(WATCH_HEADER, [PROGRESS, STATUS])
        screenshot(page, "job-page-queued.png")

        page.wait_for_function(f"document.querySelector('{STATUS}').textContent === 'Succeeded'", timeout=240_000)
        seen = page.evaluate("window.seen")
        # Progress moved in front of the user, page by page, without a reload.
        assert seen[0] in ("0 / 2 Queued", "0 / 2 Running") and seen[-1] == "2 / 2 Succeeded", seen
        assert any(s.startswith("1 / 2") for s in seen), seen
        # Page 1 was on screen while page 2 was still being read.
        assert ["1", "1 / 2 Running"] in page.evaluate("window.drawn"), page.evaluate("window.drawn")
        row = dashboard.locator(f'tr[data-job-id="{job_id}"]')
        expect(row.locator("[data-role=status]")).to_have_text("Succeeded")
        expect(row.locator("[data-role=progress-text]")).to_have_text("2 / 2")
        screenshot(dashboard, "dashboard.png")
        dashboard.close()

        # As many line overlays as the API result has lines, on both pages.
        result = page.request.get(f"{base}/api/v1/jobs/{job_id}/result").json()["result"]
        for api_page in result["pages"]:
            assert api_page["lines"]
            show_page(page, api_page["page_number"], len(api_page["lines"]))
            expect(page.locator("#text-panel li.ln")).to_have_count(len(api_page["lines"]))

        # Hover a line on the image: it lights up there and in the text panel.
        show_page(page, 1, len(result["pages"][0]["lines"]))
        target = page.locator("#overlay polygon.ln").nth(2)
        target.hover()
        index = target.get_attribute("data-i")
        expect(page.locator("#overlay polygon.ln.hov")).to_have_count(1)
        expect(page.locator("li.ln.hov")).to_have_attribute("data-i", index)
        expect(page.locator("li.ln.hov .tx")).to_have_text(result["pages"][0]["lines"][int(index)]["text"])
        screenshot(page, "job-page-hover.png")
        # ... and the other way round.
        page.locator("li.ln").nth(0).hover()
        expect(page.locator("#overlay polygon.ln.hov")).to_have_attribute(
            "data-i", page.locator("li.ln").nth(0).get_attribute("data-i"))

        # Correct a line in place on the image; the text export has the correction.
        target.dblclick()
        editor = page.locator("#stage input.line-edit")
        editor.fill("Corrected by the reviewer")
        screenshot(page, "job-page-editing.png")
        editor.press("Enter")
        expect(page.locator("#toast")).to_have_text("Correction saved.")
        expect(page.locator(f'li.ln[data-i="{index}"]')).to_have_class(re.compile(r"\bfix\b"))
        exported = page.request.get(f"{base}/api/v1/jobs/{job_id}/export.txt").text()
        assert "Corrected by the reviewer" in exported
        line = page.request.get(f"{base}/api/v1/jobs/{job_id}/pages/1").json()["normalized"]["lines"][int(index)]
        assert line["original_text"] == result["pages"][0]["lines"][int(index)]["text"]

        # Correct another one from the side panel with the keyboard.
        page.locator("li.ln").nth(0).click()
        page.keyboard.press("Enter")
        page.locator("#text-panel input.line-edit").fill("Panel correction")
        page.keyboard.press("Enter")
        expect(page.locator("li.ln").nth(0).locator(".tx")).to_have_text("Panel correction")

        page.click("#btn-reviewed")
        expect(page.locator("#reviewed-info")).to_be_visible()
        page.mouse.move(0, 0)
        screenshot(page, "job-page-reviewed.png")
        assert "Panel correction" in page.request.get(f"{base}/api/v1/jobs/{job_id}/export.txt").text()


def many_lines_page(number: int, rows: int, columns: int = 3, size=(2480, 3508)) -> tuple[Page, Image.Image]:
    """A 300-DPI page with ``columns`` x ``rows`` short lines really drawn on it, and its normalized result.

    samples.dense_page has ~75 lines; this is the 800+ line page the UI must handle.
    """
    width, height = size
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    font = ImageFont.truetype(str(samples.FONT_DIR / "DejaVuSans.ttf"), 8)
    words = " ".join(samples.LEFT_COLUMN + samples.RIGHT_COLUMN).split()
    margin, pitch, column_width = 60, (height - 120) / rows, (width - 120) / columns
    regions, lines = [], []
    for c in range(columns):
        x0, region_id = margin + c * column_width, f"p{number}-r{c + 1}"
        for r in range(rows):
            k = len(lines) + 1
            text = " ".join(words[(k + j) % len(words)] for j in range(6))
            box = draw.textbbox((x0, margin + r * pitch), text, font=font)
            draw.text((x0, margin + r * pitch), text, font=font, fill="black")
            lines.append(Line(id=f"p{number}-l{k}", region_id=region_id, order=k, bbox=list(box),
                              polygon=[[box[0], box[1]], [box[2], box[1]], [box[2], box[3]], [box[0], box[3]]],
                              text=text, confidence=0.55 + 0.45 * ((k * 37) % 100) / 100))
        box = [x0 - 4, margin - 4, x0 + column_width - 20, margin + rows * pitch]
        regions.append(Region(id=region_id, type="text", label="text", order=c + 1, bbox=box, confidence=0.9,
                              polygon=[[box[0], box[1]], [box[2], box[1]], [box[2], box[3]], [box[0], box[3]]],
                              text=""))
    page = Page(page_number=number, width=width, height=height, scale=1.0, dpi=300, regions=regions, lines=lines)
    refresh_texts(page)
    return page, image


def test_dense_page_stays_smooth_and_works_on_a_narrow_screen(user, asgi_server):
    """900 lines on page 1: drawn fast, hovering stays cheap; keyboard navigation; a phone-sized screen."""
    blank = Image.new("RGB", (200, 280), "white")
    job, _ = services.job_create(owner=user, file=samples.pdf_from_images([blank, blank], dpi=20),
                                 filename="dense.pdf", options=JobOptions(pipeline="ocr"))
    # The worker's part, through the real services (no engine: the page is made above).
    services.job_claim(job_id=job.pk, worker_id="test")
    for number, rows in ((1, 300), (2, 10)):
        normalized, image = many_lines_page(number, rows)
        if number == 2:  # the first column holds a table, as the structure pipeline reports one
            normalized.regions[0].type = "table"
            normalized.tables = [Table(id="p2-t1", region_id="p2-r1", html="", n_rows=4, n_cols=3, cells=[
                TableCell(row=r, col=c, row_span=1, col_span=1, bbox=None, text=text)
                for r, row in enumerate(samples.REPORT_TABLE) for c, text in enumerate(row)])]
        jpeg, thumbnail = encode_page(image, thumbnail_size=320)
        services.job_record_page(job_id=job.pk, worker_id="test", record=services.PageRecord(
            page_number=number, page=normalized, raw={}, timings={"ocr": 1.0}, image_jpeg=jpeg,
            thumbnail=thumbnail))
    services.job_finish(job_id=job.pk, worker_id="test")
    base = asgi_server

    with browser_page(base, "alice", "pw-alice") as page:
        started = time.monotonic()
        page.goto(f"{base}/jobs/{job.pk}/")
        page.wait_for_function("document.querySelectorAll('#overlay polygon.ln').length === 900")
        assert time.monotonic() - started < 5, "a 900-line page took too long to draw"
        expect(page.locator("#text-panel li.ln")).to_have_count(900)
        page.wait_for_function("document.getElementById('page-image').complete")

        hover_ms = page.evaluate("""() => {
          const lines = document.querySelectorAll('#overlay polygon.ln');
          const t0 = performance.now();
          for (let i = 0; i < 300; i++) lines[i * 3].dispatchEvent(new PointerEvent('pointerover', {bubbles: true}));
          return performance.now() - t0; }""")
        assert hover_ms / 300 < 8, f"{hover_ms / 300:.1f} ms per hover"
        expect(page.locator("#overlay polygon.ln.hov")).to_have_count(1)
        expect(page.locator("li.ln.hov")).to_have_count(1)

        # Low-confidence marks follow the threshold.
        low = sum(1 for k in range(1, 901) if 0.55 + 0.45 * ((k * 37) % 100) / 100 < 0.8)
        expect(page.locator("#overlay polygon.ln.low")).to_have_count(low)
        page.locator("#threshold").fill("1")
        expect(page.locator("#overlay polygon.ln.low")).to_have_count(900)
        page.locator("#threshold").fill("0.8")

        # Keyboard: next line, reading-order numbers, next page.
        page.locator("#viewport").focus()
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowDown")
        expect(page.locator("li.ln.sel .no")).to_have_text("2")
        page.keyboard.press("o")
        expect(page.locator("#overlay .ord-l")).to_have_count(900)
        page.keyboard.press("+")
        page.keyboard.press("+")
        screenshot(page, "job-page-dense.png")
        page.keyboard.press("ArrowRight")
        page.wait_for_function("document.getElementById('stage').dataset.page === '2'")
        expect(page.locator("#overlay polygon.ln")).to_have_count(30)
        assert page.url.endswith("?page=2")
        # The table is rendered as HTML beside its region in the text panel.
        table = page.locator(".rgn.t-table .ocr-table")
        expect(table.locator("tr")).to_have_count(4)
        expect(table.locator("tr").nth(1)).to_have_text("North1,25015%")
        expect(page.locator(".legend-item.t-table")).to_contain_text("Table (1)")
        page.locator(".legend-item.t-table input").uncheck()
        expect(page.locator("#overlay .rg.t-table")).to_be_hidden()

        page.set_viewport_size({"width": 390, "height": 844})
        page.reload()
        page.wait_for_function("document.querySelectorAll('#overlay polygon.ln').length === 30")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        screenshot(page, "job-page-narrow.png")
        page.goto(f"{base}/")
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        screenshot(page, "dashboard-narrow.png")
