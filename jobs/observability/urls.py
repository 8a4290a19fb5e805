"""Mounted at the site root: /healthz, /readyz, /livez, /metrics (probes and Prometheus expect these paths)."""

from django.urls import path

from jobs.observability import health, metrics

app_name = "observability"

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("livez", health.livez, name="livez"),
    path("metrics", metrics.metrics, name="metrics"),
]
