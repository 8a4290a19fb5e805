"""API rate limits: per user (token or session) and per client address for anonymous calls.

Rates come from ``settings.API_THROTTLE_RATES`` at each request (DRF's own
classes freeze them at import), so operators and tests can change them. A
throttled request gets 429 ``{"code": "throttled"}`` with ``Retry-After``.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework import exceptions
from rest_framework.throttling import SimpleRateThrottle


class _SettingsRateThrottle(SimpleRateThrottle):
    def __init__(self):  # noqa: D107 - the rate is read per request in allow_request
        pass

    def allow_request(self, request, view):
        self.rate = settings.API_THROTTLE_RATES.get(self.scope)
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)


class UserRateThrottle(_SettingsRateThrottle):
    """Every call of an authenticated user, whatever token or session it comes with."""

    scope = "user"

    def get_cache_key(self, request, view):
        if not request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


class AnonRateThrottle(_SettingsRateThrottle):
    """Unauthenticated calls, per client address (wrong tokens and probing included).

    Not a default throttle class: see ``count_anonymous_call``.
    """

    scope = "anon"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class SubmitRateThrottle(_SettingsRateThrottle):
    """New jobs per user: each one stores a file and queues OCR work."""

    scope = "submit"

    def get_cache_key(self, request, view):
        if request.method != "POST" or not request.user.is_authenticated:
            return None
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


def count_anonymous_call(request, view) -> None:
    """Count an unauthenticated call against its address; raise ``Throttled`` past the rate.

    DRF checks authentication and permissions before throttles, so a bad token
    (401) or a missing one (401) would never reach ``AnonRateThrottle``: the
    authentication and permission classes call this instead.
    """
    throttle = AnonRateThrottle()
    if not throttle.allow_request(request, view):
        raise exceptions.Throttled(throttle.wait())
