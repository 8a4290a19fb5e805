"""Prometheus metrics at /metrics, computed from the database when Prometheus scrapes.

Why from the database and not from counters in memory: the work happens in
other processes (qcluster workers, often in other pods, forked and recycled by
django-q2) than the web process Prometheus scrapes, and there may be several
web replicas. Every value below is an aggregate query over the rows the
services write, so any web replica returns the same complete answer with no
shared state, multiprocess directory or worker-side exporter. That includes
the page-latency histogram: its buckets are counted from ``PageResult.timings``
at scrape time, one aggregate query for all buckets.

Counters (``*_total`` and the histogram) count stored rows. Deleting jobs
(the API's DELETE, retention) lowers them, which Prometheus reads as a counter
reset: ``rate()`` stays right outside the window that contains the deletion.
Scrape one replica (or aggregate with ``max``), not the sum of all replicas.
"""

from __future__ import annotations

import hmac
import threading
import time

from django.conf import settings
from django.core.cache import caches
from django.db.models import Count, F, FloatField, Q, Sum, Value
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Coalesce
from django.http import HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django_q.brokers import get_broker
from django_q.conf import Conf
from django_q.status import Stat
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.utils import floatToGoString

from jobs.models import Job, PageResult, WebhookDelivery
from jobs.observability.fields_metrics import fields_metrics
from ocr_engine import pipelines, stages

# Seconds from rendering a page to storing its images. OCR on CPU takes
# seconds per page, VL on GPU ~15 s, so the buckets span 0.25 s to 5 min.
PAGE_SECONDS_BUCKETS = (0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300)
# The stages jobs.services.processing times for each page; their sum is the page's latency.
PAGE_STAGES = (*stages.ENGINE_STAGES, stages.STORE_IMAGES)
# Django caches that live inside one process: django-q2's cluster status
# written there by a worker is invisible to the web process.
_PROCESS_LOCAL_CACHES = ("LocMemCache", "DummyCache")


class DatabaseCollector:
    """A prometheus_client custom collector: every ``collect()`` queries the database afresh."""

    def collect(self):
        yield queue_depth()
        yield jobs_by_status()
        yield page_seconds()
        yield pages_processed()
        yield failures()
        yield webhook_delivery_failures()
        yield from fields_metrics()  # the fields stage after OCR, on the llm cluster
        workers = worker_count()
        if workers is not None:
            yield workers


def queue_depth() -> GaugeMetricFamily:
    family = GaugeMetricFamily(
        "ocr_queue_depth", "Jobs waiting for a worker (queued, or running between two task slices), by cluster.",
        labels=["cluster"])
    waiting = (Job.objects.filter(Q(status=Job.Status.QUEUED) | Q(status=Job.Status.RUNNING, heartbeat_at__isnull=True))
               .values("cluster").annotate(n=Count("id")))
    counts = {row["cluster"]: row["n"] for row in waiting}
    for cluster in Job.Cluster.values:  # every cluster, so an empty queue reads 0 rather than no data
        family.add_metric([cluster], counts.get(cluster, 0))
    return family


def jobs_by_status() -> GaugeMetricFamily:
    family = GaugeMetricFamily("ocr_jobs", "Jobs stored, by status, pipeline and cluster.",
                               labels=["status", "pipeline", "cluster"])
    rows = Job.objects.values("status", "pipeline", "cluster").annotate(n=Count("id")).order_by()
    counts = {(r["status"], r["pipeline"], r["cluster"]): r["n"] for r in rows}
    for status in Job.Status.values:
        for pipeline in pipelines.names():
            for cluster in Job.Cluster.values:
                family.add_metric([status, pipeline, cluster], counts.get((status, pipeline, cluster), 0))
    return family


