"""Geometry review in the real UI: a real qcluster reads a drawn box; a second tab sees every change live."""

from __future__ import annotations

import contextlib
import io
import zipfile

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.e2e.workers import submit, succeeded, wait_for
from tests.ocr_engine import samples

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db(transaction=True)]


@contextlib.contextmanager
def two_tabs(base_url: str, url: str):
    """Two logged-in browser contexts (two people, or two windows) on the same job page."""
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            tabs = []
            for _ in range(2):
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                context.on("weberror", lambda error: errors.append(str(error.error)))
                page = context.new_page()
                page.goto(f"{base_url}/accounts/login/")
                page.fill("#id_username", "alice")
                page.fill("#id_password", "pw-alice")
                page.click("button[type=submit]")
                page.wait_for_url(f"{base_url}/")
                page.goto(f"{base_url}{url}")
                tabs.append(page)
            yield tabs
        finally:
            browser.close()
    assert not errors, f"JavaScript errors: {errors}"


def drag_box(page, bbox, scale_of) -> None:
    """Drag from the box's top-left to its bottom-right on the overlay (page pixels -> screen)."""
    x0, y0 = scale_of(bbox[0] - 3, bbox[1] - 3)
    x1, y1 = scale_of(bbox[2] + 3, bbox[3] + 3)
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2)
    page.mouse.move(x1, y1)
    page.mouse.up()


def test_draw_split_merge_delete_reorder_live_in_a_second_tab(api_client, user, asgi_server, qcluster):
    qcluster()
    job_id = submit(api_client, samples.encode(samples.text_page(dpi=100).image, "PNG"), "note.png", pipeline="ocr")
    wait_for(api_client, job_id, succeeded)
    page_api = f"/api/v1/jobs/{job_id}/pages/1"
    normalized = api_client.get(page_api).json()["normalized"]
    lines = normalized["lines"]
    assert len(normalized["regions"]) >= 2  # the reading-order step needs two regions
    missed = lines[1]
    api_client.delete(f"{page_api}/lines/{missed['id']}")  # as if the detector had missed this line
    count = len(lines) - 1

    with two_tabs(asgi_server, f"/jobs/{job_id}/?page=1") as (editor, viewer):
        for tab in (editor, viewer):
            expect(tab.locator("#text-panel li.ln")).to_have_count(count)
        assert missed["text"] not in viewer.locator("#text-panel").inner_text()

        def to_screen(x, y):
            box = editor.locator("#overlay").bounding_box()
            width = editor.evaluate("document.getElementById('overlay').viewBox.baseVal.width")
            factor = box["width"] / width
            return box["x"] + x * factor, box["y"] + y * factor

        # Draw a box around the undetected line: the worker reads it; the other tab shows it within 2 s.
        editor.keyboard.press("n")
        drag_box(editor, missed["bbox"], to_screen)
        expect(viewer.locator("#text-panel li.ln")).to_have_count(count + 1, timeout=2000 + 10_000)
        expect(viewer.locator("#text-panel")).to_contain_text(missed["text"], timeout=2000)

        # Split the first line (selected with j) in its middle, then merge it back with m.
        editor.locator("body").click(position={"x": 5, "y": 5})
        editor.keyboard.press("j")
        editor.keyboard.press("s")
        expect(viewer.locator("#text-panel li.ln")).to_have_count(count + 2, timeout=2000)
        editor.keyboard.press("m")
        expect(viewer.locator("#text-panel li.ln")).to_have_count(count + 1, timeout=2000)
        expect(viewer.locator("#text-panel li.ln").first).to_contain_text(lines[0]["text"].split()[0])

        # Delete the selected line; undo it with u. The other tab's own selection survives the redraw.
        watched = viewer.locator("#text-panel li.ln").last
        watched_text = watched.locator(".tx").inner_text()
        watched.click()
        editor.keyboard.press("x")
        expect(viewer.locator("#text-panel li.ln")).to_have_count(count, timeout=2000)
        expect(viewer.locator("#text-panel li.ln.sel .tx")).to_have_text(watched_text)
        editor.keyboard.press("u")
        expect(viewer.locator("#text-panel li.ln")).to_have_count(count + 1, timeout=2000)

        # Move the first line's region one place later in the reading order: its text no longer leads.
        first_text = viewer.locator("#text-panel li.ln").first.inner_text()
        editor.locator("#text-panel li.ln").first.click()
        editor.keyboard.press("]")
        expect(viewer.locator("#text-panel li.ln").first).not_to_have_text(first_text, timeout=2000)

    # What the tabs made is what the exports say: PAGE XML and the training set.
    xml = api_client.get(f"/api/v1/jobs/{job_id}/export.page").content.decode()
    assert missed["text"] in xml
    archive = zipfile.ZipFile(io.BytesIO(api_client.get("/api/v1/training-set").getvalue()))
    rows = [row.split("\t") for row in archive.read("engine_reading.txt").decode().splitlines()]
    drawn = [row for row in rows if row[2] == ""]
    assert drawn and drawn[0][1] == missed["text"] and archive.read(drawn[0][0])[:4] == b"\x89PNG"
