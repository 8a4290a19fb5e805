"""The client follows a server's ``next`` links only on its own API: a list whose ``next`` leads to another host,
port, scheme or path is refused (``ForeignLink``) and the token is sent nowhere else.

Two real HTTP servers on free ports record every request they get: ``api`` answers the list routes as the
platform does (``{"results": [...], "next": ...}``) with the ``next`` each test plants, ``elsewhere`` is the
host a planted link points at. No stack is needed: the platform's own ``next`` links are relative to the
address it is called at, so a planted one is what a test of this needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from ocr_client import AsyncClient, Client, ForeignLink

TOKEN = "alice-secret-token"


class Recorder(ThreadingHTTPServer):
    """Answers every GET with ``pages[path with query]`` as JSON (404 for others) and records
    (path with query, Authorization header) of each request."""

    def __init__(self, pages: dict[str, dict] | None = None):
        self.pages, self.seen = pages or {}, []
        super().__init__(("127.0.0.1", 0), RecordingHandler)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class RecordingHandler(BaseHTTPRequestHandler):
    server: Recorder

    def do_GET(self):  # noqa: N802 - the name http.server calls
        self.server.seen.append((self.path, self.headers.get("Authorization")))
        page = self.server.pages.get(self.path)
        body = json.dumps(page if page is not None else {"code": "not_found", "detail": "No."}).encode()
        self.send_response(200 if page is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def running(server: Recorder):
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.fixture
def servers():
    with running(Recorder()) as api, running(Recorder()) as elsewhere:
        yield api, elsewhere


def job(n: int) -> dict:
    return {"id": f"job-{n}", "status": "succeeded"}


def hit(n: int) -> dict:
    return {"job": f"job-{n}", "page": 1, "line_id": "p1-l1", "text": "stone bridges", "snippet": "stone bridges",
            "polygon": [], "confidence": 0.9, "region_type": "text", "links": {}}


FOREIGN_LINKS = {
    "another port": "{elsewhere}/api/v1/jobs?page=2",
    "another host, scheme-relative": "//localhost:{elsewhere_port}/api/v1/jobs?page=2",
    "another scheme": "https://127.0.0.1:{api_port}/api/v1/jobs?page=2",
    "credentials in the link": "http://someone@127.0.0.1:{api_port}/api/v1/jobs?page=2",
    "off the API's path": "{api}/admin/?page=2",
    "out of the API's path by dot segments": "/api/v1/%2e%2e/admin/?page=2",
}


def plant(api: Recorder, elsewhere: Recorder, link: str, route: str = "jobs", item=job) -> str:
    """The first page of ``route`` at ``api`` with one item and ``next`` = ``link``; the page ``link`` leads to
    on either server (so that following it would succeed). Returns the link as planted."""
    api_port, elsewhere_port = api.server_address[1], elsewhere.server_address[1]
    link = link.format(api=api.base, elsewhere=elsewhere.base, api_port=api_port, elsewhere_port=elsewhere_port)
    first = f"/api/v1/{route}" + ("?q=bridges" if route == "search" else "")
    api.pages[first] = {"results": [item(1)], "next": link}
    second = {"results": [item(2)], "next": None}
    for server in (api, elsewhere):
        server.pages.update({f"/api/v1/{route}?page=2": second, "/admin/?page=2": second})
    return link


@pytest.mark.parametrize("link", FOREIGN_LINKS.values(), ids=FOREIGN_LINKS.keys())
def test_a_next_link_off_the_clients_api_is_refused_and_gets_no_request(servers, link):
    api, elsewhere = servers
    planted = plant(api, elsewhere, link)

    with Client(api.base, TOKEN) as client:
        listed = []
        with pytest.raises(ForeignLink) as refused:
            listed.extend(found.id for found in client.jobs())

    assert listed == ["job-1"]  # the first page, from the client's own server
    assert refused.value.code == "foreign_link" and repr(planted) in refused.value.detail
    assert api.seen == [("/api/v1/jobs", f"Token {TOKEN}")]  # one request: the first page
    assert elsewhere.seen == []


def test_search_and_the_async_client_refuse_it_too(servers):
    api, elsewhere = servers
    plant(api, elsewhere, "{elsewhere}/api/v1/search?page=2", route="search", item=hit)
    plant(api, elsewhere, "{elsewhere}/api/v1/jobs?page=2")

    async def async_jobs():
        async with AsyncClient(api.base, TOKEN) as client:
            return [found.id async for found in client.jobs()]

    with Client(api.base, TOKEN) as client, pytest.raises(ForeignLink):
        client.search("bridges")
    with pytest.raises(ForeignLink):
        asyncio.run(async_jobs())

    assert elsewhere.seen == []
    assert [path for path, _ in api.seen] == ["/api/v1/search?q=bridges", "/api/v1/jobs"]


@pytest.mark.parametrize("link", ["{api}/api/v1/jobs?page=2", "/api/v1/jobs?page=2", "jobs?page=2"],
                         ids=["absolute", "absolute path", "relative"])
def test_a_next_link_on_the_clients_own_api_is_followed_with_the_token(servers, link):
    api, elsewhere = servers
    plant(api, elsewhere, link)

    with Client(api.base, TOKEN) as client:
        listed = [found.id for found in client.jobs()]

    assert listed == ["job-1", "job-2"]
    assert api.seen == [("/api/v1/jobs", f"Token {TOKEN}"), ("/api/v1/jobs?page=2", f"Token {TOKEN}")]
    assert elsewhere.seen == []


def test_a_base_url_with_a_path_keeps_its_links_under_that_path(servers):
    """A server published under a prefix (``https://host/ocr``): a link to the host's root API is another API."""
    api, elsewhere = servers
    api.pages["/ocr/api/v1/jobs"] = {"results": [job(1)], "next": f"{api.base}/api/v1/jobs?page=2"}

    with Client(f"{api.base}/ocr", TOKEN) as client, pytest.raises(ForeignLink):
        list(client.jobs())

    assert api.seen == [("/ocr/api/v1/jobs", f"Token {TOKEN}")]
