"""``ocr-client mcp``, driven by the mcp SDK's own client over stdio and over streamable HTTP, against the
real stack of tests/client/conftest.py (web server, qcluster, the real engine).

One job for the module: a small report page (a title, two paragraphs, a 4x3 table) read once with the
structure pipeline. The HTTP server listens on every address, as a shared one would: each request needs its
caller's own token (401 without), reads no file of its machine, and answers only the Host names it was given.
"""

from __future__ import annotations

import base64
import contextlib
import io
import math
import os
import subprocess
import sys
import threading
from pathlib import Path

import anyio
import httpx2 as httpx
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from PIL import Image, ImageChops
from playwright.sync_api import expect

from jobs.options import JobOptions
from ocr_client._core import Call
from tests.e2e.conftest import background, browser_page, free_port, wait_until_serving
from tests.ocr_engine import samples

# django_db (not transaction=True: nothing is flushed between tests): pytest-django makes the test database
# only for the marked tests' databases, and conftest's ``live`` needs it.
pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db]

OCR_CLIENT = str(Path(sys.executable).with_name("ocr-client"))
TITLE = samples.REPORT_TITLE
MARGIN = 8  # ocr_client.mcp_tools.CROP_MARGIN


@pytest.fixture(scope="module")
def report_png(tmp_path_factory) -> Path:
    """The report page at 100 DPI, cut below its table (827 x ~600 px)."""
    page = samples.report_page(dpi=100)
    image = page.image.crop((0, 0, page.image.width, max(box[3] for box in page.boxes) + 40))
    path = tmp_path_factory.mktemp("mcp") / "report.png"
    path.write_bytes(samples.encode(image, "PNG"))
    return path


