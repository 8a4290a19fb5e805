"""Outbound HTTP to user-supplied URLs (file_url, webhooks) without SSRF.

A user can name any URL; the server must not become a proxy into its own
network (cloud metadata at 169.254.169.254, the database, admin ports). So
every request here:

* resolves the host once, within the exchange's deadline (a resolver that does
  not answer in time is a time-out, not a stalled thread), refuses it unless every address is public, and then
  connects to exactly the address it checked (the Host header and TLS
  certificate check still use the name), so a DNS answer that changes between
  check and connection (rebinding) cannot redirect it;
* checks every redirect hop the same way (redirects are followed by hand);
* has one deadline for the whole exchange, enforced by a watchdog that closes
  the socket, so a server that drips a byte every few seconds cannot hold a
  thread (a per-read timeout would never fire);
* asks for no content coding (``Accept-Encoding: identity``) and counts the
  bytes it reads, so a compressed bomb is just an oversized body;
* writes a body it downloads to a file as it arrives, so a large one never
  sits in memory (a ``file_url`` is downloaded by a worker, never the web process);
* tells users what failed in coarse words only: exception texts and addresses
  would make it a scanner of the network behind the server.

Intranet deployments set OCR_ALLOW_PRIVATE_URLS.
"""

from __future__ import annotations

import concurrent.futures
import errno
import http.client
import ipaddress
import logging
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from typing import IO
from urllib.parse import unquote, urljoin, urlsplit

from django.conf import settings

from jobs.errors import StorageFull, UrlFetchFailed, UrlNotAllowed, UrlTimedOut
from ocr_engine.errors import FileTooLarge

logger = logging.getLogger(__name__)

MAX_REDIRECTS = 3
_CHUNK = 64 * 1024
_REDIRECTS = {301, 302, 303, 307, 308}
# How long a web request waits for the name of a submitted URL to resolve (check_public_url).
SUBMIT_CHECK_SECONDS = 5.0
# getaddrinfo has no time-out of its own: it runs on these threads, and the caller waits only until its
# deadline. A look-up that outlives it keeps its thread until the system resolver gives up
# (resolv.conf's timeout and attempts); the pool's size bounds how many can, and later look-ups then
# wait in its queue, within their own deadlines.
_RESOLVER = concurrent.futures.ThreadPoolExecutor(max_workers=8, thread_name_prefix="urlguard-resolve")


@dataclass(frozen=True)
class Target:
    """A checked URL and the one address to connect to for it."""

    url: str
    scheme: str
    host: str
    port: int
    address: str
    path: str  # path and query, as sent in the request line


def resolve_public(url: str, *, deadline: float) -> Target:
    """Check ``url`` and pick the address to connect to, resolving it by ``deadline`` (``time.monotonic()``);
    raise UrlNotAllowed / UrlFetchFailed / UrlTimedOut."""
    parts = urlsplit(url)
    _check_form(parts)
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise UrlNotAllowed("The URL's port is not a number from 1 to 65535.") from None
    lookup = _RESOLVER.submit(socket.getaddrinfo, parts.hostname, port, type=socket.SOCK_STREAM)
    try:
        infos = lookup.result(timeout=max(deadline - time.monotonic(), 0.0))
    except concurrent.futures.TimeoutError:
        lookup.cancel()  # still queued: never run
        raise UrlTimedOut(f"The host {parts.hostname!r} could not be resolved in time.") from None
    except (socket.gaierror, UnicodeError):
        raise UrlFetchFailed(f"The host {parts.hostname!r} could not be resolved.") from None
    addresses = [info[4][0].split("%", 1)[0] for info in infos]
    if not settings.OCR_ALLOW_PRIVATE_URLS:
        for address in addresses:
            if not is_public(address):
                raise UrlNotAllowed(
                    f"{parts.hostname} resolves to a private, loopback, link-local or reserved address; refused.")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(url=url, scheme=parts.scheme, host=parts.hostname, port=port, address=addresses[0], path=path)


# IPv6 addresses that carry an IPv4 one in their last 32 bits, which a gateway on the way may deliver to:
# NAT64's well-known prefix (RFC 6052), IPv4-compatible (::a.b.c.d), -mapped and -translated (RFC 2765).
# Python's is_global judges only some of them, and differently from version to version.
_IPV4_IN_LAST_32_BITS = [ipaddress.ip_network(n)
                         for n in ("64:ff9b::/96", "::/96", "::ffff:0:0/96", "::ffff:0:0:0/96")]
# Refused whole, as their IPv4 address cannot be judged from here: local-use NAT64 (RFC 8215: the operator
# chooses where in it the IPv4 address sits) and Teredo (RFC 4380: a tunnel to an obfuscated IPv4 client).
_UNJUDGEABLE = [ipaddress.ip_network(n) for n in ("64:ff9b:1::/48", "2001::/32")]


def is_public(address: str) -> bool:
    """Whether ``address`` is a public unicast one; an IPv6 form of an IPv4 address is judged by that IPv4 address."""
    ip = ipaddress.ip_address(address)
    if ip.version == 6:
        # Site-local (fec0::/10, deprecated by RFC 3879) is routed inside a site still; Python calls it global.
        if ip.is_site_local or any(ip in network for network in _UNJUDGEABLE):
            return False
        if any(ip in network for network in _IPV4_IN_LAST_32_BITS):
            ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        elif ip.sixtofour:  # 2002:a.b.c.d::/48 (RFC 3056): relays deliver to a.b.c.d
            ip = ip.sixtofour
    return ip.is_global and not ip.is_multicast


