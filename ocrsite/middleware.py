"""Response headers every page gets: a strict Content-Security-Policy.

The UI has no inline scripts and loads nothing from other origins (no CDN), so
scripts, styles, images and sockets are limited to this origin: an injected
``<script>`` or ``onclick=`` does not run. Style *attributes* stay allowed:
the templates draw progress bars with ``style="width: …"``, which cannot run code.
"""

from __future__ import annotations

from functools import wraps

CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",  # includes ws(s):// to this host in current browsers
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response


def allow_inline_styles(view):
    """The same policy with inline ``<style>`` allowed, for third-party pages that
    inject their styles (Swagger UI). Scripts stay limited to this origin."""
    policy = CONTENT_SECURITY_POLICY.replace("style-src 'self'", "style-src 'self' 'unsafe-inline'")

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        response.headers["Content-Security-Policy"] = policy
        return response

    return wrapped
