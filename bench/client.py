"""The benches' HTTP client: one keep-alive connection per client thread, on ``http.client``.

The benches run their clients on the cores of the server they measure, where real clients would be
on machines of their own, so what the clients spend is taken from the server. ``requests`` (its
session, adapters, header merging and hooks) spent 15–21 ms of CPU on twenty submits sent at one
instant, this client 5–10 ms (docs/benchmarks.md, 2026-11-29 12:00 UTC). Bodies are encoded before
a request is timed (``multipart``).
"""

from __future__ import annotations

import http.client
import json
import urllib.parse

from urllib3 import encode_multipart_formdata


class Reply:
    def __init__(self, status: int, body: bytes):
        self.status, self.body = status, body

    def json(self):
        return json.loads(self.body)

    def text(self, limit: int = 120) -> str:
        return self.body[:limit].decode(errors="replace")


class Client:
    """One client: one keep-alive HTTP/1.1 connection to ``base`` (a URL whose path prefixes every
    request's), used by one thread."""

    def __init__(self, base: str, headers: dict | None = None, timeout: float = 600):
        url = urllib.parse.urlsplit(base)
        self.address, self.prefix = (url.hostname, url.port or 80), url.path.rstrip("/")
        self.headers, self.timeout = headers or {}, timeout
        self.connection: http.client.HTTPConnection | None = None

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict | None = None) -> Reply:
        headers = {**self.headers, **(headers or {})}
        reused = self.connection is not None
        if not reused:
            self.connection = http.client.HTTPConnection(*self.address, timeout=self.timeout)
        try:
            self.connection.request(method, self.prefix + path, body=body, headers=headers)
            response = self.connection.getresponse()
            reply = Reply(response.status, response.read())
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
            self.close()
            if not reused:
                raise
            return self.request(method, path, body, headers)  # the server closed an idle connection: once more
        if response.will_close:
            self.close()
        return reply

    def get(self, path: str) -> Reply:
        return self.request("GET", path)

    def post(self, path: str, fields: dict | None = None, json_body: dict | None = None) -> Reply:
        """A multipart form (a file is a ``(name, bytes)`` pair), or a JSON body."""
        if fields is not None:
            return self.request("POST", path, *multipart(fields))
        return self.request("POST", path, json.dumps(json_body).encode(), {"Content-Type": "application/json"})

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def multipart(fields: dict) -> tuple[bytes, dict]:
    """A multipart/form-data body and its headers; a file is a ``(name, bytes)`` pair."""
    body, content_type = encode_multipart_formdata(fields)
    return body, {"Content-Type": content_type}
