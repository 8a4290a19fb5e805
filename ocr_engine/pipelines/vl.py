"""``vl``: PaddleOCR-VL, a vision-language model that reads whole pages (GPU only)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import normalize as _normalize
from ..errors import ModelsMissing
from . import paddle

if TYPE_CHECKING:
    from ..config import EngineConfig


class VlPipeline:
    name = "vl"
    label = "Vision-language (PaddleOCR-VL, GPU)"
    needs_gpu = True

    def build(self, config: EngineConfig):
        common = paddle.prepare_process(config)
        from paddleocr import PaddleOCRVL

        if config.models_dir is not None and (problem := self.pack_problem(config.models_dir)):
            raise ModelsMissing(problem)
        return PaddleOCRVL(**common)

    def run(self, built, config: EngineConfig, image) -> dict[str, Any]:
        return paddle.first_result(built.predict(image))

    # PaddleOCR-VL's result has PP-StructureV3's shape (parsing_res_list blocks,
    # overall_ocr_res lines), so the structure normaliser reads it.
    normalize = staticmethod(_normalize.normalize_structure)

    def model_names(self, config: EngineConfig) -> dict[str, str]:
        return {"vl": "PaddleOCR-VL"}

    def pack_problem(self, models_dir: Path) -> str | None:
        if (models_dir / "PaddleOCR-VL").is_dir():
            return None
        return ("The vl pipeline needs PaddleOCR-VL's official weights, which no PyPI wheel ships: "
                "run the worker online once (PaddleOCR downloads them) or place them in "
                f"{models_dir / 'PaddleOCR-VL'}.")


PIPELINE = VlPipeline()
