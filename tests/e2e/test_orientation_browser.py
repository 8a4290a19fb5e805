"""A scan uploaded on its side shows upright in the review UI, with the line overlays on the text."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from PIL import Image
from playwright.sync_api import expect

from ocr_engine.metrics import cer
from tests.e2e.conftest import browser_page, screenshot
from tests.e2e.test_browser import STATUS, show_page
from tests.ocr_engine import scans

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db(transaction=True)]

# The on-screen boxes of line ``i``'s overlay and of the page image, after scrolling the line into view.
BOXES = """(i) => {
  const line = document.querySelector(`#overlay polygon.ln[data-i="${i}"]`);
  line.scrollIntoView({block: "center"});
  const box = (el) => {
    const r = el.getBoundingClientRect();
    return {x: r.x, y: r.y, width: r.width, height: r.height};
  };
  return [box(line), box(document.getElementById('page-image'))];
}"""


def test_sideways_scan_shows_upright_with_overlays_on_the_text(user, asgi_server, qcluster, tmp_path):  # noqa: F811
    qcluster()
    upright, truth = scans.real_page(scans.REAL_PAGES[0])
    turn, rotation, _ = scans.SCAN_VARIANTS["turned-90"]
    scan = tmp_path / "sideways-scan.png"
    turn(upright).save(scan, dpi=(scans.REAL_PAGE_DPI,) * 2)
    base = asgi_server

    with browser_page(base, "alice", "pw-alice") as page:
        page.goto(f"{base}/upload/")
        page.set_input_files("input[type=file]", str(scan))
        page.select_option("#id_pipeline", "ocr")
        page.select_option("#id_orientation", "auto")
        page.click("#upload-submit")
        page.wait_for_url(re.compile(r".*/jobs/[0-9a-f-]+/.*"))
        job_id = re.search(r"/jobs/([0-9a-f-]+)/", page.url).group(1)
        page.wait_for_function(f"document.querySelector('{STATUS}').textContent === 'Succeeded'", timeout=300_000)

        result = page.request.get(f"{base}/api/v1/jobs/{job_id}/result").json()["result"]
        api_page = result["pages"][0]
        assert api_page["rotation"] == rotation
        assert (api_page["width"], api_page["height"]) == upright.size  # the upright frame, portrait
        assert cer(truth, api_page["text"]) < 0.05
        show_page(page, 1, len(api_page["lines"]))

        # The image shown is the upright one the engine read.
        natural = page.evaluate("() => { const i = document.getElementById('page-image');"
                                " return [i.naturalWidth, i.naturalHeight]; }")
        assert natural == [api_page["width"], api_page["height"]]

        # The widest of the first lines: its overlay sits where the API says, on the image.
        first = api_page["lines"][:6]
        index = max(range(len(first)), key=lambda i: first[i]["bbox"][2] - first[i]["bbox"][0])
        line = first[index]
        assert line["text"].strip() and line["text"].split()[0] in truth
        page.wait_for_load_state("networkidle")  # the page view may redraw once more after it loads
        # One synchronous read, so a redraw cannot slip between the two boxes.
        box, shown = page.evaluate(BOXES, index)
        k = shown["width"] / api_page["width"]
        x0, y0, x1, y1 = line["bbox"]
        # Within a few pixels: the polygon's stroke widens its box on every side.
        assert box["x"] == pytest.approx(shown["x"] + x0 * k, abs=4)
        assert box["y"] == pytest.approx(shown["y"] + y0 * k, abs=4)
        assert box["width"] == pytest.approx((x1 - x0) * k, abs=8)
        assert box["height"] == pytest.approx((y1 - y0) * k, abs=8)

        # ... and on the text: with the overlays hidden, the box holds far more dark
        # glyph pixels than the page on screen does on average.
        screenshot(page, "rotated-scan-review.png")
        page.evaluate("document.getElementById('overlay').style.visibility = 'hidden'")
        shot = np.asarray(Image.open(io.BytesIO(page.screenshot())).convert("L"))
        expect(page.locator("#page-image")).to_be_visible()
        left, top, right, bottom = (round(v) for v in (box["x"], box["y"], box["x"] + box["width"],
                                                         box["y"] + box["height"]))
        inside = (shot[top:bottom, left:right] < 128).mean()
        on_screen = shot[max(0, round(shown["y"])):round(shown["y"] + shown["height"]),
                         max(0, round(shown["x"])):round(shown["x"] + shown["width"])]
        average = (on_screen < 128).mean()
        assert inside > 0.05, f"only {inside:.1%} dark pixels under the overlay box"
        assert inside > 2 * average, (inside, average)
