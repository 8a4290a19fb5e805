"""Authentication and the default permission, with guessing and anonymous probing rate-limited per address."""

from __future__ import annotations

from rest_framework import exceptions, permissions
from rest_framework.authentication import TokenAuthentication

from jobs.api.throttles import count_anonymous_call


class RateLimitedTokenAuthentication(TokenAuthentication):
    """DRF's ``Authorization: Token <key>``; wrong keys count against the caller's address."""

    def authenticate(self, request):
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            count_anonymous_call(request, None)
            raise


def token_credentials(key: str):
    """``(user, token)`` for an API token, for HTTP and WebSockets alike: DRF's own checks; raises ``AuthenticationFailed``."""
    return TokenAuthentication().authenticate_credentials(key)


class IsAuthenticated(permissions.IsAuthenticated):
    """DRF's rule; a refused anonymous call counts against the caller's address."""

    def has_permission(self, request, view):
        if super().has_permission(request, view):
            return True
        count_anonymous_call(request, view)
        return False
