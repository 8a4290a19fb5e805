"""Settings for every deployment, read from the environment in one place.

All environment access goes through ``ocrsite.env``; nothing else in the
project reads ``os.environ`` for configuration. Names are listed below, next to
their defaults (the OCR ones in ``ocrsite/settings/ocr.py``); ``docker/env/*.env.example``
shows them per deployment role.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from ocrsite.env import env_bool, env_float, env_int, env_list, env_str, memory_dir, secret_key_file

from ocrsite.settings.files import *  # noqa: E402,F401,F403 - BASE_DIR, VAR_DIR, static, stored files, uploads

# --- core -----------------------------------------------------------------
DEBUG = env_bool("DEBUG", False)
# The embedded default: no DATABASE_URL, everything under var/ on one machine.
EMBEDDED = env_str("DATABASE_URL") is None
# Values shipped in examples and docs. The key also signs django-q2's pickled
# task payloads, so a guessable one is code execution on the workers.
EXAMPLE_SECRET_KEYS = {"change-me", "changeme", "secret", "insecure-debug-only-key"}
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY and (SECRET_KEY_FILE := env_str("SECRET_KEY_FILE")):
    # `make run`, whatever the database: the key in that file, generated there on first use.
    SECRET_KEY = secret_key_file(Path(SECRET_KEY_FILE))
elif not SECRET_KEY and EMBEDDED and not DEBUG:
    # One key for every entry point, generated once and kept with the data it protects.
    SECRET_KEY = secret_key_file(VAR_DIR / "secret_key")
if not SECRET_KEY:
    if not DEBUG:
        # No default outside debug: a production deploy that forgot its secret
        # must not boot with a key everyone can read in this file.
        raise ImproperlyConfigured("SECRET_KEY is not set. Set SECRET_KEY (or DEBUG=true for local development).")
    SECRET_KEY = "insecure-debug-only-key"  # only ever used with DEBUG=true
elif SECRET_KEY.strip().lower() in EXAMPLE_SECRET_KEYS and not DEBUG:
    raise ImproperlyConfigured("SECRET_KEY is an example value; set a long random one "
                               "(python -c \"import secrets; print(secrets.token_urlsafe(50))\").")

# HTTPS=true: a TLS reverse proxy sets X-Forwarded-Proto and -For (docker/compose.yaml's does).
# The server takes them from that proxy only (uvicorn --forwarded-allow-ips, README).
HTTPS = env_bool("HTTPS", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    # jobs before django_q: its `qcluster` command (model check, SIGTERM drain) overrides django-q2's.
    "jobs",
    "django_q",
    "channels",
    "axes",  # login lockout (django-axes)
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "ocrsite.middleware.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into its 429 answer.
    "axes.middleware.AxesMiddleware",
]
# django-axes first: it refuses a locked-out username/address before the
# password is even checked, so guessing cannot go on behind the lockout.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = env_int("AXES_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("AXES_COOLOFF_MINUTES", 15))
# One address guessing one user's password is locked; other users and places are not.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# The address is REMOTE_ADDR, as for the API's throttles (NUM_PROXIES below): the web server puts the
# client's there, from X-Forwarded-For of the proxies in FORWARDED_ALLOW_IPS only. Named here, not left to
# axes' default, as axes reads the headers listed here wherever django-ipware is installed.
AXES_IPWARE_META_PRECEDENCE_ORDER = ["REMOTE_ADDR"]
AXES_RESET_ON_SUCCESS = True

ROOT_URLCONF = "ocrsite.urls"
WSGI_APPLICATION = "ocrsite.wsgi.application"
ASGI_APPLICATION = "ocrsite.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- database -------------------------------------------------------------
# DATABASE_URL (PostgreSQL in tests and production); else SQLite under var/ (`make run`).
DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
        # 0: under ASGI every request runs on a thread of its own, and persistent per-thread
        # connections piled up until PostgreSQL refused clients (20 concurrent API clients).
        conn_max_age=env_int("DB_CONN_MAX_AGE", 0),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Django's own SQLite backend with its documented options. Web, worker, scheduler and the
    # channel layer share the file. WAL: readers never wait for the writer, and synchronous=NORMAL
    # is crash-safe in WAL and skips an fsync a commit. IMMEDIATE: a transaction takes the write
    # lock at BEGIN, as a deferred one that reads, then writes cannot wait for it (and dedup's
    # select_for_update is a no-op on SQLite). timeout: how long a writer waits for the lock.
    # PostgreSQL is the database for concurrent use (docs/operations.md).
    DATABASES["default"].setdefault("OPTIONS", {}).update({
        "timeout": 30, "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    })
    # SQLite creates the file but not its folder; a fresh checkout has no var/.
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
elif env_int("DB_POOL_SIZE", 0):
    # Django's connection pool (psycopg_pool), for the web server's processes: under ASGI each
    # request runs on a thread of its own, and a new connection per request cost 4-5 ms. Not for
    # the worker cluster: a pool's connections and threads do not survive django-q2's fork.
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # Django's pool requires it
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {"min_size": 1, "max_size": env_int("DB_POOL_SIZE", 0)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

# --- files ----------------------------------------------------------------
STORAGES = {
    "default": DEFAULT_STORAGE,  # noqa: F405
    # Manifest storage needs collectstatic; DEBUG serves straight from the finders.
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
# --- OCR: ocrsite/settings/ocr.py -------------------------------------------
from ocrsite.settings.ocr import *  # noqa: E402,F401,F403

# --- queue (django-q2) ----------------------------------------------------
REDIS_URL = env_str("REDIS_URL")
# Every Redis client gives up on a host that does not answer (one that drops packets would hang
# requests otherwise): seconds to connect, and to wait for an answer. The channel layer's own
# blocking reads last up to 5 s, so its reads may take longer.
REDIS_TIMEOUTS = {"socket_connect_timeout": 2, "socket_timeout": 5}
Q_BROKER = env_str("Q_BROKER", "orm")  # "orm" (default) or "redis"
if Q_BROKER not in ("orm", "redis"):
    raise ImproperlyConfigured(f"Q_BROKER must be 'orm' or 'redis', got {Q_BROKER!r}.")
if Q_BROKER == "redis" and not REDIS_URL:
    raise ImproperlyConfigured("Q_BROKER=redis needs REDIS_URL.")
Q_TIMEOUT = env_int("Q_TIMEOUT", 600)
Q_RETRY = env_int("Q_RETRY", 720)
if not OCR_TASK_BUDGET_SECONDS < Q_TIMEOUT < Q_RETRY:
    # django-q2 delivers at least once: a task still running when `retry`
    # passes is handed out again, and `timeout` kills it. Keep the order
    # budget < timeout < retry or long jobs get killed or run twice at once.
    raise ImproperlyConfigured(
        f"Need OCR_TASK_BUDGET_SECONDS ({OCR_TASK_BUDGET_SECONDS}) < Q_TIMEOUT ({Q_TIMEOUT}) < Q_RETRY ({Q_RETRY})."
    )

_q_common = {
    # Hard limit per task. A task processes pages for OCR_TASK_BUDGET_SECONDS
    # then hands over, so this only has to cover one budget plus one slow page
    # (and engine start-up on the first task of a fresh worker).
    "timeout": Q_TIMEOUT,
    # Redelivery after a lost ack (worker killed). Above `timeout` so a task
    # that is merely slow is never handed to a second worker while it runs.
    "retry": Q_RETRY,
    # Delivery attempts per queued task; unlimited (0) would loop forever on a
    # task that kills its worker. Jobs have their own bounded attempts on top.
    "max_attempts": 2,
    # A task that raised is recorded as failed and not redelivered: job-level
    # recovery (requeue_stale, with backoff and bounded attempts) owns retries.
    "ack_failures": True,
    # A worker past max_rss (KiB) is replaced, returning fragmented memory to the OS. Each recycle makes
    # the next job reload its models (2.7 s, against 0.7 s a page): 500 tasks, django-q2's default.
    "recycle": env_int("Q_RECYCLE", 500),
    "max_rss": env_int("Q_MAX_RSS_KB", 4 * 1024 * 1024),
    # Tasks the cluster pulls ahead of its workers (default 2): OCR is CPU/GPU
    # bound, and a task prefetched here waits behind this cluster's long jobs
    # while another cluster's idle worker could have taken it.
    "queue_limit": env_int("Q_QUEUE_LIMIT", 2),
    "bulk": 1,
    "save_limit": env_int("Q_SAVE_LIMIT", 500),
    "catch_up": False,
    "label": "Task queue",
}
if Q_BROKER == "redis":
    # redis-py reads the time-outs from the URL's query (django-q2 connects with redis.from_url).
    _q_common["redis"] = f"{REDIS_URL}{'&' if '?' in REDIS_URL else '?'}" + "&".join(
        f"{name}={value}" for name, value in REDIS_TIMEOUTS.items())
else:
    # ORM broker: the queue entry is a row in the same database, written in the same transaction
    # as the Job row, so neither can exist without the other. An idle cluster looks for new tasks
    # every Q_POLL seconds: one indexed read, and a job waits half that on average before it starts.
    _q_common["orm"] = "default"
    _q_common["poll"] = env_float("Q_POLL", 0.05)

# Added to the qcluster's nice value before it forks workers: OCR fills every core, and the web
# must still answer quickly (20 submits at once during OCR: p95 190 ms at 19, 260 at 10).
Q_WORKER_NICE = env_int("Q_WORKER_NICE", 19)
# Workers that fill the usable cores exactly each pin their engine's thread to cores of their own
# (jobs.worker). Off for a host whose cores other services share: pinned, a worker cannot move to
# the core that they leave free.
OCR_PIN_WORKERS = env_bool("OCR_PIN_WORKERS", True)

Q_CLUSTER = {
    # `name` is the default cluster (no Q_CLUSTER_NAME in the environment) and
    # the signing salt shared by all clusters of this site.
    "name": "cpu",
    # Workers per cluster: the CPU engine already uses OCR_CPU_THREADS threads,
    # and each worker holds its own models; 1 fits a 2-core machine.
    "workers": env_int("Q_WORKERS", 1),
    **_q_common,
    # Start the GPU cluster with `Q_CLUSTER_NAME=gpu python manage.py qcluster`
    # (django-q2 multi-queue); tasks reach it via async_task(..., cluster="gpu").
    "ALT_CLUSTERS": {
        "gpu": {"workers": env_int("Q_GPU_WORKERS", 1)},
        # The fields stage (jobs.services.extraction): `Q_CLUSTER_NAME=llm python manage.py qcluster`.
        # Its own queue, so OCR workers never wait on a model and each stage scales on its own.
        # Its work waits on an LLM server, not on cores: no nice value or pinning matters here.
        "llm": {"workers": env_int("Q_LLM_WORKERS", 1)},
    },
}

# --- channels ---------------------------------------------------------------
# Progress events cross processes: a qcluster worker publishes, the ASGI web
# process forwards them to browsers. The layer must therefore be shared by both
# (an in-memory layer would silently drop every worker event).
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # Sites (or test runs) sharing one Redis keep apart by prefix.
            "CONFIG": {"hosts": [{"address": REDIS_URL, **REDIS_TIMEOUTS, "socket_timeout": 10}],
                       "prefix": env_str("CHANNEL_LAYER_PREFIX", "asgi")},
        }
    }
elif DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Embedded default (no servers): channels-lite keeps messages in a table of
    # the same SQLite file; the web process polls it every polling_interval (an
    # event reaches an open WebSocket that much later at worst).
    # It goes through the Django connection, so the WAL/IMMEDIATE/timeout
    # options above apply to it too. expiry: an event unread for a minute is stale.
    INSTALLED_APPS.append("channels_lite")
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_lite.layers.core.SQLiteChannelLayer",
            "CONFIG": {"database": "default", "expiry": 60, "polling_interval": 0.05},
        }
    }
else:
    # channels-lite needs SQLite; a PostgreSQL deployment runs Redis anyway.
    raise ImproperlyConfigured("Set REDIS_URL: with a PostgreSQL DATABASE_URL the channel layer is Redis.")

# --- cache ------------------------------------------------------------------
# Shared by every process (/metrics' worker status; rate-limit budgets with Redis). Redis when there
# is one; else files in shared memory (CACHE_DIR; ocrsite.env.memory_dir) or beside the database.
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
                          "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", ""), "OPTIONS": REDIS_TIMEOUTS}}
else:
    DATABASE_FILE = Path(DATABASES["default"]["NAME"])
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": env_str(
        "CACHE_DIR", str(memory_dir(f"{SECRET_KEY}{DATABASE_FILE}", DATABASE_FILE.parent / "cache")))}}

# --- REST framework -----------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "jobs.api.auth.RateLimitedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["jobs.api.auth.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "jobs.api.exceptions.exception_handler",
    # DRF's, with JSON nested too deeply for Python a 400 too.
    "DEFAULT_PARSER_CLASSES": ["jobs.api.parsers.JSONParser", "rest_framework.parsers.FormParser",
                               "rest_framework.parsers.MultiPartParser"],
    # Anonymous calls are counted per address by jobs.api.auth (DRF throttles only after refusing).
    "DEFAULT_THROTTLE_CLASSES": ["jobs.api.throttles.UserRateThrottle"],
    # The client's address is REMOTE_ADDR: the server puts the forwarded one there, from the
    # proxies it trusts only (uvicorn --forwarded-allow-ips), so DRF reads no header itself.
    "NUM_PROXIES": 0,
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"]
    + (["rest_framework.renderers.BrowsableAPIRenderer"] if DEBUG else []),
}
# Requests per period, by scope (jobs/api/throttles.py). "submit": new jobs per user; a batch spends one per
# member at once, so its N must hold the largest batch (OCR_BATCH_MAX_MEMBERS) or such a batch never fits.
API_THROTTLE_RATES = {"user": env_str("API_THROTTLE_USER", "1200/min"), "anon": env_str("API_THROTTLE_ANON", "60/min"),
                      "submit": env_str("API_THROTTLE_SUBMIT", "200/min")}
# Each client's budget (jobs/api/budgets.py): in the cache where there is Redis, else a SQLite file there.
API_RATE_BUDGETS_FILE = "" if REDIS_URL else str(Path(CACHES["default"]["LOCATION"]) / "rate-budgets.sqlite3")
# Per-user quotas; a user's own values (admin, "User settings") override these.
# 0 means no limit. Exceeding one: 429 {"code": "quota_exceeded"}.
OCR_QUOTA_PAGES_PER_DAY = env_int("OCR_QUOTA_PAGES_PER_DAY", 5000)
OCR_QUOTA_STORAGE_BYTES = env_int("OCR_QUOTA_STORAGE_BYTES", 10 * 1024**3)
# file_url jobs a user may have queued or running at once: their pages are unknown until a worker has
# downloaded the file, so the pages quota cannot hold them back at submit. 0: no limit.
OCR_MAX_QUEUED_URL_JOBS = env_int("OCR_MAX_QUEUED_URL_JOBS", 20)
# Days finished jobs are kept (jobs.services.retention); empty or 0: kept. A user's own value (admin,
# "User settings") overrides it. KEEP_RESULTS: remove only the original and page images, keep the result.
OCR_RETENTION_DAYS = env_int("OCR_RETENTION_DAYS", 0)
OCR_RETENTION_KEEP_RESULTS = env_bool("OCR_RETENTION_KEEP_RESULTS", False)
SPECTACULAR_SETTINGS = {
    "TITLE": "OCR platform API",
    "DESCRIPTION": "Submit PDFs and images for OCR, follow the job, fetch normalized results and exports.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",  # Swagger UI assets come from drf-spectacular-sidecar: no CDN
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# /metrics needs "Authorization: Bearer <METRICS_TOKEN>" when set. Without one it is public, which a
# deployment must say it wants (METRICS_PUBLIC=true): a forgotten token must not leave it open. The
# embedded default is one machine's site, served on loopback by `make run` (which turns this off when
# HOST opens it to others).
METRICS_TOKEN = env_str("METRICS_TOKEN", "")
METRICS_PUBLIC = env_bool("METRICS_PUBLIC", EMBEDDED)
if not METRICS_TOKEN and not METRICS_PUBLIC and not DEBUG:
    raise ImproperlyConfigured("METRICS_TOKEN is not set, so /metrics would be public. Set METRICS_TOKEN (Prometheus "
                               "sends it as a Bearer token), or METRICS_PUBLIC=true to serve /metrics to anyone.")
# Scrapes within this many seconds share one collection: the figures are
# full-table aggregates, and /metrics may be reachable by more than Prometheus.
METRICS_CACHE_SECONDS = env_float("METRICS_CACHE_SECONDS", 5.0)

# --- security (production) ------------------------------------------------
if HTTPS:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    # Probes inside the cluster speak plain HTTP to the container.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^livez$", r"^metrics$"]
    SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", True)
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}
