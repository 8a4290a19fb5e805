"""Authentication and the default permission, with guessing and anonymous probing rate-limited per address."""

from __future__ import annotations

from rest_framework import exceptions, permissions
from rest_framework.authentication import TokenAuthentication

from jobs.api.throttles import count_anonymous_call


class RateLimitedTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>``; wrong keys count against the caller's address."""

    def authenticate(self, request):
        try:
            return super().authenticate(request)
        except exceptions.AuthenticationFailed:
            count_anonymous_call(request, None)
            raise


class IsAuthenticated(permissions.IsAuthenticated):
    """DRF's rule; a refused anonymous call counts against the caller's address."""

    def has_permission(self, request, view):
        if super().has_permission(request, view):
            return True
        count_anonymous_call(request, view)
        return False
