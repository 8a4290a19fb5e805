"""The ASGI server: daphne, with request bodies bounded before they are stored.

daphne (Twisted underneath) reads a whole request body into a temporary file
before the application sees the request, so a limit checked by Django (or by
any ASGI middleware) comes after the disk is already full: ``POST /healthz``
with a 20 GB body filled it. Here the body's size is judged when the headers
arrive, from ``Content-Length``, and again while it streams (chunked bodies,
lying lengths); past the limit the client gets 413 and the connection closes,
with nothing kept.

Only the upload routes take large bodies, and only with credentials (a token
header or a session cookie; Django checks them afterwards, so a bogus one
costs at most one upload's size). Everything else gets ``OCR_MAX_BODY_BYTES``.

Twisted also parses every form body into ``request.args`` with the e-mail
package, on the event loop, before daphne hands the body to Django, which parses
it again; daphne never reads ``args``. For a 7 MB upload that was 0.29 s during
which the server answered nobody; and before deciding whether to parse, it
read each submission's ``Content-Type`` with the e-mail package, 0.15 ms on the
event loop. Both are switched off here. So is Twisted's own access log, which
daphne sends nowhere (it writes its own).

Run it as ``python -m ocrsite.server -b 127.0.0.1 -p 8000 ocrsite.asgi:application``
(daphne's own options). ``WEB_PROCESSES`` (default: one per core, at most 4) daphne
processes accept on one listening socket, as gunicorn's workers do: a submit costs about
10 ms of CPU, and one process's requests share one interpreter lock, so a single process
queued a burst of 20 submits for a quarter of a second.

A kept-alive connection stays with the process that accepted it, and whichever process
wakes first used to take all waiting connections: 20 clients connecting together were
split 16/4 or 20/0, and the busier process answered its share twice as late. Each process
now publishes how many connections it holds (``ConnectionCounts``) and takes one
connection at a time, leaving it for a moment to a process that holds fewer. None accepts
any before all have loaded the application (``StartTogether``).
"""

from __future__ import annotations

import importlib
import json
import mmap
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time

from daphne.cli import CommandLineInterface
from twisted.internet import tcp
from daphne.http_protocol import HTTPFactory, WebRequest
from daphne.server import Server

# POST /api/v1/jobs and the upload form: where documents come in.
UPLOAD_PATHS = re.compile(rb"^/(api/v1/jobs|upload/)(\?.*)?$")
MULTIPART_OVERHEAD = 1024 * 1024  # form fields and part headers around the file


def _env_int(name: str, default: int) -> int:
    # The server starts before Django's settings; it reads the same variables.
    return int(os.environ.get(name, "").replace("_", "") or default)


def body_limit(method: bytes, path: bytes, headers) -> int:
    if method == b"POST" and UPLOAD_PATHS.match(path) and (
            headers.hasHeader(b"authorization") or b"sessionid=" in b";".join(headers.getRawHeaders(b"cookie", []))):
        return _env_int("OCR_MAX_UPLOAD_BYTES", 50 * 1024 * 1024) + MULTIPART_OVERHEAD
    return _env_int("OCR_MAX_BODY_BYTES", 1024 * 1024)


class _Discard:
    """Where the rest of a refused body goes: nowhere."""

    def write(self, data):
        pass

    def seek(self, *args):
        pass

    def read(self, *args):
        return b""

    def close(self):
        pass

    closed = False


