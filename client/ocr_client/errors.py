"""Typed errors. Every one carries the server's ``code`` and ``detail`` (its JSON error shape,
``{"code", "detail"}``) and the HTTP ``status`` (``None`` when no answer came).

Catch ``OcrClientError`` for all of them, or a subclass for one kind of failure::

    try:
        job = client.submit("scan.pdf")
    except Refused as exc:        # 413/415/422: the server will not read this file
        print(exc.code, exc.detail)
"""

from __future__ import annotations

from typing import Any


class OcrClientError(Exception):
    """Base of every error this package raises."""

    default_code = "error"

    def __init__(self, detail: str, *, code: str | None = None, status: int | None = None,
                 body: Any = None, retry_after: float | None = None):
        super().__init__(f"{code or self.default_code}: {detail}" + (f" (HTTP {status})" if status else ""))
        self.detail = detail
        self.code = code or self.default_code
        self.status = status
        self.body = body  # the server's whole answer (a dict for JSON), for fields such as ``fields``
        self.retry_after = retry_after  # seconds, from Retry-After, where the server sent one


class AuthError(OcrClientError):
    """401/403: no token, a wrong or replaced token, or an action this user may not take."""

    default_code = "not_authenticated"


class NotFound(OcrClientError):
    """404: no such job, page or line, or one that belongs to another user (the server does not say which)."""

    default_code = "not_found"


class BadRequest(OcrClientError):
    """400: the request is wrong for this server (an unknown option, a bad page range, a form error)."""

    default_code = "invalid_request"


class Refused(OcrClientError):
    """413/415/422: the server will not read this document (too large, not a supported type, corrupt, encrypted...)."""

    default_code = "refused"


class Conflict(OcrClientError):
    """409: the job is not in a state for this action (cancel a finished job, retry one that did not fail)."""

    default_code = "invalid_state"


class RateLimited(OcrClientError):
    """429 still answered after every retry: a rate limit (``throttled``) or a quota (``quota_exceeded``)."""

    default_code = "throttled"


class ServerError(OcrClientError):
    """5xx other than 503, e.g. 500 ``server_error`` or 507 ``insufficient_storage``."""

    default_code = "server_error"


class ServerUnavailable(ServerError):
    """503 (or 502/504 from a proxy) still answered after every retry."""

    default_code = "unavailable"


class ConnectionFailed(OcrClientError):
    """No answer at all: the server is unreachable, refused the connection or timed out."""

    default_code = "connection_failed"


class SchemaMismatch(OcrClientError):
    """The server's result ``schema_version`` has another major version than this client reads."""

    default_code = "schema_mismatch"


class ForeignLink(OcrClientError):
    """A link in the server's answer (a list's ``next``) that leaves this client's API (another scheme, host,
    port or path): not followed, so the token goes to no one else."""

    default_code = "foreign_link"


class WaitTimeout(OcrClientError, TimeoutError):
    """``Job.wait(timeout=...)`` ran out before the job ended."""

    default_code = "wait_timeout"


CLASS_BY_STATUS = {400: BadRequest, 401: AuthError, 403: AuthError, 404: NotFound, 409: Conflict,
                   413: Refused, 415: Refused, 422: Refused, 429: RateLimited,
                   502: ServerUnavailable, 503: ServerUnavailable, 504: ServerUnavailable}


def error_for(status: int, body: Any, retry_after: float | None = None) -> OcrClientError:
    """The typed error for an HTTP answer of ``status`` whose body (parsed JSON, or text) is ``body``."""
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        code, detail = body.get("code"), body["detail"]
        code = code if isinstance(code, str) else None
    else:
        code, detail = None, (str(body).strip()[:500] if body else f"HTTP {status}")
    cls = CLASS_BY_STATUS.get(status) or (ServerError if status >= 500 else OcrClientError)
    return cls(detail, code=code or (cls.default_code if cls is not OcrClientError else f"http_{status}"),
               status=status, body=body, retry_after=retry_after)
