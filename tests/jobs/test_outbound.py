"""The one outbound fetcher (file_url, webhooks): pinned addresses, a total deadline, no bombs, coarse errors.

The remote sites are local HTTP servers. DNS is the one outside party that
cannot exist here, so the rebinding test answers name look-ups itself.
"""

from __future__ import annotations

import gzip
import io
import socket
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from jobs import urlguard
from jobs.errors import UrlFetchFailed, UrlNotAllowed, UrlTimedOut
from ocr_engine.errors import FileTooLarge
from tests.jobs.helpers import Site, silent_dns, small_png


@pytest.fixture
def site():
    made = []

    def make(handle):
        made.append(Site(handle))
        return made[-1]

    yield make
    for s in made:
        s.close()


def test_a_name_that_rebinds_is_connected_to_at_the_address_that_was_checked(site, settings, monkeypatch):
    settings.OCR_ALLOW_PRIVATE_URLS = False
    internal = site(lambda h: (h.send_response(200), h.end_headers(), h.wfile.write(b"internal secrets")))
    port = int(internal.url.rsplit(":", 1)[1])
    answers = iter(["93.184.216.34", "127.0.0.1", "127.0.0.1"])  # public for the check, then the internal one
    lookups = []

    def rebinding_dns(host, *args, **kwargs):
        if host.replace(".", "").isdigit():  # an address is its own answer, as in real DNS
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (host, port))]
        lookups.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (next(answers), port))]

    monkeypatch.setattr(urlguard.socket, "getaddrinfo", rebinding_dns)
    with pytest.raises(UrlFetchFailed) as failed:
        urlguard.fetch_url(f"http://files.example.com:{port}/doc.pdf", io.BytesIO(), max_bytes=10_000, timeout=2)
    assert internal.hits == []  # the internal server was never reached
    assert lookups == ["files.example.com"]  # resolved once, then pinned
    assert "93.184.216.34" not in failed.value.message and "internal" not in failed.value.message


def test_private_addresses_are_refused_before_any_connection(site, settings):
    settings.OCR_ALLOW_PRIVATE_URLS = False
    internal = site(lambda h: (h.send_response(200), h.end_headers()))
    with pytest.raises(UrlNotAllowed):
        urlguard.fetch_url(internal.url + "/x", io.BytesIO(), max_bytes=100, timeout=2)
    assert internal.hits == []


def test_a_slow_drip_is_cut_at_the_total_deadline(site):
    def drip(handler):
        handler.send_response(200)
        handler.send_header("Content-Length", "1000")
        handler.end_headers()
        for _ in range(100):
            handler.wfile.write(b"x")
            handler.wfile.flush()
            time.sleep(0.5)  # each read gets a byte well within any per-read timeout

    slow = site(drip)
    started = time.monotonic()
    with pytest.raises(UrlTimedOut):
        urlguard.fetch_url(slow.url + "/slow.pdf", io.BytesIO(), max_bytes=10_000, timeout=2)
    assert time.monotonic() - started < 4


def test_headers_dripped_slowly_are_cut_too(site):
    def drip_headers(handler):
        handler.wfile.write(b"HTTP/1.1 200 OK\r\n")
        for n in range(100):
            handler.wfile.write(b"X-Pad-%d: y\r\n" % n)
            handler.wfile.flush()
            time.sleep(0.5)

    slow = site(drip_headers)
    started = time.monotonic()
    with pytest.raises(UrlTimedOut):
        urlguard.fetch_url(slow.url + "/slow.pdf", io.BytesIO(), max_bytes=10_000, timeout=2)
    assert time.monotonic() - started < 4


def test_a_compressed_bomb_is_never_inflated(site):
    bomb = gzip.compress(b"\0" * (50 * 1024 * 1024))  # 50 MB of zeros in ~50 KB

    def serve(handler):
        handler.send_response(200)
        handler.send_header("Content-Encoding", "gzip")
        handler.send_header("Content-Length", str(len(bomb)))
        handler.end_headers()
        handler.wfile.write(bomb)

    body = io.BytesIO()
    urlguard.fetch_url(site(serve).url + "/bomb.pdf", body, max_bytes=1024 * 1024, timeout=5)
    assert len(body.getvalue()) == len(bomb)  # the bytes on the wire, not 50 MB


