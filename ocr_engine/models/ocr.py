"""PP-OCRv6 small text detection/recognition and the text-line classifier, from the rapidocr wheel.

rapidocr ships Baidu's PP-OCRv6 small models already exported to ONNX, so they
only need PaddleX's inference.yml next to them (no conversion, no paddlepaddle).
"""

from __future__ import annotations

import shutil
from importlib import metadata
from pathlib import Path

from . import inference_yml, notices

DIST = "rapidocr"


def _source(filename: str) -> Path:
    import rapidocr

    return Path(rapidocr.__file__).parent / "models" / filename


def _finish(model_dir: Path, filename: str, changes: str) -> dict:
    files = notices.copy_installed(DIST, model_dir)
    version = metadata.version(DIST)
    notices.write_notice(
        model_dir,
        source=f"{filename} from the {DIST} {version} wheel on PyPI (rapidocr/models/{filename})",
        changes=changes,
        licence_files=files,
    )
    return {DIST: version}


# Text regions the detector's post-processing keeps per page. PaddleX's default of 1,000 counts
# OpenCV's contours, which come from the bottom of the page up: a dense table of 1,200 cells
# lost its top rows (the header). A page's contours stay bounded by its pixels.
MAX_DETECTED_REGIONS = 10_000


def build_det(model_dir: Path, _ctx) -> dict:
    shutil.copyfile(_source("PP-OCRv6_det_small.onnx"), model_dir / "inference.onnx")
    cfg = inference_yml.paddlex_config("PP-OCRv6_small_det")
    cfg["PostProcess"]["max_candidates"] = MAX_DETECTED_REGIONS
    inference_yml.write(model_dir, cfg)
    return _finish(model_dir, "PP-OCRv6_det_small.onnx",
                   "- inference.onnx: copied unchanged (renamed).\n- inference.yml: PaddleX's default config added,"
                   f" with PostProcess.max_candidates {MAX_DETECTED_REGIONS} (PaddleX: 1000).")


def build_rec(model_dir: Path, _ctx) -> dict:
    import onnxruntime as ort

    shutil.copyfile(_source("PP-OCRv6_rec_small.onnx"), model_dir / "inference.onnx")
    cfg = inference_yml.paddlex_config("PP-OCRv6_small_rec")
    # paddlex 3.7.2's wheel lacks res/ppocrv6_rec_dict.txt, so its default config has
    # no usable dictionary; the ONNX file carries the exact one it was trained with.
    meta = ort.InferenceSession(str(model_dir / "inference.onnx"), providers=["CPUExecutionProvider"])
    chars = meta.get_modelmeta().custom_metadata_map["character"].split("\n")
    cfg["PostProcess"]["character_dict"] = chars
    inference_yml.write(model_dir, cfg)
    return _finish(model_dir, "PP-OCRv6_rec_small.onnx",
                   "- inference.onnx: copied unchanged (renamed).\n"
                   "- inference.yml: PaddleX's default config, with the character dictionary taken from\n"
                   "  the ONNX file's metadata.")


def build_textline_ori(model_dir: Path, _ctx) -> dict:
    """Legacy ch_ppocr_mobile_v2.0_cls under a PP-LCNet textline name PaddleX accepts.

    Off by default in the engine: PaddleX 3.7.2 gives every line of a batch the
    first line's angle, and on clean pages this classifier flips upright lines.
    """
    shutil.copyfile(_source("ch_ppocr_mobile_v2.0_cls_mobile.onnx"), model_dir / "inference.onnx")
    cfg = inference_yml.paddlex_config("PP-LCNet_x0_25_textline_ori", drop_hpi=True)
    # The old classifier wants 3x48x192 input scaled to [-1, 1], not PP-LCNet's
    # preprocessing; the Topk post-processing and 0/180 labels stay as they are.
    cfg["PreProcess"] = {"transform_ops": [
        {"ResizeImage": {"size": [192, 48]}},  # [w, h]
        {"NormalizeImage": {"channel_num": 3, "mean": [0.5] * 3, "std": [0.5] * 3, "scale": 1.0 / 255, "order": ""}},
        {"ToCHWImage": None},
    ]}
    inference_yml.write(model_dir, cfg)
    return _finish(model_dir, "ch_ppocr_mobile_v2.0_cls_mobile.onnx",
                   "- inference.onnx: copied unchanged (renamed); served under the PaddleX name\n"
                   "  PP-LCNet_x0_25_textline_ori although it is the older ch_ppocr_mobile_v2.0_cls model.\n"
                   "- inference.yml: PaddleX's config for that name with the classifier's own\n"
                   "  preprocessing (resize 192x48, scale to [-1, 1]).")
