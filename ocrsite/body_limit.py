"""ASGI middleware: request bodies past their route's limit get 413 before Django spools them.

Django's ASGI handler reads a whole body into a temporary file before any view or Django
middleware sees the request, so a limit checked there comes after the disk has taken it. Here a
body is judged by its ``Content-Length`` as the request arrives, and by the bytes counted as it
streams (chunked bodies, lying lengths). In production nginx refuses them first
(``docker/proxy/nginx.conf``); this is the same rule for a server reached without it.

Only the upload routes take large bodies, and only with credentials (a token header or a
session cookie; Django checks them afterwards, so a bogus one costs at most one upload's size).
Everything else gets ``OCR_MAX_BODY_BYTES``.
"""

from __future__ import annotations

import json
import re

from django.conf import settings

# POST /api/v1/jobs, /api/v1/batches and the upload form: where documents come in.
UPLOAD_PATHS = re.compile(r"^/(api/v1/jobs|api/v1/batches|upload/)$")
MULTIPART_OVERHEAD = 1024 * 1024  # form fields and part headers around the file
REFUSAL = json.dumps({"code": "request_too_large",
                      "detail": "The request body is larger than this route accepts."}).encode()


def body_limit(scope) -> int:
    """The most bytes the body of the request ``scope`` may have."""
    headers = dict(scope["headers"])  # the last of a repeated header: enough to tell whether one is there
    path = scope["path"].removeprefix(scope.get("root_path", ""))
    if scope["method"] == "POST" and UPLOAD_PATHS.match(path) and (
            b"authorization" in headers or b"sessionid=" in headers.get(b"cookie", b"")):
        return settings.OCR_MAX_UPLOAD_BYTES + MULTIPART_OVERHEAD
    return settings.OCR_MAX_BODY_BYTES


def declared_length(scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the server refuses a malformed length itself
    return None


class BodyLimit:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        limit = body_limit(scope)
        if (declared_length(scope) or 0) > limit:
            return await refuse(send)
        received = 0

        async def counted_receive():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    await refuse(send)
                    # Django's handler stops reading at a disconnect, drops what it spooled and answers nothing.
                    return {"type": "http.disconnect"}
            return message

        await self.app(scope, counted_receive, send)


async def refuse(send) -> None:
    await send({"type": "http.response.start", "status": 413, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(REFUSAL)).encode()),
        (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": REFUSAL})
