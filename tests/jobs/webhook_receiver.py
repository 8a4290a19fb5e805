"""A real HTTP server on 127.0.0.1 playing a user's webhook endpoint (the one outside party we fake).

It answers each POST from a script (an HTTP status, or ``HANG`` to answer only
after the sender's time-out) and records what arrived. ``verify_signature`` is
the receiver-side check exactly as docs/webhooks.md tells users to write it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HANG = "hang"


def verify_signature(secret: str, header: str, body: bytes, tolerance: int = 300) -> bool:
    fields = dict(item.split("=", 1) for item in header.split(","))
    timestamp = int(fields["t"])
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, fields["v1"]) and abs(time.time() - timestamp) <= tolerance


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> dict:
        return json.loads(self.body)

    def signed_with(self, secret: str) -> bool:
        return verify_signature(secret, self.headers["X-OCR-Signature"], self.body)


class Receiver:
    def __init__(self, script=(), hang_seconds: float = 1.5):
        self.script = list(script)  # answers for the next requests; 200 once it runs out
        self.hang_seconds = hang_seconds
        self.received: list[Received] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True  # a hanging answer must not block shutdown
        self.url = f"http://127.0.0.1:{self._server.server_port}/hooks/ocr"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next_answer(self):
        with self._lock:
            return self.script.pop(0) if self.script else 200

    def _handler(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver._lock:
                    receiver.received.append(Received(self.path, dict(self.headers.items()), body))
                answer = receiver._next_answer()
                try:
                    if answer == HANG:
                        time.sleep(receiver.hang_seconds)
                        answer = 200
                    self.send_response(answer)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                except OSError:
                    pass  # the sender gave up waiting and closed the connection

            def log_message(self, *args):
                pass

        return Handler
