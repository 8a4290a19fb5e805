"""Test settings: real PostgreSQL, fast hashing, private URLs allowed for local fakes."""

import os
import tempfile

os.environ.setdefault("SECRET_KEY", "test-only-not-secret")
os.environ.setdefault("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/ocr")
os.environ.setdefault("OCR_ALLOW_PRIVATE_URLS", "true")
# Tests write media under their own tmp_path (tests/conftest.py); nothing goes into the checkout's var/.
# One folder for every test process (not one per process): only the empty upload spool is made here.
os.environ.setdefault("MEDIA_ROOT", os.path.join(tempfile.gettempdir(), "ocr-test-media"))
os.environ.setdefault("HTTPS", "false")
os.environ.setdefault("METRICS_CACHE_SECONDS", "0")
os.environ.setdefault("METRICS_PUBLIC", "true")  # tests read /metrics without a token; those of the token set one
# One test process makes thousands of calls from 127.0.0.1; tests of the limits set their own.
os.environ.setdefault("API_THROTTLE_ANON", "100000/min")
os.environ.setdefault("API_THROTTLE_USER", "100000/min")  # tests read /metrics right after changing the database  # live servers in tests speak plain HTTP on loopback
# Real channel layer in tests (PostgreSQL deployments use Redis for it).
os.environ.setdefault("REDIS_URL", "redis://127.0.0.1:6379/0")
# Concurrent test runs share that Redis; user ids repeat across their databases.
os.environ.setdefault("CHANNEL_LAYER_PREFIX", f"asgi-test-{os.getpid()}")
os.environ.setdefault("CACHE_KEY_PREFIX", f"test-{os.getpid()}")  # likewise for django-q2's cluster status

from .base import *  # noqa: E402,F401,F403
from .base import DATABASES  # noqa: E402

from ocrsite.env import env_str  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Several people run tests on one PostgreSQL at once: a per-process test
# database name keeps their runs from dropping each other's database.
DATABASES["default"]["TEST"] = {"NAME": env_str("TEST_DATABASE_NAME", f"test_ocr_{os.getpid()}")}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # `make test`'s pass on the embedded default's database
    # In the temp folder, so that its -wal, -shm and .writelock files, which outlive the run, stay out of the checkout.
    DATABASES["default"]["TEST"]["NAME"] = os.path.join(tempfile.gettempdir(), f"ocr-test-{os.getpid()}.sqlite3")
STORAGES["staticfiles"] = {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}  # noqa: F405
# No collectstatic in tests: serve from the finders, skip the STATIC_ROOT scan.
WHITENOISE_AUTOREFRESH = True
WHITENOISE_USE_FINDERS = True
