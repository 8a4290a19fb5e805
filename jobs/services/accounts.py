"""Accounts: the user's API token and webhook signing secret."""

from __future__ import annotations

from django.db import transaction
from rest_framework.authtoken.models import Token

from jobs import progress
from jobs.models import UserSettings, new_webhook_secret


def api_token_regenerate(*, user) -> Token:
    """Give ``user`` a new API token; the old key (if any) stops working at once, its open WebSockets too."""
    with transaction.atomic():
        for key in Token.objects.filter(user=user).values_list("key", flat=True):
            transaction.on_commit(lambda key=key: progress.sockets_close(progress.token_group(key),
                                                                         progress.CLOSE_TOKEN_REVOKED))
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)


def webhook_secret_rotate(*, user) -> str:
    """Give ``user`` a new webhook signing secret and return it: the only time it is shown.

    Deliveries sent from now on, retries of older events included, are signed
    with the new secret.
    """
    secret = new_webhook_secret()
    UserSettings.objects.update_or_create(user=user, defaults={"webhook_secret": secret})
    return secret
