"""ASGI entry point: HTTP through Django, WebSockets through Channels."""

import asyncio
import contextvars
import gc
import mimetypes
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qsl

import django
import PIL.Image
from asgiref.sync import sync_to_async
from django.apps import apps
from django.conf import settings
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.db import DatabaseError, close_old_connections, connections
from django.http import FileResponse, HttpResponseBase
from django.urls import get_resolver, set_script_prefix
from django.utils.module_loading import import_string

from jobs.give_way import Foreground
from ocrsite.request_lane import RequestLane

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ocrsite.settings.base")

# Pool threads each web process starts before it listens, besides its request lane: enough for the
# long-polls of twenty or thirty clients and for requests queued behind a slow one; more start as
# requests need them.
WARM_REQUEST_THREADS = 16
# How long a long-poll may wait for the process's other requests to finish before it starts (ForegroundFirst).
LONG_POLL_DEFER_SECONDS = 0.25
# How long a request may run on the process's request lane before the ones queued behind it go to
# other threads (``RequestLane``): a submit in a burst takes 3-15 ms there, an export seconds.
LANE_PATIENCE_SECONDS = 0.05
# Larger bodies go straight to the pool: a submission took about 3.5 ms more per MB of upload here, so
# a large one would keep the requests behind it waiting out the lane's patience.
LANE_MAX_BODY_BYTES = 4 * 1024 * 1024


class ForegroundFirst:
    """Long-polls start once no other request of the process is in flight, or after ``LONG_POLL_DEFER_SECONDS``.

    A long-poll (``GET /jobs/{id}?wait=``, ``jobs.waits``) answers when its job ends, seconds
    later, but its work before it waits (authentication, the job's read, the wait's set-up, about
    half a submission's CPU) is done at once. A client that submits and then waits sends it while
    the other clients' submissions of a burst are still being answered, and there it took the
    cores that those answers needed: of twenty first submits on new connections, each followed by
    its wait, the 18th was answered 15-30 ms later than with no waits (docs/benchmarks.md).
    Deferred, that work runs after the burst, where it costs the wait nothing.

    The same requests in flight, long-polls left out, stop the OCR workers of the embedded default
    (``jobs.give_way``) until the web processes have answered them.

    State of the server's event loop: read and changed only there.
    """

    def __init__(self):
        self.in_flight = 0
        self.waiting: list[asyncio.Future] = []
        self.workers = Foreground()  # stopped while requests are in flight

    def started(self) -> None:
        self.in_flight += 1
        self.workers.started()

    def finished(self) -> None:
        self.in_flight -= 1
        self.workers.finished()
        if not self.in_flight:
            for idle in self.waiting:
                if not idle.done():
                    idle.set_result(None)
            self.waiting.clear()

    async def wait_idle(self) -> None:
        if not self.in_flight:
            return
        idle = asyncio.get_running_loop().create_future()
        self.waiting.append(idle)
        try:
            await asyncio.wait_for(idle, LONG_POLL_DEFER_SECONDS)
        except TimeoutError:
            self.waiting.remove(idle)  # a steady stream of other requests: start anyway


def is_long_poll(scope) -> bool:
    """A ``GET`` with a ``wait`` above 0: it may be held until its job ends (``JobWaitSerializer``)."""
    if scope["method"] != "GET" or b"wait=" not in scope["query_string"]:
        return False
    for name, value in parse_qsl(scope["query_string"].decode("latin-1")):
        if name == "wait":
            try:
                return float(value) > 0
            except ValueError:
                return False  # answered at once, with 400
    return False


