"""API rate limits: per user (token or session) and per client address for anonymous calls.

Rates come from ``settings.API_THROTTLE_RATES`` at each request (DRF's own
classes freeze them at import), so operators and tests can change them. A
throttled request gets 429 ``{"code": "throttled"}`` with ``Retry-After``.

A rate ``N/period`` lets a client send N requests at once, then one every
period/N (the generic cell rate algorithm, as token buckets do). The upload form (``/upload/``) spends
the API's submit budget too, one call per file (``submissions_wait``), and a batch one per member, on the
API and the form alike (``submissions_admit``): a batch is as many jobs as it has members. Each client's
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


def rate_wait(scope: str, ident, calls: int = 1) -> float:
    """Spend ``calls`` of ``ident``'s budget at ``scope``'s rate; 0.0, or the seconds until they would fit.

    A scope without a rate is unlimited. More calls than the rate's N never fit (keep batches smaller).
    """
    rate = settings.API_THROTTLE_RATES.get(scope)
    if not rate:
        return 0.0
    count, period = rate.split("/")
    duration = {"s": 1, "m": 60, "h": 3600, "d": 86400}[period[0]]
    return budgets.take(f"throttle_{scope}_{ident}", duration / int(count) * calls, duration)


def submissions_wait(user, jobs: int) -> int:
    """Spend ``jobs`` new jobs of the user's submit budget (the API's and the upload form's, one budget);
    0, or whole seconds until they would fit."""
    wait = rate_wait(SubmitRateThrottle.scope, user.pk, calls=jobs)
    return math.ceil(wait) if wait else 0


def submissions_admit(user, jobs: int) -> None:
    """Spend ``jobs`` new jobs of the user's submit budget, or raise ``Throttled`` (429 ``throttled`` with
    Retry-After) spending nothing: a batch calls this with its member count (``batch_create``'s ``admit``)."""
    if wait := submissions_wait(user, jobs):
        raise exceptions.Throttled(wait)


class _SettingsRateThrottle(BaseThrottle):
    scope: str

    def ident(self, request) -> int | str | None:
        """Whose budget the request spends; None: it is not limited here."""
        raise NotImplementedError

    def allow_request(self, request, view) -> bool:
        ident = self.ident(request)
        self.wait_seconds = 0.0 if ident is None else rate_wait(self.scope, ident)
        return not self.wait_seconds

    def wait(self) -> int:
        """Whole seconds until one more request is allowed (DRF writes Retry-After with %d)."""
        return max(1, math.ceil(self.wait_seconds))


class UserRateThrottle(_SettingsRateThrottle):
    """Every call of an authenticated user, whatever token or session it comes with."""

    scope = "user"

    def ident(self, request):
        return request.user.pk if request.user.is_authenticated else None


class AnonRateThrottle(_SettingsRateThrottle):
    """Unauthenticated calls, per client address (wrong tokens and probing included).

    Not a default throttle class: see ``count_anonymous_call``.
    """

    scope = "anon"

    def ident(self, request):
        return self.get_ident(request)


class SubmitRateThrottle(_SettingsRateThrottle):
    """New jobs per user: each one stores a file and queues OCR work."""

    scope = "submit"

    def ident(self, request):
        return request.user.pk if request.method == "POST" and request.user.is_authenticated else None


def count_anonymous_call(request, view) -> None:
    """Count an unauthenticated call against its address; raise ``Throttled`` past the rate.

    DRF checks authentication and permissions before throttles, so a bad token
    (401) or a missing one (401) would never reach ``AnonRateThrottle``: the
    authentication and permission classes call this instead.
    """
    throttle = AnonRateThrottle()
    if not throttle.allow_request(request, view):
        raise exceptions.Throttled(throttle.wait())
