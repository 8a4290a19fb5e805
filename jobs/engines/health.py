"""Whether a worker of a cluster has the models its pipelines need (checked at qcluster start-up)."""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings

from jobs.engines.config import models_dir
from jobs.queue import cluster_for
from ocr_engine.models import verify_pack
from ocr_engine.pipelines import get as get_pipeline
from ocr_engine.pipelines import names as pipeline_names


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
    pack = models_dir()
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