def page_seconds() -> HistogramMetricFamily:
    """Latency of succeeded pages by pipeline and device (the job's engine: cpu, gpu, gpu:N)."""
    family = HistogramMetricFamily("ocr_page_seconds", "Processing time per page (render, OCR, normalize, store).",
                                   labels=["pipeline", "device"])
    seconds = sum((Coalesce(Cast(KeyTextTransform(stage, "timings"), FloatField()), Value(0.0))
                   for stage in PAGE_STAGES), Value(0.0))
    buckets = {f"le_{i}": Count("id", filter=Q(seconds__lte=bound)) for i, bound in enumerate(PAGE_SECONDS_BUCKETS)}
    rows = (PageResult.objects.filter(status=PageResult.Status.SUCCEEDED)
            .annotate(seconds=seconds, pipeline=F("job__pipeline"), device=KeyTextTransform("device", "job__engine"))
            .values("pipeline", "device")
            .annotate(count=Count("id"), total=Sum("seconds"), **buckets)
            .order_by())
    for row in rows:
        cumulative = [(floatToGoString(bound), row[f"le_{i}"]) for i, bound in enumerate(PAGE_SECONDS_BUCKETS)]
        family.add_metric([row["pipeline"], row["device"] or "unknown"], [*cumulative, ("+Inf", row["count"])],
                          sum_value=row["total"] or 0.0)
    return family


def pages_processed() -> CounterMetricFamily:
    family = CounterMetricFamily("ocr_pages_processed", "Pages with a stored result, by pipeline and outcome.",
                                 labels=["pipeline", "status"])
    rows = PageResult.objects.values("job__pipeline", "status").annotate(n=Count("id")).order_by()
    counts = {(r["job__pipeline"], r["status"]): r["n"] for r in rows}
    for pipeline in pipelines.names():
        for status in PageResult.Status.values:
            family.add_metric([pipeline, status], counts.get((pipeline, status), 0))
    return family


def failures() -> GaugeMetricFamily:
    """Failed jobs and failed pages now stored, by error code (a retry clears them, hence a gauge)."""
    family = GaugeMetricFamily("ocr_failures", "Failed jobs and failed pages, by error code.",
                               labels=["kind", "code"])
    for kind, model, failed in (("job", Job, Job.Status.FAILED), ("page", PageResult, PageResult.Status.FAILED)):
        rows = model.objects.filter(status=failed).values("error_code").annotate(n=Count("id")).order_by()
        for row in rows:
            family.add_metric([kind, row["error_code"] or "unknown"], row["n"])
    return family


def webhook_delivery_failures() -> CounterMetricFamily:
    family = CounterMetricFamily("ocr_webhook_delivery_failures",
                                 "Webhook delivery attempts that failed (error, timeout or non-2xx), by event.",
                                 labels=["event"])
    rows = (WebhookDelivery.objects.filter(status=WebhookDelivery.Status.FAILED)
            .values("event").annotate(n=Count("id")).order_by())
    counts = {row["event"]: row["n"] for row in rows}
    for event in WebhookDelivery.Event.values:
        family.add_metric([event], counts.get(event, 0))
    return family


def worker_count() -> GaugeMetricFamily | None:
    """Worker processes of every running qcluster, from the status django-q2 saves every half second.

    None (metric left out) when that status lives in a per-process cache,
    where the web process could only ever report 0.
    """
    if type(caches[Conf.CACHE]).__name__ in _PROCESS_LOCAL_CACHES:
        return None
    clusters = [stat for stat in Stat.get_all(broker=get_broker()) if stat.status != Conf.STOPPED]
    family = GaugeMetricFamily("ocr_workers", "qcluster worker processes alive (all clusters).")
    family.add_metric([], sum(len(stat.workers) for stat in clusters))
    return family


REGISTRY = CollectorRegistry()
REGISTRY.register(DatabaseCollector())


_last_scrape: tuple[float, bytes] = (float("-inf"), b"")
_scrape_lock = threading.Lock()


@never_cache
@require_GET
def metrics(request):
    token = settings.METRICS_TOKEN
    if token and not hmac.compare_digest(request.headers.get("Authorization", ""), f"Bearer {token}"):
        response = JsonResponse({"code": "not_authenticated", "detail": "Send Authorization: Bearer <METRICS_TOKEN>."},
                                status=401)
        response["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return response
    global _last_scrape
    with _scrape_lock:  # one collection at a time; the others reuse it
        taken_at, body = _last_scrape
        if time.monotonic() - taken_at >= settings.METRICS_CACHE_SECONDS:
            body = generate_latest(REGISTRY)
            _last_scrape = (time.monotonic(), body)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
