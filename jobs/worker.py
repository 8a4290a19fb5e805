"""What a qcluster process adds to django-q2: a model check at start-up and a drain on SIGTERM.

Both are wired in by ``jobs/management/commands/qcluster.py``.

Drain. django-q2 stops a cluster on SIGTERM/SIGINT (``Cluster.sig_handler``)
by fetching nothing more and queueing one STOP pill per worker *behind* the
tasks already prefetched (``queue_limit``), then waiting for the workers. A
``process_job`` task works for up to ``OCR_TASK_BUDGET_SECONDS``, so a stop
could take several budgets, far past any grace period, and Kubernetes would
then SIGKILL the worker mid-page. So the qcluster command also sets a flag
shared by every process of the cluster (a multiprocessing Event created before
django-q2 forks, inherited by the sentinel and each worker). ``job_run`` reads
it at page boundaries: the page being processed is committed, the job is
released to the queue for another worker, prefetched tasks are put back
unclaimed, and the workers reach their STOP pills within about one page.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from pathlib import Path

from django.conf import settings

from jobs import engine_pool
from jobs.queue import cluster_for
from ocr_engine.pipelines import get as get_pipeline
from ocr_engine.pipelines import names as pipeline_names
from ocr_engine.models import verify_pack

# Set once the cluster was asked to stop; None outside a qcluster process.
_stopping = None


def install_drain() -> None:
    """Create the shared flag. Call in the qcluster main process before django-q2 forks its processes."""
    global _stopping
    # django-q2 forks (cluster.get_mp_context); the Event must come from the same context.
    _stopping = multiprocessing.get_context("fork").Event()


def drain_on(*signums: int) -> None:
    """Chain onto the installed handlers: set the flag, then let django-q2 stop the cluster as usual."""
    for signum in signums:
        previous = signal.getsignal(signum)

        def handler(received, frame, previous=previous):
            _stopping.set()
            if callable(previous):
                previous(received, frame)

        signal.signal(signum, handler)


def stopping() -> bool:
    """True in any process of a cluster that was asked to stop."""
    return _stopping is not None and _stopping.is_set()


def cluster_pipelines(cluster: str) -> list[str]:
    """The pipelines whose jobs are routed to ``cluster`` (see jobs.queue.cluster_for)."""
    return [p for p in pipeline_names() if cluster_for(p) == cluster]


def official_models_dir() -> Path:
    """Where PaddleOCR keeps the official models it downloads (PaddleX's cache)."""
    # PaddleX's own rule (paddlex.utils.cache.CACHE_DIR; a test checks they
    # agree), not an import of it: importing paddlex in the qcluster main process
    # loads paddle, and on a GPU initialises CUDA, before django-q2 forks its
    # workers, and CUDA does not survive a fork.
    return Path(os.environ.get("PADDLE_PDX_CACHE_HOME", str(Path.home() / ".paddlex"))) / "official_models"


def model_problems(cluster: str) -> list[str]:
    """Why a worker of ``cluster`` could not run its pipelines; an empty list when it can.

    With an offline pack (``OCR_MODELS_DIR`` holds a manifest) every file is
    checked against its checksum, plus what each pipeline's ``pack_problem`` asks for. Without a pack PaddleOCR
    uses its official models, which must have been downloaded beforehand.
    """
    pipelines = cluster_pipelines(cluster)
    pack = engine_pool.models_dir()
    if pack is None:
        if not pipelines:
            return []
        official = official_models_dir()
        if official.is_dir() and any(official.iterdir()):
            return []
        return [f"No offline model pack in {settings.OCR_MODELS_DIR} (no manifest.json) and no downloaded "
                f"official models in {official}. Build the pack with `python manage.py ocr_models install`, "
                "or download the official models with `python manage.py ocr_models install --official` "
                "(needs internet)."]
    problems = verify_pack(pack)
    for name in pipelines:
        if problem := get_pipeline(name).pack_problem(pack):
            problems.append(f"The {cluster} cluster runs the {name} pipeline: {problem}")
    return problems
