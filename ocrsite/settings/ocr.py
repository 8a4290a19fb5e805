"""The OCR settings (engine, limits, jobs, webhooks): part of ``ocrsite.settings.base``, which imports them.

Every ``OCR_*`` name is listed with its meaning in ``docs/operations.md``.
"""

from __future__ import annotations

from pathlib import Path

from ocrsite.env import env_bool, env_float, env_int, env_str

# Where users reach this site; used for links printed by commands and sent in webhooks.
OCR_PUBLIC_URL = env_str("OCR_PUBLIC_URL", "http://localhost:8000").rstrip("/")
# Offline model pack (python -m ocr_engine models build); without one PaddleOCR downloads its models.
OCR_MODELS_DIR = Path(env_str("OCR_MODELS_DIR", str(Path(__file__).resolve().parents[2] / "models")))
OCR_CPU_THREADS = env_int("OCR_CPU_THREADS", 1 if env_int("Q_WORKERS", 1) > 1 else 2)
OCR_BACKEND = env_str("OCR_BACKEND", "onnxruntime")
# "openvino" runs the models on onnxruntime's OpenVINO provider (onnxruntime-openvino installed in place of onnxruntime).
OCR_INFERENCE = env_str("OCR_INFERENCE", "onnxruntime")
OCR_MEMORY_ARENA = env_bool("OCR_MEMORY_ARENA", True)
OCR_DEVICE = env_str("OCR_DEVICE", "cpu")  # "gpu" on GPU worker images
OCR_MAX_UPLOAD_BYTES = env_int("OCR_MAX_UPLOAD_BYTES", 50 * 1024 * 1024)
# The largest body of any other request (ocrsite.body_limit); larger ones get 413 before they are read.
OCR_MAX_BODY_BYTES = env_int("OCR_MAX_BODY_BYTES", 1024 * 1024)
OCR_MAX_PAGES = env_int("OCR_MAX_PAGES", 500)
# Files in one post of the upload form (the API takes one a request); each is a job of the submit rate.
OCR_UPLOAD_MAX_FILES = env_int("OCR_UPLOAD_MAX_FILES", 20)
OCR_MAX_PIXELS = env_int("OCR_MAX_PIXELS", 100_000_000)
# True when a `gpu` cluster is deployed: every pipeline runs there and GPU-only ones are accepted.
OCR_GPU_CLUSTER = env_bool("OCR_GPU_CLUSTER", False)
# Same file + same options + same user within this window returns the existing job.
OCR_DEDUP_WINDOW_SECONDS = env_int("OCR_DEDUP_WINDOW_SECONDS", 24 * 3600)
# GET /result inlines the normalized document up to this size, else links.
OCR_INLINE_RESULT_MAX_BYTES = env_int("OCR_INLINE_RESULT_MAX_BYTES", 1_000_000)
# Allow file_url and webhook targets on private/loopback/link-local addresses (intranet, tests).
OCR_ALLOW_PRIVATE_URLS = env_bool("OCR_ALLOW_PRIVATE_URLS", False)
OCR_URL_FETCH_TIMEOUT = env_float("OCR_URL_FETCH_TIMEOUT", 30.0)
# Webhooks (docs/webhooks.md): retry n waits BACKOFF x 2^(n-1) s (10, 20, 40, ...), rounded up to the 30 s tick.
OCR_WEBHOOK_MAX_ATTEMPTS = env_int("OCR_WEBHOOK_MAX_ATTEMPTS", 6)
OCR_WEBHOOK_BACKOFF_SECONDS = env_float("OCR_WEBHOOK_BACKOFF_SECONDS", 10.0)
OCR_WEBHOOK_TIMEOUT_SECONDS = env_float("OCR_WEBHOOK_TIMEOUT_SECONDS", 10.0)
# The fields stage's LLM (jobs/llm.py, docs/extraction.md): any OpenAI-compatible chat API, its base URL up
# to /v1; empty: every type is extracted by `rules`. ATTEMPTS x TIMEOUT plus the backoffs stays below Q_TIMEOUT.
OCR_LLM_URL = env_str("OCR_LLM_URL", "").rstrip("/")
OCR_LLM_MODEL = env_str("OCR_LLM_MODEL", "")
OCR_LLM_API_KEY = env_str("OCR_LLM_API_KEY", "")
OCR_LLM_SAMPLES = env_int("OCR_LLM_SAMPLES", 1)  # 2: a second, warmer answer whose agreement feeds confidence
OCR_LLM_TIMEOUT_SECONDS = env_float("OCR_LLM_TIMEOUT_SECONDS", 60.0)
OCR_LLM_ATTEMPTS = env_int("OCR_LLM_ATTEMPTS", 3)
OCR_LLM_BACKOFF_SECONDS = env_float("OCR_LLM_BACKOFF_SECONDS", 2.0)
# json_schema (OpenAI, vLLM, Ollama, llama.cpp's llama-server) or json_object (llama-cpp-python's server).
OCR_LLM_RESPONSE_FORMAT = env_str("OCR_LLM_RESPONSE_FORMAT", "json_schema")
OCR_LLM_MAX_TOKENS = env_int("OCR_LLM_MAX_TOKENS", 2048)
if OCR_LLM_SAMPLES not in (1, 2) or OCR_LLM_RESPONSE_FORMAT not in ("json_schema", "json_object"):
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("OCR_LLM_SAMPLES is 1 or 2 and OCR_LLM_RESPONSE_FORMAT json_schema or json_object.")
# A task reads pages for this long, then re-enqueues the job: every task stays far below Q_TIMEOUT.
OCR_TASK_BUDGET_SECONDS = env_int("OCR_TASK_BUDGET_SECONDS", 120)
# A running job whose heartbeat (every page boundary) is older than this was abandoned by a dead
# worker and is picked up again: it must exceed the slowest page plus engine start-up.
OCR_LEASE_SECONDS = env_int("OCR_LEASE_SECONDS", 300)
# How long a worker retries a file store that does not answer (an S3 bucket down, STORAGE_URL) before it
# fails the job with storage_unavailable (retryable); below the lease, so that nobody takes the job meanwhile.
OCR_STORE_RETRY_SECONDS = env_int("OCR_STORE_RETRY_SECONDS", 60)
# Touched every few seconds by each qcluster's main process while its cluster takes work (jobs.cluster_watch):
# the workers' liveness probe.
OCR_CLUSTER_ALIVE_FILE = env_str("OCR_CLUSTER_ALIVE_FILE", str(Path(__file__).resolve().parents[2] / "var" / "cluster.alive"))
# Workers besides the lease holder that may share a job's pages (more with several worker pods),
# while each gets at least OCR_SHARE_MIN_PAGES pages.
OCR_JOB_HELPERS = env_int("OCR_JOB_HELPERS", env_int("Q_WORKERS", 1) - 1)
OCR_SHARE_MIN_PAGES = env_int("OCR_SHARE_MIN_PAGES", 4)
OCR_REREAD_WAIT_MS = env_int("OCR_REREAD_WAIT_MS", 10_000)
# Longer jobs' exports are built on a worker (jobs.services.exports); docs/operations.md has every OCR_* setting.
OCR_EXPORT_INLINE_MAX_PAGES = env_int("OCR_EXPORT_INLINE_MAX_PAGES", 20)
OCR_EXPORT_WAIT_SECONDS = env_float("OCR_EXPORT_WAIT_SECONDS", 20.0)
# Batches (jobs.services.archives): a ZIP's members are measured as they are unpacked, never by its headers.
OCR_BATCH_MAX_MEMBERS = env_int("OCR_BATCH_MAX_MEMBERS", 200)
OCR_BATCH_MAX_UNCOMPRESSED_BYTES = env_int("OCR_BATCH_MAX_UNCOMPRESSED_BYTES", 1024 * 1024 * 1024)
OCR_BATCH_MAX_RATIO = env_int("OCR_BATCH_MAX_RATIO", 200)
# A job must end within base + per_page x pages, else it fails with `timeout`.
OCR_JOB_TIMEOUT_BASE_SECONDS = env_int("OCR_JOB_TIMEOUT_BASE_SECONDS", 600)
OCR_JOB_TIMEOUT_PER_PAGE_SECONDS = env_int("OCR_JOB_TIMEOUT_PER_PAGE_SECONDS", 120)
OCR_JOB_MAX_ATTEMPTS = env_int("OCR_JOB_MAX_ATTEMPTS", 3)
OCR_THUMBNAIL_SIZE = env_int("OCR_THUMBNAIL_SIZE", 320)