class BoundedWebRequest(WebRequest):
    refused = False

    def __init__(self, channel, *args, **kwargs):
        super().__init__(channel, *args, parsePOSTFormSubmission=False, **kwargs)  # see the module docstring

    def gotLength(self, length):
        # Twisted's channel holds the request line until the request is built.
        self.body_limit = body_limit(self.channel._command, self.channel._path, self.requestHeaders)
        self.body_received = 0
        if length is not None and length > self.body_limit:
            self._refuse()
        else:
            super().gotLength(length)

    def handleContentChunk(self, data):
        if self.refused:
            return
        self.body_received += len(data)
        if self.body_received > self.body_limit:
            self.content.close()
            self._refuse()
        else:
            super().handleContentChunk(data)

    def requestReceived(self, command, path, version):
        if not self.refused:
            super().requestReceived(command, path, version)

    def _refuse(self):
        self.refused = True
        self.content = _Discard()
        body = json.dumps({"code": "request_too_large", "detail": (
            f"The request body is over {self.body_limit} bytes, the most this server takes here.")}).encode()
        self.channel.transport.write(
            b"HTTP/1.1 413 Payload Too Large\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
        self.channel.transport.loseConnection()


class ProcessTable:
    """Two numbers per web process in memory they all map (``memfd``); each writes only its own.

    Its open connections (``ConnectionCounts``), and whether it has loaded the application
    (``StartTogether``).
    """

    SLOT = 4  # bytes: one int32

    def __init__(self, fd: int, index: int):
        slots = memoryview(mmap.mmap(fd, 0)).cast("i")
        processes = len(slots) // 2
        self.connections, self.loaded = slots[:processes], slots[processes:]
        self.index = index

    @staticmethod
    def create(processes: int) -> int:
        """A zeroed table for ``processes`` servers; returns its descriptor, to pass to them."""
        fd = os.memfd_create("ocr-web-processes", 0)
        os.ftruncate(fd, 2 * processes * ProcessTable.SLOT)
        return fd


class ConnectionCounts:
    """How many connections each web process holds, to leave a new one to a less busy process."""

    def __init__(self, table: ProcessTable):
        self.slots, self.index = table.connections, table.index

    def change(self, by: int) -> None:
        self.slots[self.index] += by

    def others_hold_fewer(self) -> bool:
        return min(self.slots) < self.slots[self.index]


class StartTogether:
    """No web process accepts a connection before every one has loaded the application.

    The socket listens from the start, and loading Django, the application and its request
    threads takes a process one to four seconds of CPU. The first process ready took every
    connection that came meanwhile, and kept each for its life: twenty clients that began
    when ``/healthz`` first answered all sat on one process, answered twice as late
    (docs/benchmarks.md). Connections now wait in the socket's backlog until all are ready.
    """

    PATIENCE_SECONDS = 60.0  # a process that takes longer to load is not waited for: the others start

    def __init__(self, table: ProcessTable):
        self.loaded, self.index = table.loaded, table.index

    def loaded_wait_for_others(self) -> None:
        self.loaded[self.index] = 1
        deadline = time.monotonic() + self.PATIENCE_SECONDS
        while not all(self.loaded) and time.monotonic() < deadline:
            time.sleep(0.005)


LEAVE_FOR_OTHERS_SECONDS = 0.02  # how long a busier process leaves a new connection to the others at most
RECHECK_SECONDS = 0.001  # how often it looks whether they have caught up meanwhile
_counts: ConnectionCounts | None = None
_accept_connections = tcp.Port.doRead


def _accept_balanced(port) -> None:
    """``Port.doRead`` taking one connection at a time, after a less busy process had its chance.

    Every process waiting on the shared socket is woken. One holding more connections
    than another stops reading until the others have caught up, for at most
    ``LEAVE_FOR_OTHERS_SECONDS``; if the connection is still waiting then, it takes it, so a
    stuck process never leaves a connection unanswered. A fixed pause was either too short
    for a process whose request threads held the interpreter lock for its 5 ms switch
    interval (the busier one then took the connection anyway) or, at 20 ms, left
    connections waiting after the others had caught up.
    """
    take_anyway, port.take_anyway = getattr(port, "take_anyway", False), False
    if _counts.others_hold_fewer() and not take_anyway:
        port.stopReading()
        port.reactor.callLater(RECHECK_SECONDS, _recheck, port, time.monotonic() + LEAVE_FOR_OTHERS_SECONDS)
        return
    port.numberAccepts = 1
    _accept_connections(port)


def _recheck(port, deadline: float) -> None:
    if _counts.others_hold_fewer() and time.monotonic() < deadline:
        port.reactor.callLater(RECHECK_SECONDS, _recheck, port, deadline)
        return
    # The others caught up, or they left the connection waiting until the deadline.
    port.take_anyway = time.monotonic() >= deadline and bool(select.select([port.socket], [], [], 0)[0])
    port.startReading()


class CountedConnection(tcp.Server):
    """An accepted connection, counted from accept to close.

    Counting the reactor's readers missed the connections whose requests were being answered
    (the reactor pauses them), so the busier process counted fewer and took more: 23 of 40.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _counts.change(+1)

    def connectionLost(self, reason):
        try:
            super().connectionLost(reason)
        finally:
            _counts.change(-1)


def _balance_connections(table: ProcessTable) -> None:
    global _counts
    _counts = ConnectionCounts(table)
    tcp.Port.doRead = _accept_balanced
    tcp.Port.transport = CountedConnection


def _load_with_the_others(table: ProcessTable, argv: list[str]) -> None:
    """Import the application daphne will serve (``ocrsite.asgi`` warms up as it is imported), then
    wait until the other web processes have too (``StartTogether``)."""
    application = BoundedCommandLineInterface().parser.parse_args(argv).application
    importlib.import_module(application.split(":", 1)[0])
    StartTogether(table).loaded_wait_for_others()


class BoundedHTTPFactory(HTTPFactory):
    def buildProtocol(self, addr):
        protocol = super().buildProtocol(addr)
        protocol.requestFactory = BoundedWebRequest
        return protocol

    def log(self, request):
        pass  # Twisted's access log: daphne logs each request itself (see the module docstring)


class BoundedServer(Server):
    """daphne's server with ``BoundedHTTPFactory``; ``Server.run`` makes its factory
    itself, so the attribute it is stored in swaps in ours."""

    @property
    def http_factory(self):
        return self._http_factory

    @http_factory.setter
    def http_factory(self, factory):
        self._http_factory = BoundedHTTPFactory(self) if type(factory) is HTTPFactory else factory


class BoundedCommandLineInterface(CommandLineInterface):
    server_class = BoundedServer


def web_processes() -> int:
    return _env_int("WEB_PROCESSES", min(len(os.sched_getaffinity(0)), 4))


def serve_in_processes(count: int, argv: list[str]) -> int:
    """Bind ``-b``/``-p`` once and run ``count`` servers that accept on that socket; returns an exit code.

    The kernel hands each new connection to one of them. A signal stops them all;
    so does one of them exiting (a supervisor restarts the whole server).
    """
    host, port, rest = _bind_options(argv)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host.strip("[]"), port))
    listener.listen(1024)
    command = [sys.executable, "-m", "ocrsite.server", "--fd", str(listener.fileno()), *rest]
    table = ProcessTable.create(count)
    children = [subprocess.Popen(command, pass_fds=[listener.fileno(), table], env={
        **os.environ, "WEB_PROCESSES": "1", "WEB_PROCESS_TABLE": f"{table}:{index}"}) for index in range(count)]

    def stop(signum, frame):
        # SIGTERM whatever stopped us: a process started in the background by a script
        # (``make run &``, nohup) inherits SIGINT ignored, and daphne then never sees it.
        for child in children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    _, status = os.wait()  # the first to exit, whatever the reason
    stop(signal.SIGTERM, None)
    for child in children:
        child.wait()
    return os.waitstatus_to_exitcode(status)


def _bind_options(argv: list[str]) -> tuple[str, int, list[str]]:
    host, port, rest, args = "127.0.0.1", 8000, [], iter(argv)
    for arg in args:
        if arg in ("-b", "--bind"):
            host = next(args)
        elif arg in ("-p", "--port"):
            port = int(next(args))
        else:
            rest.append(arg)
    return host, port, rest


if __name__ == "__main__":
    os.environ.setdefault("DB_POOL_SIZE", "8")  # PostgreSQL connections per web process (settings)
    argv = sys.argv[1:]
    if web_processes() > 1 and "--fd" not in argv:
        sys.exit(serve_in_processes(web_processes(), argv))
    if shared := os.environ.pop("WEB_PROCESS_TABLE", ""):
        table = ProcessTable(*map(int, shared.split(":")))
        _balance_connections(table)
        _load_with_the_others(table, argv)
    BoundedCommandLineInterface.entrypoint()
