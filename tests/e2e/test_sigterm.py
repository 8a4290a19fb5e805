"""SIGTERM to a real qcluster mid-job: the page in progress is committed, the job goes back to the queue.

Kubernetes stops a pod by sending SIGTERM to the container's main process only
(here: the qcluster's main process, not its process group), then SIGKILL after
the grace period. The worker must be gone well within it, having lost nothing,
and the job must go on at once on another worker, without waiting for a lease
to expire (that path, kill -9, is tested in test_api_e2e).
"""

from __future__ import annotations

import os
import signal
import time

import pytest
from prometheus_client.parser import text_string_to_metric_families

from jobs.models import Job, PageResult
from jobs.queue import waiting_task_ids
from tests.e2e.conftest import processes_in_group
from tests.e2e.workers import submit, succeeded, wait_for
from tests.ocr_engine import samples

pytestmark = [pytest.mark.e2e, pytest.mark.models, pytest.mark.django_db(transaction=True)]

PAGES = 8
# Far below the k8s grace periods (docker/k8s): one page of the ocr pipeline
# plus django-q2's shutdown, on two shared cores.
STOP_WITHIN_SECONDS = 45


def metric(client, name: str, **labels) -> float:
    text = client.get("/metrics").content.decode()
    return next(s.value for f in text_string_to_metric_families(text) for s in f.samples
                if s.name == name and s.labels == labels)


def workers_in_metrics(client) -> float:
    return metric(client, "ocr_workers")


def wait_until(condition, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def test_sigterm_mid_job_loses_no_page_and_the_job_continues_elsewhere(api_client, client, qcluster):  # noqa: F811
    first = qcluster()
    wait_until(lambda: workers_in_metrics(client) == 1)  # the worker count /metrics reads from django-q2
    job_id = submit(api_client, samples.report_pdf(pages=PAGES, dpi=100).data, "long.pdf", pipeline="ocr")
    wait_for(api_client, job_id, lambda job: job["progress"]["pages_done"] >= 1)

    os.kill(first.pid, signal.SIGTERM)
    sent = time.monotonic()
    first.wait(timeout=STOP_WITHIN_SECONDS)
    stopped_after = time.monotonic() - sent

    job = Job.objects.get(pk=job_id)
    kept = {p.page_number: (p.created_at, p.updated_at) for p in PageResult.objects.filter(job_id=job_id)}
    assert 1 <= len(kept) < PAGES, f"stopped after {stopped_after:.1f} s"
    assert job.pages_done == len(kept)
    # Released, not abandoned: no lease to wait for, and the continuation is already queued.
    assert (job.status, job.worker_id, job.heartbeat_at) == (Job.Status.RUNNING, "", None)
    assert job.queue_task_id in waiting_task_ids(job.cluster)
    wait_until(lambda: workers_in_metrics(client) == 0, timeout=15)

    qcluster()
    done = wait_for(api_client, job_id, succeeded)
    assert done["progress"] == {"pages_done": PAGES, "pages_total": PAGES, "percent": 100.0}
    assert done["attempts"] == 1  # handed over, not recovered from a lost worker
    after = {p.page_number: (p.created_at, p.updated_at) for p in PageResult.objects.filter(job_id=job_id)}
    assert sorted(after) == list(range(1, PAGES + 1))
    assert {n: after[n] for n in kept} == kept  # no finished page was redone

    # /metrics after a real run: every page counted once, each with its measured latency.
    assert metric(client, "ocr_pages_processed_total", pipeline="ocr", status="succeeded") == PAGES
    assert metric(client, "ocr_page_seconds_count", pipeline="ocr", device="cpu") == PAGES
    assert metric(client, "ocr_page_seconds_sum", pipeline="ocr", device="cpu") > 0
    assert metric(client, "ocr_jobs", status="succeeded", pipeline="ocr", cluster="cpu") == 1


def test_sigterm_to_the_whole_process_group_stops_every_process(client, qcluster):  # noqa: F811
    # systemd's default KillMode and `pkill -f qcluster` signal every process at once. django-q2's
    # sentinel dies of it at once, and the main process used to wait for it forever.
    cluster = qcluster()
    # Main process, sentinel, worker, monitor and pusher; then the main process's own handlers, which it
    # installs once it has seen the sentinel start (it looks every 0.1 s).
    wait_until(lambda: len(processes_in_group(cluster.pid)) >= 5 and workers_in_metrics(client) == 1)
    time.sleep(1)

    os.killpg(cluster.pid, signal.SIGTERM)
    cluster.wait(timeout=STOP_WITHIN_SECONDS)  # TimeoutExpired: a process of the cluster hangs
    wait_until(lambda: not processes_in_group(cluster.pid), timeout=15)
