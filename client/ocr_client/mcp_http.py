"""``ocr-client mcp --http``: the MCP server as streamable HTTP, and what guards it.

Over HTTP the server is a shared service, not the operator's own process: every request must carry its
caller's API token (``Authorization: Token <key>`` or ``Bearer <key>``), else 401 before the MCP SDK sees
it, and the tools call the REST API with that token only (the operator's ``OCR_TOKEN`` is never lent, and
no local path is read: ``ocr_client.mcp_server``). The REST API judges the token, on every call.

The SDK's Host and Origin checks (DNS rebinding) stay on for every address: on a loopback ``--host`` they
allow the loopback names; on any other, the names clients reach it by must be given (``--allowed-host``),
and the server refuses to start without one. Plain HTTP carries the tokens in clear: a server on another
address than loopback belongs behind a TLS proxy.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping

from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
# A host name or address, optionally with a port: what a Host header holds.
HOST_VALUE = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(:\d{1,5})?")


def token_of(headers: Mapping[str, str] | None) -> str | None:
    """The API token of an ``Authorization: Token <key>`` (or ``Bearer <key>``) header, else None."""
    value = (headers or {}).get("authorization", "")
    scheme, _, key = value.strip().partition(" ")
    return key.strip() if scheme.lower() in ("token", "bearer") and key.strip() else None


class TokenRequired:
    """ASGI middleware: 401 for an HTTP request that carries no API token of its own."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and token_of(Headers(scope=scope)) is None:
            refusal = JSONResponse(
                {"code": "not_authenticated",
                 "detail": "Send your API token of the OCR server: 'Authorization: Token <key>'."},
                status_code=401, headers={"WWW-Authenticate": 'Token realm="ocr-mcp", Bearer realm="ocr-mcp"'})
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)


def is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return host == "localhost"


def transport_security(host: str, allowed_hosts: list[str]) -> TransportSecuritySettings:
    """The SDK's Host and Origin checks for a server bound to ``host``: the ``allowed_hosts`` (names, or
    ``name:port``), and the loopback names where ``host`` is loopback. ``ValueError`` for a non-loopback
    ``host`` without any, or for a value that is no Host header."""
    for value in allowed_hosts:
        if not HOST_VALUE.fullmatch(value):
            raise ValueError(f"--allowed-host {value!r}: give a host name or address, optionally with :PORT, "
                             "as clients write it in their Host header (ocr.example.org, 10.0.0.5:8765)")
    if not allowed_hosts and not is_loopback(host):
        raise ValueError(f"--host {host} is not a loopback address: name the host names clients reach this "
                         "server by with --allowed-host (repeatable; the Host header is checked against them), "
                         "and put it behind a TLS proxy: its requests carry API tokens")
    names = [*allowed_hosts, *(LOOPBACK_NAMES if is_loopback(host) else ())]
    # A name without a port allows it on any port (the SDK's "name:*") and without one (port 80/443).
    hosts = [form for name in names for form in ([name] if HOST_VALUE.fullmatch(name)[2] else [name, f"{name}:*"])]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts,
        allowed_origins=[f"{scheme}://{form}" for form in hosts for scheme in ("http", "https")])


def http_app(server, host: str, allowed_hosts: list[str]) -> Starlette:
    """The SDK's streamable-HTTP app of ``server`` (at ``/mcp``) with its Host checks for ``host``, behind
    ``TokenRequired``."""
    app = server.streamable_http_app(transport_security=transport_security(host, allowed_hosts), host=host)
    app.add_middleware(TokenRequired)
    return app
