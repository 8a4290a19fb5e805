"""``ocr``: PP-OCR text detection and recognition; paragraphs become the regions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import normalize as _normalize
from . import paddle

if TYPE_CHECKING:
    from ..config import EngineConfig


class OcrPipeline:
    name = "ocr"
    label = "Text (PP-OCR)"
    needs_gpu = False

    def model_args(self, config: EngineConfig) -> dict[str, Any]:
        if config.models_dir is None:
            return {**paddle.OFF, "lang": config.lang}
        from ..models import offline_ocr_kwargs

        # Text-line orientation stays off even when the pack has the model: it flips
        # upright lines on clean pages (notes on the offline models, section 4).
        return {**offline_ocr_kwargs(config.models_dir), **paddle.OFF}

    def build(self, config: EngineConfig):
        common = paddle.prepare_process(config)
        from paddleocr import PaddleOCR

        return PaddleOCR(**self.model_args(config), **common, **paddle.detector_args(config))

    def run(self, built, config: EngineConfig, image) -> dict[str, Any]:
        return paddle.first_result(built.predict(image, return_word_box=True, **paddle.page_detector_args(config)))

    normalize = staticmethod(_normalize.normalize_ocr)

    # A born-digital page: the text layer's lines are the whole raw result.
    def text_layer_raw(self, built, config: EngineConfig, image, lines_raw: dict[str, Any]) -> dict[str, Any]:
        return lines_raw

    def ocr_lines(self, raw: dict[str, Any]) -> dict[str, Any]:
        """The OCR-shaped lines (``rec_texts``, ``rec_polys``, ...) in one of this pipeline's raw results."""
        return raw

    def model_names(self, config: EngineConfig) -> dict[str, str]:
        if config.models_dir is None:
            return {"ocr": f"PaddleOCR default for lang={config.lang}"}
        return paddle.pack_model_names(self.model_args(config))

    def pack_problem(self, models_dir) -> str | None:
        return None  # the pack's checksummed files are all it needs


PIPELINE = OcrPipeline()