def test_oversized_bodies_stop_at_the_limit(site):
    def serve(handler):
        handler.send_response(200)
        handler.end_headers()  # no Content-Length: counted while reading
        handler.wfile.write(b"x" * 300_000)

    with pytest.raises(FileTooLarge):
        urlguard.fetch_url(site(serve).url + "/big.pdf", io.BytesIO(), max_bytes=100_000, timeout=5)


def test_errors_name_no_address_or_exception(settings):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    with pytest.raises(UrlFetchFailed) as failed:
        urlguard.fetch_url(f"http://127.0.0.1:{closed}/x", io.BytesIO(), max_bytes=100, timeout=2)
    assert failed.value.message == "The connection to the server failed."


# IPv6 spellings that reach a private IPv4 address on a network with a gateway for them, and Teredo.
HIDDEN_PRIVATE = [
    "64:ff9b::a0a:1",  # NAT64 well-known prefix: 10.10.0.1
    "64:ff9b:1::a0a:1",  # local-use NAT64
    "::127.0.0.1",  # IPv4-compatible
    "::ffff:169.254.169.254",  # IPv4-mapped
    "::ffff:0:7f00:1",  # IPv4-translated: 127.0.0.1
    "2002:a00:1::1",  # 6to4 of 10.0.0.1
    "2001:0:4136:e378:8000:63bf:3fff:fdd2",  # Teredo
]


@pytest.mark.django_db
@pytest.mark.parametrize("address", HIDDEN_PRIVATE)
def test_ipv6_forms_of_private_ipv4_addresses_are_refused(api_client, settings, address):
    settings.OCR_ALLOW_PRIVATE_URLS = False
    response = api_client.post("/api/v1/jobs", {"file": SimpleUploadedFile("note.png", small_png()),
                                                "webhook_url": f"http://[{address}]/hook"}, format="multipart")
    assert response.status_code == 400 and response.json()["code"] == "url_not_allowed"


@pytest.mark.parametrize("address", ["64:ff9b::808:808", "::ffff:8.8.8.8", "2002:808:808::1", "2606:4700::1111"])
def test_ipv6_forms_of_public_ipv4_addresses_pass(settings, address):
    settings.OCR_ALLOW_PRIVATE_URLS = False
    urlguard.check_public_url(f"http://[{address}]/doc.pdf")  # raises for a refused address


@pytest.mark.django_db
@pytest.mark.parametrize("address", ["fec0::1", "fefe:1::1"])
def test_site_local_ipv6_addresses_are_refused(api_client, settings, address):
    settings.OCR_ALLOW_PRIVATE_URLS = False
    response = api_client.post("/api/v1/jobs", {"file_url": f"http://[{address}]/doc.pdf"}, format="json")
    assert response.status_code == 400 and response.json()["code"] == "url_not_allowed"


@pytest.fixture
def silent_resolver(monkeypatch):
    with silent_dns(monkeypatch):
        yield


def test_name_resolution_is_inside_the_download_deadline(settings, silent_resolver):
    settings.OCR_ALLOW_PRIVATE_URLS = False
    started = time.monotonic()
    with pytest.raises(UrlTimedOut):
        urlguard.fetch_url("http://files.example.com/doc.pdf", io.BytesIO(), max_bytes=100, timeout=0.5)
    assert time.monotonic() - started < 1.5


@pytest.mark.django_db
def test_a_submitted_url_whose_name_does_not_resolve_in_time_is_answered_promptly(
        api_client, settings, silent_resolver, monkeypatch):
    settings.OCR_ALLOW_PRIVATE_URLS = False
    monkeypatch.setattr(urlguard, "SUBMIT_CHECK_SECONDS", 0.5)
    started = time.monotonic()
    response = api_client.post("/api/v1/jobs", {"file_url": "http://files.example.com/doc.pdf"}, format="json")
    assert time.monotonic() - started < 1.5
    assert response.status_code == 422 and response.json()["code"] == "url_fetch_failed"
