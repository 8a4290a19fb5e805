"""WSGI entry point (HTTP only; the product runs under ASGI, see asgi.py)."""

import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ocrsite.settings.base")

application = get_wsgi_application()
