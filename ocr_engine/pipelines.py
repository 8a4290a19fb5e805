"""Build PaddleOCR's own pipelines from an ``EngineConfig`` and run one page through them.

All OCR goes through PaddleOCR's public classes (``PaddleOCR``, ``PPStructureV3``,
``PaddleOCRVL``) so upgrades and official models keep working; this module only
chooses their arguments: the offline pack's model folders, or PaddleOCR's own
model names (downloaded by PaddleOCR) when no pack is configured.
"""

from __future__ import annotations

import importlib.util
import os
from typing import Any

import numpy as np

from .config import EngineConfig
from .errors import EngineUnavailable, GpuRequired, ModelsMissing


def _quiet_paddlex() -> None:
    # PaddleX pings model hosters at import unless told not to; offline that is a
    # multi-second stall per process for nothing.
    os.environ.setdefault("PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK", "True")


def _common_args(config: EngineConfig) -> dict[str, Any]:
    args: dict[str, Any] = {"engine": config.backend, "device": config.device}
    if config.backend == "onnxruntime":
        # onnxruntime sizes its pool to all cores by default; explicit threads keep
        # several worker processes on one machine from oversubscribing the CPU.
        # inter_op 1: the models are sequential graphs, a second pool only adds contention.
        # log_severity_level 3: the converted SLANet graph makes onnxruntime log
        # dozens of harmless "unused initializer" warnings per process.
        args["engine_config"] = {"intra_op_num_threads": config.cpu_threads, "inter_op_num_threads": 1,
                                 "log_severity_level": 3}
    else:
        args["cpu_threads"] = config.cpu_threads
    return args


def _det_args(config: EngineConfig) -> dict[str, Any]:
    # "max" caps the detector input's longer side. PaddleOCR's default ("min"
    # side >= 64, hard cap 4000) feeds a 300-DPI scan nearly unscaled, where the
    # DB detector was seen to miss whole areas; a page-sized cap keeps text at the
    # resolution the detector was trained on and bounds time and memory per page.
    return {"text_det_limit_side_len": config.det_max_side, "text_det_limit_type": "max"}


def _pipeline_kwargs(config: EngineConfig) -> dict[str, Any]:
    """Model arguments: the offline pack's folders, or PaddleOCR's official models by ``lang``."""
    off = {"use_doc_orientation_classify": False, "use_doc_unwarping": False, "use_textline_orientation": False}
    if config.pipeline == "structure":
        off |= {"use_seal_recognition": False, "use_formula_recognition": False, "use_chart_recognition": False,
                "use_region_detection": False, "use_table_recognition": True}
    if config.models_dir is None:
        return {**off, "lang": config.lang}
    from .models import offline_model_kwargs, offline_ocr_kwargs

    pack = offline_ocr_kwargs(config.models_dir) if config.pipeline == "ocr" else offline_model_kwargs(config.models_dir)
    # Text-line orientation stays off even when the pack has the model: it flips
    # upright lines on clean pages (notes on the offline models, section 4).
    return {**pack, **off}


def model_names(config: EngineConfig) -> dict[str, str]:
    """Which models a config uses, by role (recorded in every result)."""
    if config.pipeline == "vl":
        return {"vl": "PaddleOCR-VL"}
    if config.models_dir is None:
        names = {"ocr": f"PaddleOCR default for lang={config.lang}"}
        if config.pipeline == "structure":
            names["layout_detection"] = "PP-DocLayout_plus-L"
        return names
    return {k.removesuffix("_model_name"): v for k, v in _pipeline_kwargs(config).items()
            if k.endswith("_model_name") and "placeholder" not in str(v)}


def build(config: EngineConfig):
    """Construct the PaddleOCR pipeline object for ``config`` (slow: loads models)."""
    _quiet_paddlex()
    # OpenMP (used by paddle, OpenCV and numpy's BLAS) reads its thread count once,
    # when the library loads: set it before PaddleOCR imports them, or every worker
    # process starts a pool as large as the machine and they fight over the cores.
    os.environ.setdefault("OMP_NUM_THREADS", str(config.cpu_threads))
    if config.uses_gpu:
        _require_gpu(config)
    common = _common_args(config)
    if config.pipeline == "ocr":
        from paddleocr import PaddleOCR

        return PaddleOCR(**_pipeline_kwargs(config), **common, **_det_args(config),
                         text_recognition_batch_size=config.rec_batch_size)
    if config.pipeline == "structure":
        from paddleocr import PPStructureV3

        return PPStructureV3(**_pipeline_kwargs(config), **common, **_det_args(config),
                             text_recognition_batch_size=config.rec_batch_size)
    from paddleocr import PaddleOCRVL

    if config.models_dir is not None and not (config.models_dir / "PaddleOCR-VL").is_dir():
        raise ModelsMissing(
            "The vl pipeline needs PaddleOCR-VL's official weights, which no PyPI wheel ships: "
            "run the worker online once (PaddleOCR downloads them) or place them in "
            f"{config.models_dir / 'PaddleOCR-VL'}."
        )
    return PaddleOCRVL(**common)


def _require_gpu(config: EngineConfig) -> None:
    if config.backend == "paddle":
        if importlib.util.find_spec("paddle") is None:
            raise EngineUnavailable("The paddle backend needs paddlepaddle-gpu (use the GPU image).")
        import paddle

        if not paddle.device.is_compiled_with_cuda() or paddle.device.cuda.device_count() == 0:
            raise GpuRequired(f"device={config.device!r} but paddlepaddle sees no CUDA GPU.")
    else:
        import onnxruntime

        if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
            raise GpuRequired(f"device={config.device!r} but onnxruntime has no CUDA provider (install onnxruntime-gpu).")


def run_page(pipeline, config: EngineConfig, image: np.ndarray) -> dict[str, Any]:
    """One page through the pipeline; returns PaddleOCR's JSON-ready result dict."""
    if config.pipeline == "structure":
        # The table-orientation model has no offline source (it would try to
        # download), and the end-to-end SLANet path needs no cell detector.
        results = pipeline.predict(image, use_table_orientation_classify=False,
                                   use_e2e_wired_table_rec_model=True, use_e2e_wireless_table_rec_model=True,
                                   layout_threshold=config.layout_threshold)
    elif config.pipeline == "ocr":
        results = pipeline.predict(image, return_word_box=True)
    else:
        results = pipeline.predict(image)
    result = list(results)[0]
    return _jsonable(result.json["res"])


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    return value
