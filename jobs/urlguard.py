"""Outbound HTTP to user-supplied URLs (file_url, webhooks) without SSRF.

A user can name any URL; the server must not become a proxy into its own
network (cloud metadata at 169.254.169.254, the database, admin ports). Every
host is resolved and every address it resolves to must be public, for the URL
itself and for each redirect hop (redirects are followed by hand, not by
requests). Intranet deployments set OCR_ALLOW_PRIVATE_URLS.

Known limit: the check and the connection resolve DNS separately, so a DNS
server that answers differently within seconds (rebinding) is not covered.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import time
from urllib.parse import unquote, urljoin, urlsplit

import requests
from django.conf import settings

from jobs.errors import UrlFetchFailed, UrlNotAllowed
from ocr_engine.errors import FileTooLarge

MAX_REDIRECTS = 3
_CHUNK = 64 * 1024


def check_public_url(url: str) -> None:
    """Raise UrlNotAllowed unless ``url`` is http(s) and its host resolves only to public addresses."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UrlNotAllowed(f"Only http and https URLs with a host are accepted, got {url!r}.")
    if parts.username or parts.password:
        raise UrlNotAllowed("URLs with credentials are not accepted.")
    if settings.OCR_ALLOW_PRIVATE_URLS:
        return
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    except (socket.gaierror, UnicodeError) as exc:
        raise UrlFetchFailed(f"Cannot resolve host {parts.hostname!r}: {exc}.") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%", 1)[0])
        if not address.is_global or address.is_multicast:
            raise UrlNotAllowed(
                f"{parts.hostname} resolves to a private, loopback, link-local or reserved address; refused."
            )


def fetch_url(url: str, *, max_bytes: int, timeout: float) -> tuple[bytes, str]:
    """Download ``url`` (checked at every hop) into memory; returns (content, file name).

    Refuses bodies over ``max_bytes`` (FileTooLarge) while streaming, and gives
    up after ``timeout`` seconds in total (UrlFetchFailed).
    """
    deadline = time.monotonic() + timeout
    for _ in range(MAX_REDIRECTS + 1):
        check_public_url(url)
        try:
            response = requests.get(url, stream=True, allow_redirects=False, timeout=min(timeout, 10))
        except requests.RequestException as exc:
            raise UrlFetchFailed(f"Could not download {url}: {exc.__class__.__name__}.") from None
        with response:
            if response.is_redirect:
                url = urljoin(url, response.headers.get("Location", ""))
                continue
            if response.status_code != 200:
                raise UrlFetchFailed(f"Downloading {url} returned HTTP {response.status_code}.")
            declared = response.headers.get("Content-Length")
            if declared and declared.isdigit() and int(declared) > max_bytes:
                raise FileTooLarge(f"The file at {url} is {int(declared)} bytes; the limit is {max_bytes}.")
            body = bytearray()
            try:
                for chunk in response.iter_content(_CHUNK):
                    body += chunk
                    if len(body) > max_bytes:
                        raise FileTooLarge(f"The file at {url} is larger than the limit of {max_bytes} bytes.")
                    if time.monotonic() > deadline:
                        raise UrlFetchFailed(f"Downloading {url} took longer than {timeout:g} s.")
            except requests.RequestException as exc:
                raise UrlFetchFailed(f"Could not download {url}: {exc.__class__.__name__}.") from None
            return bytes(body), _file_name(url, response.headers.get("Content-Disposition", ""))
    raise UrlFetchFailed(f"Too many redirects (more than {MAX_REDIRECTS}).")


def _file_name(url: str, disposition: str) -> str:
    match = re.search(r"filename\*?=(?:UTF-8'')?\"?([^\";]+)", disposition, re.IGNORECASE)
    name = unquote(match.group(1)) if match else unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    return name.strip() or "download"
