"""Accounts: the user's API token."""

from __future__ import annotations

from django.db import transaction
from rest_framework.authtoken.models import Token


def api_token_regenerate(*, user) -> Token:
    """Give ``user`` a new API token; the old key (if any) stops working at once."""
    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)
