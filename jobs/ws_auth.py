"""WebSocket authentication: the session for browsers, ``Authorization: Token <key>`` for API clients.

Browsers send their cookies with any site's WebSocket handshake, so a
session-authenticated socket must pass the Origin check. A page on another site
cannot put an Authorization header on a WebSocket, so a token-authenticated
socket needs no Origin check (API clients usually send no Origin at all).
"""

from __future__ import annotations

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.security.websocket import AllowedHostsOriginValidator
from django.contrib.auth.models import AnonymousUser
from rest_framework.exceptions import AuthenticationFailed

from jobs.api.auth import token_credentials


class WebsocketAuth:
    """ASGI middleware: a token header authenticates by token, anything else goes through origin + session."""

    def __init__(self, app):
        self.app = app
        self.session_app = AllowedHostsOriginValidator(AuthMiddlewareStack(app))

    async def __call__(self, scope, receive, send):
        key = token_key(scope.get("headers", []))
        if key is None:
            return await self.session_app(scope, receive, send)
        # The key too: consumers join its group, closed when the token is replaced (jobs.progress.token_group).
        return await self.app({**scope, "user": await token_user(key), "api_token": key}, receive, send)


def token_key(headers) -> str | None:
    for name, value in headers:
        if name == b"authorization":
            scheme, _, key = value.decode("latin1").partition(" ")
            if scheme.lower() == "token" and key.strip():
                return key.strip()
    return None


@database_sync_to_async
def token_user(key: str):
    """The active user owning ``key`` (the API's own check), else AnonymousUser: consumers then refuse the socket."""
    try:
        user, _ = token_credentials(key)
    except AuthenticationFailed:
        return AnonymousUser()
    return user
