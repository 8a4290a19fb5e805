"""What a pipeline is: the small protocol the engine and ``jobs`` program against."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from ..config import EngineConfig
    from ..schema import Page


class Pipeline(Protocol):
    name: str  # the value of ``EngineConfig.pipeline``, the API's ``pipeline`` option
    label: str  # one line for people choosing a pipeline
    needs_gpu: bool  # jobs route it to the GPU cluster; no CPU worker serves it

    def build(self, config: EngineConfig) -> Any:
        """Load the models (slow); the returned object is passed back to ``run``."""

    def run(self, built: Any, config: EngineConfig, image: np.ndarray) -> dict[str, Any]:
        """One BGR page image through the models; returns the raw JSON-ready result.

        ``config`` is the page's own: its ``det_max_side`` is the detector input size for this page."""

    def normalize(self, raw: dict[str, Any], *, page_number: int, width: int, height: int, scale: float,
                  dpi: float | None, fix: Callable[[str], str] = str, gray: np.ndarray | None = None) -> Page:
        """The raw result as the schema's page; ``gray`` is the OCR'd page image in grey levels (None for
        a text layer's lines), for checks against the page's ink."""

    def model_names(self, config: EngineConfig) -> dict[str, str]:
        """Which models ``config`` uses, by role (recorded in every result)."""

    def pack_problem(self, models_dir: Path) -> str | None:
        """What the offline pack in ``models_dir`` lacks for this pipeline beyond its
        checksummed files (``models.verify_pack`` checks those); ``None`` when nothing."""


@runtime_checkable
class ReadsTextLayers(Protocol):
    """A pipeline that can take a PDF page's own text instead of detection and recognition
    (``ocr``, ``structure``); pipelines without these methods OCR every page."""

    def text_layer_raw(self, built: Any, config: EngineConfig, image: np.ndarray,
                       lines_raw: dict[str, Any]) -> dict[str, Any]:
        """A raw result, as ``run`` gives, built from text-layer lines in OCR shape (``rec_texts``, ...)."""

    def ocr_lines(self, raw: dict[str, Any]) -> dict[str, Any]:
        """The OCR-shaped lines inside one of this pipeline's raw results."""
