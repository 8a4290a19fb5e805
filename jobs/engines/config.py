"""Django settings to the engine's config: the model pack, the languages it reads, EngineConfig."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from ocr_engine.config import LANGUAGES, OFFLINE_LANGUAGES, EngineConfig
from ocr_engine.models import is_pack


def models_dir() -> Path | None:
    """The offline model pack, or None when the folder holds none (PaddleOCR then downloads its models)."""
    folder = Path(settings.OCR_MODELS_DIR)
    return folder if is_pack(folder) else None


def available_languages() -> dict[str, str]:
    """Languages this server can read: the offline pack's, or all of PaddleOCR's when online."""
    return dict(OFFLINE_LANGUAGES if models_dir() is not None else LANGUAGES)


def engine_config(pipeline: str, lang: str) -> EngineConfig:
    """The config a worker uses; building it also validates the options (UnsupportedOption)."""
    return EngineConfig(
        pipeline=pipeline,
        lang=lang,
        backend=settings.OCR_BACKEND,
        inference=settings.OCR_INFERENCE,
        device=settings.OCR_DEVICE,
        models_dir=models_dir(),
        cpu_threads=settings.OCR_CPU_THREADS,
        memory_arena=settings.OCR_MEMORY_ARENA,
    )
