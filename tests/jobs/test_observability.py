"""/metrics, /healthz, /readyz and the KEDA query, against the real PostgreSQL, Redis and model pack."""

from __future__ import annotations

import socket
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from jobs.models import Job, PageResult, WebhookDelivery
from jobs.observability.keda import GPU_QUEUE_DEPTH_SQL
from tests.jobs.factories import JobFactory, PageResultFactory

pytestmark = pytest.mark.django_db


def scrape(client) -> dict[str, dict[frozenset, float]]:
    """GET /metrics and parse it the way Prometheus does: {sample name: {labels: value}}."""
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=")  # Prometheus text format
    samples: dict[str, dict[frozenset, float]] = {}
    for family in text_string_to_metric_families(response.content.decode()):
        for sample in family.samples:
            samples.setdefault(sample.name, {})[frozenset(sample.labels.items())] = sample.value
    return samples


def value(samples, name: str, **labels) -> float:
    return samples[name][frozenset(labels.items())]


def timings(total: float) -> dict[str, float]:
    """Stage timings as jobs.services.processing records them, adding up to ``total``."""
    return {"render": 0.1 * total, "ocr": 0.7 * total, "normalize": 0.1 * total, "store_images": 0.1 * total}


def test_metrics_report_queue_jobs_page_latency_failures_and_webhooks(client):
    JobFactory.create_batch(2, cluster=Job.Cluster.GPU, pipeline=Job.Pipeline.VL)  # queued
    JobFactory(cluster=Job.Cluster.CPU)  # queued
    JobFactory(cluster=Job.Cluster.CPU, status=Job.Status.RUNNING, heartbeat_at=None)  # between two slices
    JobFactory(cluster=Job.Cluster.CPU, status=Job.Status.RUNNING, worker_id="w:1",
               heartbeat_at="2030-01-01T00:00:00Z")  # held by a worker: not waiting

    cpu_job = JobFactory(status=Job.Status.SUCCEEDED, engine={"device": "cpu"})
    PageResultFactory(job=cpu_job, page_number=1, timings=timings(1.5))
    PageResultFactory(job=cpu_job, page_number=2, timings=timings(4.0))
    gpu_job = JobFactory(pipeline=Job.Pipeline.STRUCTURE, cluster=Job.Cluster.GPU, status=Job.Status.FAILED,
                         error_code="pages_failed", engine={"device": "gpu:0"})
    PageResultFactory(job=gpu_job, page_number=1, timings=timings(12.0))
    PageResultFactory(job=gpu_job, page_number=2, status=PageResult.Status.FAILED, error_code="recognition_failed")
    for attempt, status in ((1, WebhookDelivery.Status.FAILED), (2, WebhookDelivery.Status.FAILED),
                            (3, WebhookDelivery.Status.DELIVERED)):
        WebhookDelivery.objects.create(job=gpu_job, event=WebhookDelivery.Event.JOB_FAILED, attempt=attempt,
                                       url="https://hooks.example.com/ocr", status=status)

    samples = scrape(client)

    assert value(samples, "ocr_queue_depth", cluster="gpu") == 2
    assert value(samples, "ocr_queue_depth", cluster="cpu") == 2
    assert value(samples, "ocr_jobs", status="queued", pipeline="vl", cluster="gpu") == 2
    assert value(samples, "ocr_jobs", status="running", pipeline="ocr", cluster="cpu") == 2
    assert value(samples, "ocr_jobs", status="succeeded", pipeline="ocr", cluster="cpu") == 1
    assert value(samples, "ocr_jobs", status="failed", pipeline="structure", cluster="gpu") == 1
    assert value(samples, "ocr_jobs", status="canceled", pipeline="ocr", cluster="cpu") == 0

    cpu = {"pipeline": "ocr", "device": "cpu"}
    assert value(samples, "ocr_page_seconds_bucket", le="1.0", **cpu) == 0
    assert value(samples, "ocr_page_seconds_bucket", le="2.0", **cpu) == 1
    assert value(samples, "ocr_page_seconds_bucket", le="5.0", **cpu) == 2
    assert value(samples, "ocr_page_seconds_bucket", le="+Inf", **cpu) == 2
    assert value(samples, "ocr_page_seconds_count", **cpu) == 2
    assert value(samples, "ocr_page_seconds_sum", **cpu) == pytest.approx(5.5)
    gpu = {"pipeline": "structure", "device": "gpu:0"}
    assert value(samples, "ocr_page_seconds_bucket", le="10.0", **gpu) == 0
    assert value(samples, "ocr_page_seconds_bucket", le="20.0", **gpu) == 1
    assert value(samples, "ocr_page_seconds_count", **gpu) == 1  # the failed page has no latency

    assert value(samples, "ocr_pages_processed_total", pipeline="ocr", status="succeeded") == 2
    assert value(samples, "ocr_pages_processed_total", pipeline="structure", status="succeeded") == 1
    assert value(samples, "ocr_pages_processed_total", pipeline="structure", status="failed") == 1
    assert value(samples, "ocr_failures", kind="job", code="pages_failed") == 1
    assert value(samples, "ocr_failures", kind="page", code="recognition_failed") == 1
    assert value(samples, "ocr_webhook_delivery_failures_total", event="job.failed") == 2
    assert value(samples, "ocr_webhook_delivery_failures_total", event="job.succeeded") == 0
    # No qcluster runs in this test; the status django-q2 shares through Redis says so.
    assert value(samples, "ocr_workers") == 0


