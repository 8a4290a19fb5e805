"""What every PaddleOCR-backed pipeline shares: process setup, device checks, arguments.

All OCR goes through PaddleOCR's public classes (``PaddleOCR``, ``PPStructureV3``,
``PaddleOCRVL``) so upgrades and official models keep working; the pipeline
modules only choose their arguments: the offline pack's model folders, or
PaddleOCR's own model names (downloaded by PaddleOCR) when no pack is configured.
"""

from __future__ import annotations

import importlib.util
import json
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import EngineUnavailable, GpuRequired

if TYPE_CHECKING:
    from PIL import Image

    from ..config import EngineConfig

# Features no pipeline here uses; off so PaddleOCR neither loads nor downloads their models.
OFF = {"use_doc_orientation_classify": False, "use_doc_unwarping": False, "use_textline_orientation": False}


def bgr_array(image: Image.Image) -> np.ndarray:
    """``image`` as PaddleOCR takes an ndarray: an OpenCV image, BGR.

    OpenCV swaps the channels in one pass: 4.5 ms for a 200-DPI page, against 26 ms
    for numpy's reversed view copied into a contiguous array.
    """
    import cv2  # loaded with PaddleOCR, in workers only

    return cv2.cvtColor(np.asarray(image if image.mode == "RGB" else image.convert("RGB")), cv2.COLOR_RGB2BGR)


def prepare_process(config: EngineConfig) -> dict[str, Any]:
    """Set up the process for PaddleOCR and return the arguments every pipeline class takes."""
    # PaddleX pings model hosters at import unless told not to; offline that is a
    # multi-second stall per process for nothing.
    os.environ.setdefault("PADDLE_PDX_DISABLE_MODEL_SOURCE_CHECK", "True")
    # OpenMP (used by paddle, OpenCV and numpy's BLAS) reads its thread count once,
    # when the library loads: set it before PaddleOCR imports them, or every worker
    # process starts a pool as large as the machine and they fight over the cores.
    os.environ.setdefault("OMP_NUM_THREADS", str(config.cpu_threads))
    if config.uses_gpu:
        _require_gpu(config)
    args: dict[str, Any] = {"engine": config.backend, "device": config.device}
    if config.backend == "onnxruntime":
        # onnxruntime sizes its pool to all cores by default; explicit threads keep
        # several worker processes on one machine from oversubscribing the CPU.
        # inter_op 1: the models are sequential graphs, a second pool only adds contention.
        # log_severity_level 3: the converted SLANet graph makes onnxruntime log
        # dozens of harmless "unused initializer" warnings per process.
        args["engine_config"] = {"intra_op_num_threads": config.cpu_threads, "inter_op_num_threads": 1,
                                 "log_severity_level": 3, "enable_cpu_mem_arena": config.memory_arena}
        if config.inference == "openvino":
            args["engine_config"].update(openvino_provider(config))
    else:
        args["cpu_threads"] = config.cpu_threads
    return args


def openvino_provider(config: EngineConfig) -> dict[str, Any]:
    """PaddleX's onnxruntime engine options that run the models on onnxruntime's OpenVINO provider."""
    import onnxruntime

    if "OpenVINOExecutionProvider" not in onnxruntime.get_available_providers():
        raise EngineUnavailable("inference='openvino' needs onnxruntime's OpenVINO provider: install "
                                "onnxruntime-openvino in place of onnxruntime.")
    # f32 always: on CPUs with bf16 units OpenVINO would otherwise compute in bf16 and read other text.
    # The thread count is OpenVINO's own (onnxruntime's intra-op pool does not drive it).
    return {"providers": ["OpenVINOExecutionProvider"],
            "provider_options": {"device_type": "CPU", "precision": "FP32", "num_of_threads": str(config.cpu_threads),
                                 "load_config": json.dumps({"CPU": {"INFERENCE_PRECISION_HINT": "f32"}})}}


def detector_args(config: EngineConfig) -> dict[str, Any]:
    """The pipeline class's detector and recognizer arguments (at build time)."""
    return {**page_detector_args(config), "text_recognition_batch_size": config.recognition_batch}


def page_detector_args(config: EngineConfig) -> dict[str, Any]:
    """The detector's input size for one page: ``det_max_side`` of the page's config (see Engine._run)."""
    # "max" caps the detector input's longer side. PaddleOCR's default ("min"
    # side >= 64, hard cap 4000) feeds a 300-DPI scan nearly unscaled, where the
    # DB detector was seen to miss whole areas; a page-sized cap keeps text at the
    # resolution the detector was trained on and bounds time and memory per page.
    return {"text_det_limit_side_len": config.det_max_side, "text_det_limit_type": "max"}


def pack_model_names(kwargs: dict[str, Any]) -> dict[str, str]:
    """Model names by role from a pipeline's ``*_model_name`` arguments."""
    return {k.removesuffix("_model_name"): v for k, v in kwargs.items()
            if k.endswith("_model_name") and "placeholder" not in str(v)}


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


def first_result(results) -> dict[str, Any]:
    """PaddleOCR's result for the one image it was given, JSON-ready (numpy -> lists)."""
    return _jsonable(list(results)[0].json["res"])


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
