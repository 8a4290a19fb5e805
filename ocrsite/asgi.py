"""ASGI entry point: HTTP through Django, WebSockets through Channels."""

import mimetypes
import os

import django
import PIL.Image
from asgiref.sync import sync_to_async
from django.apps import apps
from django.core.handlers.asgi import ASGIHandler
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ocrsite.settings.base")


class SyncChainASGIHandler(ASGIHandler):
    """Django's ASGI handler with the middleware chain and view run sync, in one hop to the request's thread.

    Every view and middleware here is sync. The stock handler adapts the chain middleware
    by middleware: each one's hooks went through ``sync_to_async``, a dozen thread
    hand-offs that cost the server 3 ms of CPU a request, as much as a job's status.
    """

    def load_middleware(self, is_async=False):
        super().load_middleware(is_async=False)

    async def get_response_async(self, request):
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)


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