def test_metrics_follow_the_database(client):
    job = JobFactory()
    assert value(scrape(client), "ocr_queue_depth", cluster="cpu") == 1
    Job.objects.filter(pk=job.pk).update(status=Job.Status.CANCELED)
    samples = scrape(client)
    assert value(samples, "ocr_queue_depth", cluster="cpu") == 0
    assert value(samples, "ocr_jobs", status="canceled", pipeline="ocr", cluster="cpu") == 1


@pytest.mark.postgresql
def test_healthz_and_readyz_when_everything_is_up(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    response = client.get("/readyz")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "ready"
    assert set(body["checks"]) == {"database", "broker", "channel_layer", "models", "store"}
    assert body["checks"]["store"] == "file system"
    assert body["checks"]["database"] == "postgresql"
    assert body["checks"]["channel_layer"] == "RedisChannelLayer"
    assert "verified" in body["checks"]["models"]


def test_readyz_fails_with_a_damaged_model_pack(client, settings, tmp_path):
    pack = tmp_path / "models"
    pack.mkdir()
    (pack / "manifest.json").write_text('{"format": 1, "models": {}}')
    settings.OCR_MODELS_DIR = pack
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["code"] == "not_ready" and list(body["failed"]) == ["models"]
    assert "model pack" in body["failed"]["models"] and str(pack) not in response.content.decode()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.postgresql
@pytest.mark.django_db(transaction=True)
def test_readyz_is_503_while_the_database_is_unreachable(client):
    db = connections["default"]
    saved = dict(db.settings_dict)
    db.close()
    db.settings_dict.update(HOST="127.0.0.1", PORT=str(closed_port()))
    try:
        assert client.get("/healthz").status_code == 200  # liveness does not depend on the database
        response = client.get("/readyz")
    finally:
        db.close()
        db.settings_dict.update(saved)
    assert response.status_code == 503
    body = response.json()
    assert body["code"] == "not_ready"
    # The ORM broker's queue is a table of the same database.
    assert set(body["failed"]) == {"database", "broker"}
    # What failed, not how: no exception text, host or user.
    assert body["failed"]["database"] == "the database did not answer"
    assert "OperationalError" not in response.content.decode() and "127.0.0.1" not in response.content.decode()
    assert set(body["passed"]) == {"channel_layer", "models", "store"}
    assert client.get("/readyz").status_code == 200  # and ready again once it is back


def test_readyz_stays_200_and_says_degraded_while_the_channel_layer_is_unreachable(client, settings):
    """Live progress is down; the API is not, so the web must stay in service (a readiness probe)."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                                           "CONFIG": {"hosts": [f"redis://127.0.0.1:{closed_port()}/0"]}}}
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json()["status"] == "degraded"
    assert response.json()["degraded"] == {"channel_layer": "the channel layer did not carry a message"}


def test_livez_reports_a_cluster_whose_job_waits_while_none_of_its_jobs_runs(client):
    assert client.get("/livez").json() == {"status": "ok"}
    long_ago = timezone.now() - timedelta(seconds=90)
    JobFactory(cluster=Job.Cluster.CPU, status=Job.Status.QUEUED, enqueued_at=long_ago)
    JobFactory(cluster=Job.Cluster.GPU, pipeline=Job.Pipeline.VL, status=Job.Status.QUEUED,
               enqueued_at=timezone.now())  # just queued: no stall
    response = client.get("/livez")
    assert response.status_code == 503
    assert response.json()["code"] == "cluster_stalled" and list(response.json()["clusters"]) == ["cpu"]
    # A job of the cluster runs (its lease fresh): the waiting one is behind it, not stalled.
    JobFactory(cluster=Job.Cluster.CPU, status=Job.Status.RUNNING, heartbeat_at=timezone.now(), worker_id="w")
    assert client.get("/livez").status_code == 200


def test_keda_query_counts_queued_and_running_gpu_jobs():
    for status in (Job.Status.QUEUED, Job.Status.QUEUED, Job.Status.RUNNING, Job.Status.SUCCEEDED,
                   Job.Status.FAILED, Job.Status.CANCELED):
        JobFactory(cluster=Job.Cluster.GPU, pipeline=Job.Pipeline.VL, status=status)
    JobFactory(cluster=Job.Cluster.CPU, status=Job.Status.QUEUED)
    JobFactory(cluster=Job.Cluster.CPU, status=Job.Status.RUNNING)
    with connection.cursor() as cursor:
        cursor.execute(GPU_QUEUE_DEPTH_SQL)
        assert cursor.fetchall() == [(3,)]


def test_keda_query_is_zero_on_an_empty_queue():
    JobFactory(cluster=Job.Cluster.GPU, status=Job.Status.SUCCEEDED)
    with connection.cursor() as cursor:
        cursor.execute(GPU_QUEUE_DEPTH_SQL)
        assert cursor.fetchone()[0] == 0


def test_metrics_need_the_bearer_token_when_one_is_set(client, settings):
    settings.METRICS_TOKEN = "scrape-secret"
    refused = client.get("/metrics")
    assert refused.status_code == 401 and refused.json()["code"] == "not_authenticated"
    assert client.get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 401
    allowed = client.get("/metrics", HTTP_AUTHORIZATION="Bearer scrape-secret")
    assert allowed.status_code == 200 and b"ocr_jobs" in allowed.content


def test_scrapes_within_the_cache_window_share_one_collection(client, settings, django_assert_max_num_queries):
    settings.METRICS_CACHE_SECONDS = 60
    client.get("/metrics")
    with django_assert_max_num_queries(0):
        assert client.get("/metrics").status_code == 200