def check_public_url(url: str) -> None:
    """Raise unless ``url`` may be fetched now (used when a URL is submitted, before any request).

    With OCR_ALLOW_PRIVATE_URLS only its form is checked: any host may answer
    later, and an intranet name may not resolve from here yet.
    """
    if settings.OCR_ALLOW_PRIVATE_URLS:
        _check_form(urlsplit(url))
    else:
        resolve_public(url, deadline=time.monotonic() + SUBMIT_CHECK_SECONDS)


def _check_form(parts) -> None:
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UrlNotAllowed("Only http and https URLs with a host are accepted.")
    if parts.username or parts.password:
        raise UrlNotAllowed("URLs with credentials are not accepted.")


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, target: Target, timeout: float):
        super().__init__(target.host, target.port, timeout=timeout)
        self._address = target.address

    def connect(self):
        self.sock = self.raw_socket = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, target: Target, timeout: float):
        super().__init__(target.host, target.port, timeout=timeout, context=ssl.create_default_context())
        self._address = target.address

    def connect(self):
        self.raw_socket = socket.create_connection((self._address, self.port), self.timeout)
        # SNI and the certificate check use the name; the socket goes to the checked address.
        self.sock = self._context.wrap_socket(self.raw_socket, server_hostname=self.host)


class _Watchdog:
    """Closes the connection when the deadline passes, whatever it is blocked in."""

    def __init__(self, connection: http.client.HTTPConnection, seconds: float):
        self.fired = False
        self._connection = connection
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True

    def _fire(self):
        self.fired = True
        # The TCP socket itself: http.client hands a response's socket over and
        # forgets it, and shutting the TCP level down ends TLS reads as well.
        sock = getattr(self._connection, "raw_socket", None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self):
        self._timer.start()
        return self

    def __exit__(self, *exc):
        self._timer.cancel()
        self._connection.close()


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    url: str


def request(method: str, url: str, *, deadline: float, body: bytes | None = None,
            headers: dict[str, str] | None = None, sink: IO[bytes] | None = None, max_bytes: int = 0,
            follow_redirects: bool = False) -> Reply:
    """One checked, pinned, deadline-bound exchange; with ``sink``, the body (at most ``max_bytes``) is written there.

    The body goes to ``sink`` a chunk at a time, never whole into memory.
    Raises UrlNotAllowed, UrlFetchFailed (coarse message), FileTooLarge or StorageFull (``sink`` is full).
    """
    for _ in range(MAX_REDIRECTS + 1):
        target = resolve_public(url, deadline=deadline)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise UrlTimedOut("The server took too long to answer.")
        connection_class = _PinnedHTTPSConnection if target.scheme == "https" else _PinnedHTTPConnection
        connection = connection_class(target, timeout=min(remaining, 10))
        with _Watchdog(connection, remaining) as watchdog:
            try:
                connection.request(method, target.path, body=body, headers={
                    "Accept-Encoding": "identity", "Connection": "close", **(headers or {})})
                response = connection.getresponse()
                if follow_redirects and response.status in _REDIRECTS and response.getheader("Location"):
                    url = urljoin(url, response.getheader("Location"))
                    continue
                if sink is not None and response.status == 200:
                    _copy_body(response, sink, max_bytes)
                if watchdog.fired:  # the closed socket read as a short, clean end
                    raise UrlTimedOut("The server took too long to answer.")
                return Reply(status=response.status, headers=response.headers, url=url)
            except (OSError, http.client.HTTPException) as exc:
                logger.info("outbound %s %s failed: %r", method, target.url, exc)
                if watchdog.fired or isinstance(exc, TimeoutError):
                    raise UrlTimedOut("The server took too long to answer.") from None
                raise UrlFetchFailed("The connection to the server failed.") from None
    raise UrlFetchFailed(f"Too many redirects (more than {MAX_REDIRECTS}).")


def _copy_body(response: http.client.HTTPResponse, sink: IO[bytes], max_bytes: int) -> None:
    declared = response.getheader("Content-Length", "")
    if declared.isdigit() and int(declared) > max_bytes:
        raise FileTooLarge(f"The file is {int(declared)} bytes; the limit is {max_bytes}.")
    received = 0
    while chunk := response.read(_CHUNK):
        received += len(chunk)
        if received > max_bytes:
            raise FileTooLarge(f"The file is larger than the limit of {max_bytes} bytes.")
        try:
            sink.write(chunk)
        except OSError as exc:  # our disk, not the remote server: not a failed connection
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise StorageFull("The server has no room to store this file now; try again later.") from None
            raise


def fetch_url(url: str, sink: IO[bytes], *, max_bytes: int, timeout: float) -> str:
    """Download ``url`` into ``sink`` (a file: the body is never held whole); returns the file's name.

    ``timeout`` bounds the whole download."""
    reply = request("GET", url, deadline=time.monotonic() + timeout, sink=sink, max_bytes=max_bytes,
                    follow_redirects=True)
    if reply.status != 200:
        raise UrlFetchFailed(f"Downloading the file returned HTTP {reply.status}.")
    return file_name(reply.url, reply.headers.get("Content-Disposition", ""))


def file_name(url: str, disposition: str = "") -> str:
    """The name a download goes by: its Content-Disposition's, else the last part of its URL's path."""
    match = re.search(r"filename\*?=(?:UTF-8'')?\"?([^\";]+)", disposition, re.IGNORECASE)
    name = unquote(match.group(1)) if match else unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    return name.strip() or "download"
