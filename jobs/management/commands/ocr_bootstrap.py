"""python manage.py ocr_bootstrap: the first admin account and its API token, printed once.

Run by `make run` after migrations. On later runs it does nothing, so the
password is never reset or shown again (change it in the admin).
"""

from __future__ import annotations

import secrets

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from rest_framework.authtoken.models import Token

USERNAME = "admin"


class Command(BaseCommand):
    help = "Create the first admin user and its API token (once); print both."

    def handle(self, *args, **options):
        users = get_user_model().objects
        with transaction.atomic():
            if users.filter(is_superuser=True).exists():
                self.stdout.write("An admin account already exists; nothing to do.")
                return
            password = secrets.token_urlsafe(12)
            user = users.create_superuser(username=USERNAME, email="", password=password)
            token = Token.objects.create(user=user)
        self.stdout.write(self.style.SUCCESS("Created the first admin account. This is shown only once:"))
        self.stdout.write(f"  username:  {USERNAME}")
        self.stdout.write(f"  password:  {password}")
        self.stdout.write(f"  API token: {token.key}   (header: Authorization: Token {token.key})")
