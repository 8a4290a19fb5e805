"""Authentication and the default permission, with guessing and anonymous probing rate-limited per address."""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions, permissions
from rest_framework.authentication import TokenAuthentication

from jobs.api.throttles import count_anonymous_call
from jobs.selectors.tokens import token_with_user


class RateLimitedTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>``; wrong keys count against the caller's address."""

    def authenticate(self, request):
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            count_anonymous_call(request, None)
            raise

    def authenticate_credentials(self, key):
        return token_credentials(key)


def token_credentials(key: str):
    """``(user, token)`` for an API token, for HTTP and WebSockets alike; raises ``AuthenticationFailed``.

    DRF's checks, on the token read in one fixed statement (``token_with_user``).
    """
    token = token_with_user(key)
    if token is None:
        raise exceptions.AuthenticationFailed(_("Invalid token."))
    if not token.user.is_active:
        raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
    return token.user, token


class IsAuthenticated(permissions.IsAuthenticated):
    """DRF's rule; a refused anonymous call counts against the caller's address."""

    def has_permission(self, request, view):
        if super().has_permission(request, view):
            return True
        count_anonymous_call(request, view)
        return False