class SyncChainASGIHandler(ASGIHandler):
    """Django's ASGI handler with each request served in one hop to a reused thread.

    Every view and middleware here is sync. The stock handler adapts the chain middleware
    by middleware: each one's hooks went through ``sync_to_async``, a dozen thread
    hand-offs that cost the server 3 ms of CPU a request, as much as a job's status. It
    also starts a thread for every request and hands off to it three times (the
    ``request_started`` signal, the response, ``response.close()``): another 1 ms of a
    submission's 7. Here the chain is loaded sync, and one hop to a reused thread runs the
    started signal, the chain and the view, and closes a response whose body is built
    (``request_finished``: the thread's database connection goes back to its pool).

    That thread is the process's request lane's (``RequestLane``), which runs requests one after
    another, or one of a pool of ``WEB_REQUEST_THREADS``: for long-polls, which hold their thread
    while they wait, for large uploads, and for requests queued on the lane behind a slow one.

    A streaming response (a file) is sent as Django sends it, with its file read on the
    request's thread-sensitive context, and closed once sent.
    """

    def __init__(self):
        super().__init__()
        self.executor = ThreadPoolExecutor(max_workers=settings.WEB_REQUEST_THREADS, thread_name_prefix="request")
        self.lane = RequestLane(self.executor, LANE_PATIENCE_SECONDS)
        self.foreground = ForegroundFirst()

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)

    def start_threads(self, count: int) -> None:
        """Start ``count`` pool threads, each with its connection objects built, and a connection for each;
        then the same on the request lane's thread.

        A thread's first request builds its connection objects and takes a database connection,
        which then waits in the process's pool. A cold process paid that on every thread of its
        first burst of submits, where each thread also waited for the others' interpreter-lock
        turns. The threads here give their connections back at once, so they would share one:
        the embedded default's pool (``ocrsite/db_sqlite3``) is filled with ``count`` first.
        """
        count = min(count, settings.WEB_REQUEST_THREADS)
        all_started = threading.Barrier(count)
        try:
            for connection in connections.all():
                if fill_pool := getattr(connection, "fill_pool", None):
                    fill_pool(count)
        except DatabaseError:
            pass  # a database not up yet: requests open their connections

        def open_connection() -> None:
            try:
                for connection in connections.all():
                    connection.ensure_connection()
            except DatabaseError:
                pass  # a database not up yet: the threads open theirs on their first requests
            finally:
                close_old_connections()  # back to the pool, as at the end of a request

        def open_connection_once_all_started(_) -> None:
            all_started.wait(timeout=30)  # each call holds its thread until all have one of their own
            open_connection()

        list(self.executor.map(open_connection_once_all_started, range(count)))
        self.lane.submit(open_connection).result()  # the lane's thread, which takes most requests

    async def handle(self, scope, receive, send):
        if is_long_poll(scope):
            await self.foreground.wait_idle()
            await self._handle(scope, receive, send, long_poll=True)
            return
        self.foreground.started()
        try:
            await self._handle(scope, receive, send, long_poll=False)
        finally:
            self.foreground.finished()

    async def _handle(self, scope, receive, send, long_poll: bool):
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        large = body_file.seek(0, os.SEEK_END) > LANE_MAX_BODY_BYTES
        body_file.seek(0)
        executor = self.executor if long_poll or large else self.lane
        try:
            # A plain hand-off: ``sync_to_async`` also walks every context variable on the thread (to
            # carry ``asgiref.local`` data over), 5 % of a submission's sampled CPU. Nothing set on
            # this side is read on the other: the script prefix is set there.
            response = await asyncio.get_running_loop().run_in_executor(
                executor, contextvars.copy_context().run, self._respond, scope, body_file)
            try:
                await self.send_response(response, send)
            finally:
                if response.streaming:  # on the request's thread-sensitive context (``__call__``)
                    await sync_to_async(response.close)()
        finally:
            body_file.close()

    def _respond(self, scope, body_file) -> HttpResponseBase:
        set_script_prefix(get_script_prefix(scope))
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, response = self.create_request(scope, body_file)
        if request is not None:
            response = self.get_response(request)
            response._handler_class = self.__class__
            if isinstance(response, FileResponse):
                response.block_size = self.chunk_size  # the server chunks what it sends
        if response.streaming:
            close_old_connections()  # this thread's; the response is closed on another once sent
        else:
            response.close()
        return response


# Order matters: django.setup() populates the app registry. The routing below
# imports consumers, which import models; importing it first would raise
# AppRegistryNotReady.
django.setup(set_prefix=False)
django_asgi_app = SyncChainASGIHandler()
# Django imports the URLconf (every view, DRF's renderers, drf-spectacular) and builds the
# reverse map on the first request that needs them: half a second that the first submit
# each web process answered waited through. Pay it here, before the server listens.
get_resolver().reverse_dict  # noqa: B018 - imports the URLconf and populates the resolver
# The same for a submission's own lazy set-ups: the MIME table (read from /etc/mime.types to
# name the stored file) and Pillow's common format plugins. A cold process's first burst of
# submits ran them on every request thread at once; they were a third of its CPU.
mimetypes.init()
PIL.Image.preinit()
# And each model's column objects, which Django builds on the first query that selects them.
for model in apps.get_models():
    for field in model._meta.concrete_fields:
        field.cached_col  # noqa: B018
# And the modules that a submission and a signed-in page import on first use: the channel
# layer (live events), the upload handlers, the messages' storage, the session serializer and
# the embedded default's queue broker. A cold process's first burst of submits queued on the
# import lock behind one thread that held the interpreter for its 5 ms switches: 60 ms in a
# burst of 20.
from channels.layers import get_channel_layer  # noqa: E402 - both read the settings on import
from django_q.conf import Conf  # noqa: E402

get_channel_layer()
for name in (*settings.FILE_UPLOAD_HANDLERS, settings.MESSAGE_STORAGE, settings.SESSION_SERIALIZER,
             *filter(None, [Conf.BROKER_CLASS])):
    import_string(name)
# And what a job's answer builds once per process: its serializers' fields and its links' paths.
from jobs.api.serializers import build_once  # noqa: E402

build_once()
django_asgi_app.start_threads(WARM_REQUEST_THREADS)

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

import jobs.routing  # noqa: E402
from jobs.ws_auth import WebsocketAuth  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # Token header -> token user; otherwise Origin check (refuse cross-site
        # sockets before any work), then session user; then the routes.
        "websocket": WebsocketAuth(URLRouter(jobs.routing.websocket_urlpatterns)),
    }
)

# Everything above lives as long as the process: the cyclic garbage collector need not walk it
# again. Left in its generations, it made each full collection a 50-100 ms pause of every
# request of the process, one every few bursts of submits. Garbage is collected first: frozen,
# it would never be (a dead thread's database connection stayed open).
gc.collect()
gc.freeze()
