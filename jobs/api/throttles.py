"""API rate limits: per user (token or session) and per client address for anonymous calls.

Rates come from ``settings.API_THROTTLE_RATES`` at each request (DRF's own
classes freeze them at import), so operators and tests can change them. A
throttled request gets 429 ``{"code": "throttled"}`` with ``Retry-After``.

A rate ``N/period`` lets a client send N requests at once, then one every
period/N (the generic cell rate algorithm, as token buckets do). Each client's
state is one number, its next free time (``jobs.api.budgets``): DRF's own
throttles keep the time of every request of the period and rewrite that list on
each request, so at 1200/min a busy client's every call pickled, compressed and
wrote a thousand timestamps (a quarter of a submit's CPU on the embedded default).
"""

from __future__ import annotations

import math

from django.conf import settings
from rest_framework import exceptions
from rest_framework.throttling import BaseThrottle

from jobs.api import budgets


class _SettingsRateThrottle(BaseThrottle):
    scope: str
    cache_format = "throttle_%(scope)s_%(ident)s"

    def allow_request(self, request, view) -> bool:
        rate = settings.API_THROTTLE_RATES.get(self.scope)
        key = self.get_cache_key(request, view) if rate else None
        if key is None:
            return True
        count, period = rate.split("/")
        duration = {"s": 1, "m": 60, "h": 3600, "d": 86400}[period[0]]
        self.wait_seconds = budgets.take(key, duration / int(count), duration)
        return not self.wait_seconds

    def wait(self) -> int:
        """Whole seconds until one more request is allowed (DRF writes Retry-After with %d)."""
        return max(1, math.ceil(self.wait_seconds))


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
