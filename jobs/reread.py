"""Re-reading a redrawn box: the web process asks a qcluster worker and waits briefly for the answer.

The web process never loads models: ``read_polygon`` queues ``reread_box`` on
the job's cluster and polls its result for ``OCR_REREAD_WAIT_MS``. The worker
keeps its line readers warm between tasks, as it keeps its engines
(``jobs.engines.pool``). A worker busy with a long OCR job answers only after
that task; the wait then ends with ``EngineUnavailable`` (HTTP 503) and the
reviewer may type the text instead.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

from django.conf import settings
from django_q.tasks import async_task, result

from jobs.engines.config import engine_config
from jobs.engines.pool import MAX_ENGINES
from jobs.models import PageResult
from ocr_engine.errors import EngineUnavailable

REREAD_BOX = "jobs.reread.reread_box"
REREAD_FAILED = "The worker could not read the box; type its text or try again."
TASK_TIMEOUT_S = 30  # a line read takes well under a second; anything longer is a stuck worker

logger = logging.getLogger(__name__)

_readers: OrderedDict = OrderedDict()
_lock = threading.Lock()


def read_polygon(page: PageResult, polygon: list[list[float]]) -> tuple[str, float]:
    """(text, confidence) of ``polygon`` (page pixels) read by a worker; raises EngineUnavailable on time-out."""
    job = page.job
    task_id = async_task(REREAD_BOX, page.pk, polygon, cluster=job.cluster, timeout=TASK_TIMEOUT_S,
                         group=f"reread-{job.pk}")
    answer = result(task_id, wait=settings.OCR_REREAD_WAIT_MS, cached=False)
    if answer is None:
        raise EngineUnavailable("No OCR worker answered in time to read the box; type its text or try again.")
    if "error" in answer:
        raise EngineUnavailable(REREAD_FAILED)
    return answer["text"], answer["confidence"]


def _reader(pipeline: str, lang: str):
    from ocr_engine.reread import LineReader  # the ML stack loads in workers only

    key = (pipeline, lang)
    with _lock:
        if key not in _readers:
            while len(_readers) >= MAX_ENGINES:
                _readers.popitem(last=False)
            _readers[key] = LineReader(engine_config(pipeline, lang))
        _readers.move_to_end(key)
        return _readers[key]


def reread_box(page_id: int, polygon: list[list[float]]) -> dict:
    """Worker task: read ``polygon`` on the stored page image. Errors come back as ``{"error"}`` so the
    web process stops waiting at once instead of at its time-out."""
    from PIL import Image

    try:
        page = PageResult.objects.select_related("job").get(pk=page_id)
        with page.image.open("rb") as fh:
            image = Image.open(fh)
            image.load()
        # The stored image may be smaller than the page's pixel grid (a preview): map the polygon onto it.
        fx, fy = image.width / page.normalized["width"], image.height / page.normalized["height"]
        scaled = [[x * fx, y * fy] for x, y in polygon]
        text, confidence = _reader(page.job.pipeline, page.job.lang).read(image, scaled)
    except Exception:  # noqa: BLE001 - reported to the waiting request, never retried
        # Its text names files and internals: the log has it, the reviewer a fixed text (REREAD_FAILED).
        logger.exception("Re-reading a box of page %s failed", page_id)
        return {"error": "reread_failed"}
    return {"text": text, "confidence": confidence}
