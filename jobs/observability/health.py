"""/healthz (the process answers), /readyz (what the web process depends on is reachable) and /livez
(the worker clusters take work).

Kubernetes restarts a pod whose liveness probe fails and takes a pod out of
its Service while its readiness probe fails, so /healthz touches nothing
outside the process (a database outage must not restart every web pod) and
/readyz checks everything a request may need. Both are plain Django views: no
authentication, no session, nothing written.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from datetime import timedelta

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.files.storage import default_storage
from django.db import connections
from django.db.models import Min, Q
from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from django_q.brokers import get_broker

from jobs.engines.config import models_dir
from jobs.models import Job
from jobs.services.storage import storage_is_local
from ocr_engine.models import verify_pack
from ocr_engine.models.manifest import FILENAME as MANIFEST_FILENAME

# A probe's own timeout is a few seconds; a check that hangs longer is a failure.
CHANNEL_LAYER_TIMEOUT_SECONDS = 3.0

logger = logging.getLogger(__name__)


@never_cache
@require_GET
def healthz(request):
    return JsonResponse({"status": "ok"})


# A job that has waited this long while no job of its cluster runs means the cluster takes no work.
STALL_SECONDS = 45


@never_cache
@require_GET
def livez(request):
    """200, or 503 ``{"code": "cluster_stalled", "detail", "clusters": {name: what is wrong}}``.

    A cluster is stalled when a job has waited for it longer than ``STALL_SECONDS`` while none of
    its jobs runs: its workers are gone, or take no task (jobs.cluster_watch). Jobs waiting behind
    running ones are not a stall.
    """
    stalled = cluster_stalls(timezone.now() - timedelta(seconds=STALL_SECONDS))
    if stalled:
        return JsonResponse({"code": "cluster_stalled", "detail": f"Stalled: {', '.join(stalled)}.",
                             "clusters": stalled}, status=503)
    return JsonResponse({"status": "ok"})


def cluster_stalls(since) -> dict[str, str]:
    """The clusters with a job waiting since before ``since`` and no job running, and what the oldest waited."""
    waiting = (Job.objects.filter(Q(status=Job.Status.QUEUED) | Q(status=Job.Status.RUNNING, heartbeat_at=None))
               .filter(enqueued_at__lt=since).values("cluster").annotate(oldest=Min("enqueued_at")))
    running = set(Job.objects.filter(status=Job.Status.RUNNING, heartbeat_at__gte=since)
                  .values_list("cluster", flat=True).distinct())
    now = timezone.now()
    return {row["cluster"]: f"a job has waited {(now - row['oldest']).total_seconds():.0f} s and none runs"
            for row in waiting if row["cluster"] not in running}


@never_cache
@require_GET
def readyz(request):
    """200 with each check's result, or 503 ``{"code": "not_ready", "detail", "failed": {check: what failed}}``.

    The channel layer (Redis in production) carries live progress only: the API answers without
    it, so while it is down the site is ``degraded`` (200), not taken out of service.

    The endpoint is public (probes carry no credentials), so it says what
    failed, never how: exception texts name hosts, users and paths. The log
    has the full error.
    """
    passed, failed, degraded = {}, {}, {}
    for name, check in CHECKS.items():
        try:
            passed[name] = check()
        except Exception:  # noqa: BLE001 - any error means "not ready" (or, for live progress, degraded)
            logger.warning("readiness check %s failed", name, exc_info=True)
            (degraded if name in OPTIONAL else failed)[name] = FAILURE_SUMMARIES[name]
    if failed:
        return JsonResponse({"code": "not_ready", "detail": f"Not ready: {', '.join(failed)} failed.",
                             "failed": failed, "passed": passed, "degraded": degraded}, status=503)
    return JsonResponse({"status": "degraded" if degraded else "ready", "checks": passed, "degraded": degraded})


def check_database() -> str:
    connection = connections["default"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return connection.vendor


def check_broker() -> str:
    """The django-q2 broker accepts commands (with the ORM broker: its queue table answers)."""
    broker = get_broker()
    if not broker.ping():
        raise ConnectionError("the broker did not answer a ping")
    broker.queue_size()
    return broker.info()


def check_channel_layer() -> str:
    """A message sent on the channel layer comes back: worker progress events can reach browsers."""
    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("no channel layer is configured (CHANNEL_LAYERS)")
    # A plain channel name (no "!"): receive() then reads it directly instead of
    # starting the layer's per-process receive loop, which would outlive this request.
    channel = f"readyz.{uuid.uuid4().hex}"

    async def round_trip():
        await layer.send(channel, {"type": "readyz.ping"})
        await layer.receive(channel)

    async def bounded():
        await asyncio.wait_for(round_trip(), CHANNEL_LAYER_TIMEOUT_SECONDS)

    async_to_sync(bounded)()
    return type(layer).__name__


# (pack folder, manifest mtime, manifest size) -> problems found. Hashing the
# whole pack takes a fraction of a second of CPU; a probe every few seconds
# should not pay it every time. A rebuilt pack rewrites its manifest, which
# invalidates the entry; `manage.py ocr_models verify` always hashes again.
_verified: dict[tuple[str, int, int], list[str]] = {}


def check_models() -> str:
    pack = models_dir()
    if pack is None:
        return "no offline pack: workers use PaddleOCR's official models"
    stat = (pack / MANIFEST_FILENAME).stat()
    key = (str(pack), stat.st_mtime_ns, stat.st_size)
    if key not in _verified:
        _verified.clear()
        _verified[key] = verify_pack(pack)
    problems = _verified[key]
    if problems:
        raise FileNotFoundError(f"the model pack in {pack} has {len(problems)} problem(s): " + "; ".join(problems[:3]))
    return "offline pack verified"


def check_store() -> str:
    """The file store answers: the file system's folder, or the S3 store (a HEAD of a name nobody stores)."""
    default_storage.exists("readyz")
    return "file system" if storage_is_local() else "object store"


FAILURE_SUMMARIES = {
    "database": "the database did not answer",
    "broker": "the task broker did not answer",
    "channel_layer": "the channel layer did not carry a message",
    "models": "the model pack is missing models or damaged (see the server log, or `manage.py ocr_models verify`)",
    "store": "the file store did not answer (STORAGE_URL)",
}
# Reported when they fail, but the site serves on without them.
OPTIONAL = {"channel_layer"}
CHECKS = {
    "database": check_database,
    "broker": check_broker,
    "channel_layer": check_channel_layer,
    "models": check_models,
    "store": check_store,
}
