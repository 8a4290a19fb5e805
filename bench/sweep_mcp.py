"""``bench/sweep.py``'s probes of ``ocr-client mcp --http``, which it starts itself against the swept server.

As an attacker on the network would: a non-loopback ``--host`` without ``--allowed-host`` must not start;
started on ``0.0.0.0`` by user a (``OCR_TOKEN``), a request without a token of its own must get 401 (never
run as a), a Host or Origin not allowed 421/403, and with user b's token no tool may read a's job or a
path of the MCP server's machine (a FIFO there: a writer still waiting in ``open()`` proves nobody read it).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio
import requests
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

OCR_CLIENT = str(Path(sys.executable).with_name("ocr-client"))
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "sweep", "version": "1"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def mcp_http(sweep, token_a: str, token_b: str, job_of_a: str) -> None:
    env = {**os.environ, "OCR_URL": sweep.url, "OCR_TOKEN": token_a, "OCR_CONFIG": os.devnull}
    port = _free_port()
    refused = subprocess.run([OCR_CLIENT, "mcp", "--http", "--host", "0.0.0.0", "--port", str(port)], env=env,
                             capture_output=True, text=True, timeout=60)
    sweep.expect("mcp --http on 0.0.0.0 without --allowed-host does not start",
                 refused.returncode == 2 and "--allowed-host" in refused.stderr, f"exit {refused.returncode}")
    with _serving(["--host", "0.0.0.0", "--allowed-host", "127.0.0.1", "--port", str(port)], env, port) as url:
        for authorization in (None, "", "Basic c3dlZXAtYTpwdw==", f"Token{token_a}"):
            headers = {**MCP_HEADERS, **({"Authorization": authorization} if authorization is not None else {})}
            reply = requests.post(url, json=INITIALIZE, headers=headers, timeout=30)
            sweep.expect(f"mcp --http without a token of its own ({authorization!r:.12})", reply.status_code == 401,
                         f"HTTP {reply.status_code}")
        with_b = {**MCP_HEADERS, "Authorization": f"Token {token_b}"}
        reply = requests.post(url, json=INITIALIZE, headers={**with_b, "Host": "attacker.example"}, timeout=30)
        sweep.expect("mcp --http with a Host not allowed", reply.status_code == 421, f"HTTP {reply.status_code}")
        reply = requests.post(url, json=INITIALIZE, headers={**with_b, "Origin": "http://attacker.example"}, timeout=30)
        sweep.expect("mcp --http with an Origin not allowed", reply.status_code == 403, f"HTTP {reply.status_code}")
        _tools_as_b(sweep, url, token_b, job_of_a)


def _tools_as_b(sweep, url: str, token_b: str, job_of_a: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        fifo = Path(folder) / "passport.pdf"
        os.mkfifo(fifo)
        opened = threading.Event()
        writer = threading.Thread(target=lambda: (fifo.open("wb").close(), opened.set()), daemon=True)
        writer.start()
        try:
            results = anyio.run(_call_tools, url, token_b, [
                ("ocr_submit", {"source": str(fifo)}), ("ocr_submit", {"source": f"file://{fifo}"}),
                ("ocr_read", {"job": job_of_a}), ("ocr_status", {"job": job_of_a}),
                ("ocr_crop", {"job": job_of_a, "page": 1, "line_id": "p1-l1"})])
            unread = not opened.is_set()
        finally:
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))  # lets the writer go
            writer.join(timeout=10)
    texts = [" ".join(block.text for block in result.content if block.type == "text") for result in results]
    sweep.expect("mcp --http reads no path of its machine", unread and all(
        result.is_error and "http(s) URL" in text for result, text in zip(results[:2], texts[:2])), str(texts[:2]))
    sweep.expect("mcp --http with b's token reads nothing of a's job", all(
        result.is_error and "not_found" in text for result, text in zip(results[2:], texts[2:])), str(texts[2:]))


async def _call_tools(url: str, token: str, calls: list[tuple[str, dict]]) -> list:
    async with create_mcp_http_client(headers={"Authorization": f"Token {token}"}) as http, \
            streamable_http_client(url, http_client=http) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return [await session.call_tool(name, arguments) for name, arguments in calls]


@contextlib.contextmanager
def _serving(options: list[str], env: dict[str, str], port: int):
    process = subprocess.Popen([OCR_CLIENT, "mcp", "--http", *options], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while True:
            with contextlib.suppress(requests.ConnectionError):
                requests.get(url, timeout=5)
                break
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"ocr-client mcp --http did not start (exit {process.poll()})")
            time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=20)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
