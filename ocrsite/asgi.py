"""ASGI entry point: HTTP through Django, WebSockets through Channels; served by uvicorn (README)."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ocrsite.settings.base")
# Order matters: get_asgi_application() sets Django up (the app registry) before the routing
# below imports consumers, which import models; importing it first raises AppRegistryNotReady.
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

import jobs.routing  # noqa: E402
from jobs.ws_auth import WebsocketAuth  # noqa: E402
from ocrsite.body_limit import BodyLimit  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": BodyLimit(django_asgi_app),
        # Token header -> token user; otherwise Origin check (refuse cross-site
        # sockets before any work), then session user; then the routes.
        "websocket": WebsocketAuth(URLRouter(jobs.routing.websocket_urlpatterns)),
    }
)
