"""Stripe-style request signatures.

``X-OCR-Signature: t=<unix time>,v1=<hex HMAC-SHA256(secret, f"{t}.{raw body}")>``.
The time is signed together with the body so that a captured request cannot be
replayed later (receivers reject an old ``t``); ``v1`` names the scheme so that a
second one can be sent alongside it during a migration.
"""

from __future__ import annotations

import hashlib
import hmac


def signature_header(*, secret: str, body: bytes, timestamp: int) -> str:
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={mac}"
