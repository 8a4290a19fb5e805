"""The fields stage's metrics (jobs.services.extraction), beside the OCR stage's in /metrics.

The OCR stage has ``ocr_queue_depth`` by cluster and ``ocr_page_seconds``; the fields stage, on its own
``llm`` cluster, has its queue (stages waiting for a worker), its stages by status and backend, and its
latency from queued to answered. Computed from ``JobFields`` rows at scrape time, as every metric is.
"""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, Sum
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.utils import floatToGoString

from jobs.models import DocumentType, JobFields

# Rules read a page in milliseconds, a local LLM in seconds to minutes: 0.1 s to 10 min.
FIELDS_SECONDS_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600)
BACKENDS = DocumentType.Backend.RULES, DocumentType.Backend.LLM


def fields_metrics():
    yield fields_queue_depth()
    yield fields_stages()
    yield fields_seconds()


def fields_queue_depth() -> GaugeMetricFamily:
    family = GaugeMetricFamily("ocr_fields_queue_depth",
                               "Fields stages waiting for a worker of the llm cluster (pending, not started).")
    family.add_metric([], JobFields.objects.filter(status=JobFields.Status.PENDING, started_at__isnull=True).count())
    return family


def fields_stages() -> GaugeMetricFamily:
    family = GaugeMetricFamily("ocr_fields_stages", "Jobs' fields stages stored, by status and backend "
                               "(empty: not read yet, or skipped).", labels=["status", "backend"])
    rows = JobFields.objects.values("status", "backend").annotate(n=Count("pk")).order_by()
    counts = {(row["status"], row["backend"]): row["n"] for row in rows}
    for status in JobFields.Status.values:
        for backend in ("", *BACKENDS):
            family.add_metric([status, backend], counts.get((status, backend), 0))
    return family


def fields_seconds() -> HistogramMetricFamily:
    """Seconds from a stage's queueing (its OCR job's end) to its answer, by backend and outcome."""
    family = HistogramMetricFamily("ocr_fields_seconds", "Time from OCR's end to the fields stage's answer "
                                   "(queue wait, classification, extraction).", labels=["backend", "status"])
    took = ExpressionWrapper(F("finished_at") - F("queued_at"), output_field=DurationField())
    buckets = {f"le_{i}": Count("pk", filter=Q(took__lte=timedelta(seconds=bound)))
               for i, bound in enumerate(FIELDS_SECONDS_BUCKETS)}
    rows = (JobFields.objects.filter(status__in=(JobFields.Status.SUCCEEDED, JobFields.Status.FAILED),
                                     finished_at__isnull=False, queued_at__isnull=False)
            .annotate(took=took).values("backend", "status")
            .annotate(count=Count("pk"), total=Sum("took"), **buckets).order_by())
    for row in rows:
        cumulative = [(floatToGoString(bound), row[f"le_{i}"]) for i, bound in enumerate(FIELDS_SECONDS_BUCKETS)]
        total = row["total"].total_seconds() if row["total"] else 0.0
        family.add_metric([row["backend"], row["status"]], [*cumulative, ("+Inf", row["count"])], sum_value=total)
    return family