@contextlib.asynccontextmanager
async def _stdio(env: dict[str, str]):
    params = StdioServerParameters(command=OCR_CLIENT, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextlib.asynccontextmanager
async def _http(url: str, token: str | None):
    headers = {"Authorization": f"Token {token}"} if token else None
    async with create_mcp_http_client(headers=headers) as http, \
            streamable_http_client(url, http_client=http) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


class Tools:
    """An open MCP session, called from the (synchronous) tests through the portal's event loop thread."""

    def __init__(self, portal, session: ClientSession):
        self.portal, self.session = portal, session

    def __call__(self, name: str, **arguments):
        return self.portal.call(self.session.call_tool, name, arguments)


@pytest.fixture(scope="module")
def portal():
    with anyio.from_thread.start_blocking_portal() as portal:
        yield portal


@contextlib.contextmanager
def over_stdio(portal, live, account):
    """``ocr-client mcp`` started as ``account`` (OCR_TOKEN), and a session with it."""
    with portal.wrap_async_context_manager(_stdio(live.env(account))) as session:
        yield Tools(portal, session)


@contextlib.contextmanager
def over_http(portal, url: str, token: str | None):
    """A session with the HTTP server, sending ``token``."""
    with portal.wrap_async_context_manager(_http(url, token)) as session:
        yield Tools(portal, session)


@pytest.fixture(scope="module")
def alice_stdio(portal, live):
    with over_stdio(portal, live, live.alice) as tools:
        yield tools


def text_of(result) -> str:
    assert not result.is_error, result.content
    return "\n".join(block.text for block in result.content if block.type == "text")


@pytest.fixture(scope="module")
def job_id(alice_stdio, report_png) -> str:
    """The module's job: submitted with ocr_submit over stdio, followed with ocr_status until it ends."""
    submitted = alice_stdio("ocr_submit", source=str(report_png), pipeline="structure")
    assert not submitted.is_error, submitted.content
    job = submitted.structured_content["job"]
    for _ in range(10):
        status = alice_stdio("ocr_status", job=job, wait_seconds=30).structured_content
        if status["finished"]:
            break
    assert status["status"] == "succeeded", status
    return job


@pytest.fixture(scope="module")
def mcp_http(live, tmp_path_factory) -> str:
    """``ocr-client mcp --http`` on every address (``--host 0.0.0.0``, reached as 127.0.0.1) on a free port,
    started by alice (her OCR_TOKEN in its environment: never lent to a request); its endpoint URL."""
    port = free_port()
    log = tmp_path_factory.mktemp("mcp-http") / "mcp-http.log"
    command = [OCR_CLIENT, "mcp", "--http", "--host", "0.0.0.0", "--allowed-host", "127.0.0.1", "--port", str(port)]
    with background(command, live.env(live.alice), log) as process:
        url = f"http://127.0.0.1:{port}/mcp"
        wait_until_serving(url, process, log, timeout=30)
        yield url


@pytest.fixture(scope="module")
def alice_http(portal, mcp_http, live):
    """A session with the HTTP server sending alice's own token."""
    with over_http(portal, mcp_http, live.alice.token) as tools:
        yield tools


@pytest.fixture(scope="module")
def page_one(live, job_id):
    from ocr_client import Client

    with Client(live.url, live.alice.token) as client:
        job = client.job(job_id)
        return job.page(1), Image.open(io.BytesIO(job.page_image(1))).convert("RGB")


def link(live, job_id: str, line_id: str | None = None) -> str:
    return f"{live.url}/jobs/{job_id}/?page=1" + (f"&line={line_id}" if line_id else "")


def test_ocr_read_over_stdio_gives_the_text_in_reading_order_each_line_cited(live, job_id, alice_stdio):
    text = text_of(alice_stdio("ocr_read", job=job_id))

    assert text.startswith(f"=== page 1 ({link(live, job_id)}) ===\n")
    assert f"{TITLE}  (page 1, line p1-l1, {link(live, job_id, 'p1-l1')})" in text
    assert text.index(TITLE) < text.index("The first quarter") < text.index("Operating costs") < text.index("North")
    assert "ocr_table gives its rows and cells]\nRegion  (page 1, line " in text  # the table's block


def test_over_http_a_users_own_token_reads_their_job_as_markdown(live, job_id, alice_http):
    markdown = text_of(alice_http("ocr_read", job=job_id, format="markdown", pages="1"))

    assert markdown.startswith(f"<!-- page 1: {link(live, job_id)} -->\n")
    assert f"{TITLE} [page 1, line p1-l1]({link(live, job_id, 'p1-l1')})" in markdown


def test_ocr_find_gives_the_line_on_the_page_and_its_link_opens_the_review_with_it_selected(
        live, job_id, alice_http, page_one):
    page, _ = page_one
    [hit] = alice_http("ocr_find", query='"twelve percent"').structured_content["result"]

    line = page.line(hit["line_id"])
    assert (hit["job"], hit["page"], hit["text"]) == (job_id, 1, line.text) and "twelve percent" in line.text
    assert hit["polygon"] == line.polygon and hit["confidence"] == pytest.approx(line.confidence)
    assert 0.5 < hit["confidence"] <= 1 and hit["region_type"] == "text"
    assert all(0 <= x <= page.width and 0 <= y <= page.height for x, y in hit["polygon"])
    assert hit["link"] == link(live, job_id, hit["line_id"])

    with browser_page(live.url, live.alice.username, f"pw-{live.alice.username}") as browser:
        browser.goto(hit["link"])
        selected = browser.locator('#text-panel li.ln[aria-selected="true"]')
        expect(selected).to_have_count(1)
        expect(selected).to_contain_text("twelve percent")
        expect(browser.locator("#overlay polygon.ln.sel")).to_have_count(1)


def test_ocr_crop_is_a_png_of_that_line_cut_from_the_page_image(live, job_id, alice_stdio, page_one):
    page, image = page_one
    line = next(line for line in page.lines if "twelve percent" in line.text)

    result = alice_stdio("ocr_crop", job=job_id, page=1, line_id=line.id)

    assert not result.is_error, result.content
    png, caption = result.content
    assert (png.type, png.mime_type, caption.type) == ("image", "image/png", "text")
    crop = Image.open(io.BytesIO(base64.b64decode(png.data)))
    assert crop.format == "PNG"
    xs, ys = [x for x, _ in line.polygon], [y for _, y in line.polygon]
    box = (math.floor(min(xs)) - MARGIN, math.floor(min(ys)) - MARGIN,
           math.ceil(max(xs)) + MARGIN, math.ceil(max(ys)) + MARGIN)
    assert crop.size == (box[2] - box[0], box[3] - box[1])
    assert ImageChops.difference(crop.convert("RGB"), image.crop(box)).getbbox() is None  # those very pixels
    assert crop.convert("L").getextrema()[0] < 100  # ink: the line's glyphs
    assert line.id in caption.text and link(live, job_id, line.id) in caption.text


def test_ocr_table_gives_rows_of_cells_with_their_polygons(job_id, alice_stdio, page_one):
    page, _ = page_one

    table = alice_stdio("ocr_table", job=job_id, page=1).structured_content

    assert [[cell["text"] for cell in row] for row in table["rows"]] == samples.REPORT_TABLE
    cells = [cell for row in table["rows"] for cell in row]
    assert all(0 <= x <= page.width and 0 <= y <= page.height for cell in cells for x, y in cell["polygon"])
    north = table["rows"][1][0]
    assert [page.line(line_id).text for line_id in north["line_ids"]] == ["North"]


def text_of_error(result) -> str:
    assert result.is_error, result.content
    return "\n".join(block.text for block in result.content if block.type == "text")


def test_another_users_token_reads_nothing_of_the_job(live, job_id, portal, mcp_http, report_png):
    with over_http(portal, mcp_http, live.bob.token) as bob:
        refused = [bob("ocr_status", job=job_id), bob("ocr_read", job=job_id),
                   bob("ocr_crop", job=job_id, page=1, line_id="p1-l1"), bob("ocr_table", job=job_id, page=1)]
        found, found_in_job = bob("ocr_find", query="twelve"), bob("ocr_find", query="twelve", job=job_id)
        submitted = bob("ocr_submit", source=str(report_png))
    with over_stdio(portal, live, live.bob) as bob_stdio:
        refused.append(bob_stdio("ocr_read", job=job_id))

    for result in refused:
        assert "not_found: " in text_of_error(result)
    assert found.structured_content == found_in_job.structured_content == {"result": []}
    assert "http(s) URL" in text_of_error(submitted)  # bob may not upload files of alice's machine


def test_a_wrong_token_is_refused_and_said_so(job_id, portal, mcp_http):
    with over_http(portal, mcp_http, "not-a-token") as stranger:
        result = stranger("ocr_status", job=job_id)

    assert "authentication_failed: Invalid token." in text_of_error(result)


def test_a_file_that_is_not_there_is_a_tool_error_naming_it(alice_stdio, tmp_path):
    missing = tmp_path / "nowhere.pdf"

    result = alice_stdio("ocr_submit", source=str(missing))

    assert f"Cannot read '{missing}'" in text_of_error(result)


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "1"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.mark.parametrize("authorization", [None, "", "Token", "Basic YWxpY2U6cHc="], ids=["none", "empty", "no key",
                                                                                          "basic"])
def test_over_http_a_request_without_a_token_of_its_own_is_401(mcp_http, authorization):
    headers = {**MCP_HEADERS, **({"Authorization": authorization} if authorization is not None else {})}

    answer = httpx.post(mcp_http, json=INITIALIZE, headers=headers)
    listen = httpx.get(mcp_http, headers={k: v for k, v in headers.items() if k != "Content-Type"})

    assert answer.status_code == listen.status_code == 401
    assert answer.json()["code"] == "not_authenticated" and "Token" in answer.headers["WWW-Authenticate"]
    assert "mcp-session-id" not in answer.headers  # the SDK never saw it: no session was made


def test_over_http_no_local_path_is_read(alice_http, report_png, tmp_path):
    """A FIFO's writer waits in open() until a reader opens it: a writer still waiting after the call means the
    server never opened the path. A real file is refused the same way."""
    fifo = tmp_path / "passport.pdf"
    os.mkfifo(fifo)
    opened = threading.Event()

    def writer():
        with fifo.open("wb"):  # blocks until someone opens the FIFO to read
            opened.set()

    waiting = threading.Thread(target=writer, daemon=True)
    waiting.start()
    try:
        refused = [alice_http("ocr_submit", source=str(fifo)), alice_http("ocr_submit", source=str(report_png)),
                   alice_http("ocr_submit", source=f"file://{report_png}")]
        assert not opened.is_set() and waiting.is_alive()
    finally:
        os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # lets the writer go
        waiting.join(timeout=10)

    for result in refused:
        assert "Over HTTP, give an http(s) URL" in text_of_error(result)


def test_over_http_a_host_header_not_allowed_is_refused(mcp_http, live):
    headers = {**MCP_HEADERS, "Authorization": f"Token {live.alice.token}"}

    rebound = httpx.post(mcp_http, json=INITIALIZE, headers={**headers, "Host": "attacker.example"})
    cross_site = httpx.post(mcp_http, json=INITIALIZE, headers={**headers, "Origin": "http://attacker.example"})
    allowed = httpx.post(mcp_http, json=INITIALIZE, headers=headers)

    assert (rebound.status_code, rebound.text) == (421, "Invalid Host header")
    assert (cross_site.status_code, cross_site.text) == (403, "Invalid Origin header")
    assert allowed.status_code == 200 and allowed.headers["mcp-session-id"]


def test_a_non_loopback_host_without_allowed_host_refuses_to_start(live):
    port = free_port()

    started = subprocess.run([OCR_CLIENT, "mcp", "--http", "--host", "0.0.0.0", "--port", str(port)],
                             env=live.env(live.alice), capture_output=True, text=True, timeout=60)

    assert started.returncode == 2
    assert "--host 0.0.0.0 is not a loopback address" in started.stderr and "--allowed-host" in started.stderr
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"http://127.0.0.1:{port}/mcp")


def test_ocr_submit_takes_every_job_option(alice_stdio, report_png, alice):
    """The MCP tool spells each of the server's job options (jobs.options.JobOptions) and hands it on."""
    chosen = {"pipeline": "ocr", "lang": "de", "text_layer": "ocr", "orientation": "none", "pages": "1",
              "webhook_url": "https://hooks.example.org/ocr", "document_type": "mcp options"}
    assert set(chosen) == set(JobOptions.names())
    alice.call(Call("POST", "document-types", json={"name": "mcp options", "match": "options"}))
    submitted = alice_stdio("ocr_submit", source=str(report_png), **chosen)
    assert not submitted.is_error, submitted.content
    job = alice.job(submitted.structured_content["job"])
    assert {name: job.data[name] for name in chosen} == chosen
