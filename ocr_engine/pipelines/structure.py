"""``structure``: PP-StructureV3 layout blocks and tables plus its page-wide OCR lines."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import normalize as _normalize
from . import paddle

if TYPE_CHECKING:
    from ..config import EngineConfig

# Seals, formulas, charts and sub-regions: models the pack does not ship and the schema has no place for.
_UNUSED = {"use_seal_recognition": False, "use_formula_recognition": False, "use_chart_recognition": False,
           "use_region_detection": False, "use_table_recognition": True}


class StructurePipeline:
    name = "structure"
    label = "Layout + tables (PP-StructureV3)"
    needs_gpu = False

    def model_args(self, config: EngineConfig) -> dict[str, Any]:
        off = {**paddle.OFF, **_UNUSED}
        if config.models_dir is None:
            return {**off, "lang": config.lang}
        from ..models import offline_model_kwargs

        return {**offline_model_kwargs(config.models_dir), **off}

    def build(self, config: EngineConfig):
        common = paddle.prepare_process(config)
        from paddleocr import PPStructureV3

        tables = {"paddlex_config": _tables_on_onnxruntime_kernels()} if config.inference == "openvino" else {}
        return PPStructureV3(**self.model_args(config), **common, **paddle.detector_args(config), **tables)

    def run(self, built, config: EngineConfig, image) -> dict[str, Any]:
        # The table-orientation model has no offline source (it would try to
        # download), and the end-to-end SLANet path needs no cell detector.
        return paddle.first_result(built.predict(
            image, use_table_orientation_classify=False, use_e2e_wired_table_rec_model=True,
            use_e2e_wireless_table_rec_model=True, layout_threshold=config.layout_threshold,
            **paddle.page_detector_args(config)))

    normalize = staticmethod(_normalize.normalize_structure)

    def text_layer_raw(self, built, config: EngineConfig, image, lines_raw: dict[str, Any]) -> dict[str, Any]:
        """A born-digital page: only the layout model runs; the text layer's lines are its OCR lines."""
        from ..textlayer.layout import layout_only

        return layout_only(built, config.layout_threshold, image, lines_raw)

    def ocr_lines(self, raw: dict[str, Any]) -> dict[str, Any]:
        return raw.get("overall_ocr_res") or {}

    def model_names(self, config: EngineConfig) -> dict[str, str]:
        if config.models_dir is None:
            return {"ocr": f"PaddleOCR default for lang={config.lang}", "layout_detection": "PP-DocLayout_plus-L"}
        return paddle.pack_model_names(self.model_args(config))

    def pack_problem(self, models_dir) -> str | None:
        return None  # the pack's checksummed files are all it needs


def _tables_on_onnxruntime_kernels() -> dict[str, Any]:
    """PP-StructureV3's PaddleX config with its table-structure models on onnxruntime's own CPU kernels.

    OpenVINO cannot read the pack's converted SLANet_plus graph (an ArgMax whose axis it cannot
    resolve, "Normalized axis of TopK is unknown"); PaddleX merges a sub-module's ``engine_config``
    over the pipeline's, so every other model still runs on OpenVINO.
    """
    from paddlex.inference import load_pipeline_config

    config = load_pipeline_config("PP-StructureV3")
    for module in ("WiredTableStructureRecognition", "WirelessTableStructureRecognition"):
        config["SubPipelines"]["TableRecognition"]["SubModules"][module]["engine_config"] = {
            "providers": ["CPUExecutionProvider"], "provider_options": {}}
    return config


PIPELINE = StructurePipeline()
