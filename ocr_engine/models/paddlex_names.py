"""PaddleOCR / PPStructureV3 constructor arguments that point at an offline pack.

Every folder holds ONNX files, so the pipelines must be built with
``engine="onnxruntime"`` (the caller passes that, with threads and device).
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ModelsMissing
from .layout import LABELS
from .pack import BY_DIR, REQUIRED_DIRS

# Features the pack has no model for. Left on, PaddleOCR tries to download one
# and fails offline with a ConnectionError, so they are switched off here.
OCR_DISABLED = {"use_doc_orientation_classify": False, "use_doc_unwarping": False}
STRUCTURE_DISABLED = {**OCR_DISABLED, "use_seal_recognition": False, "use_formula_recognition": False,
                      "use_chart_recognition": False, "use_region_detection": False}
# Pass to PPStructureV3.predict(). The table-orientation model is created lazily
# at predict time (download -> ConnectionError); end-to-end mode means the
# placeholder cell detectors are never run and SLANet_plus gives the cells.
STRUCTURE_PREDICT_KWARGS = {"use_table_orientation_classify": False,
                            "use_e2e_wired_table_rec_model": True, "use_e2e_wireless_table_rec_model": True}
# PPStructureV3's default merge modes are keyed by PP-DocLayout_plus-L's 20 class
# ids, which mean other things for the 10 CDLA classes. Same modes, re-keyed by
# label: PaddleX's config uses "large" for paragraph_title, image and formula
# (drop boxes nested inside them) and "union" for everything else.
_LARGE = {"paragraph_title", "image", "formula"}
LAYOUT_MERGE_BBOXES_MODE = {i: "large" if label in _LARGE else "union" for i, label in enumerate(LABELS)}


def _model(pack: Path, prefix: str, dir_name: str) -> dict:
    return {f"{prefix}_model_name": BY_DIR[dir_name].model_name, f"{prefix}_model_dir": str(pack / dir_name)}


def _check(pack: Path, dir_names) -> None:
    missing = [d for d in dir_names if not (pack / d / "inference.onnx").is_file()]
    if missing:
        raise ModelsMissing(
            f"The offline model pack at {pack} lacks {', '.join(missing)}. "
            f"Build it with `python -m ocr_engine models build --out {pack}`.")


def offline_ocr_kwargs(models_dir: Path) -> dict:
    """``PaddleOCR(**offline_ocr_kwargs(d), engine="onnxruntime", ...)``.

    The text-line orientation folder is passed when it was built, but stays off
    (``use_textline_orientation=False``) unless the caller turns it on; then use
    ``textline_orientation_batch_size=1`` (PaddleX 3.7.2 batch bug, notes §4).
    """
    pack = Path(models_dir)
    _check(pack, ("PP-OCRv6_small_det", "PP-OCRv6_small_rec"))
    kwargs = {**_model(pack, "text_detection", "PP-OCRv6_small_det"),
              **_model(pack, "text_recognition", "PP-OCRv6_small_rec"), **OCR_DISABLED}
    if (pack / "PP-LCNet_x0_25_textline_ori" / "inference.onnx").is_file():
        kwargs |= _model(pack, "textline_orientation", "PP-LCNet_x0_25_textline_ori")
    # Off here too (OCR_DISABLED): ocr_engine.orientation runs it before the pipeline,
    # where its answer can be checked against the page's lines. Passed so that a
    # caller who turns PaddleOCR's own doc preprocessor on gets the offline model.
    if (pack / "PP-LCNet_x1_0_doc_ori" / "inference.onnx").is_file():
        kwargs |= _model(pack, "doc_orientation_classify", "PP-LCNet_x1_0_doc_ori")
    return kwargs


def offline_orientation_kwargs(models_dir: Path) -> dict:
    """``DocImgOrientationClassification(**offline_orientation_kwargs(d), engine="onnxruntime", ...)``."""
    pack = Path(models_dir)
    _check(pack, ("PP-LCNet_x1_0_doc_ori",))
    return {"model_name": BY_DIR["PP-LCNet_x1_0_doc_ori"].model_name, "model_dir": str(pack / "PP-LCNet_x1_0_doc_ori")}


def offline_model_kwargs(models_dir: Path) -> dict:
    """``PPStructureV3(**offline_model_kwargs(d), engine="onnxruntime", ...)``.

    Call ``predict(..., **STRUCTURE_PREDICT_KWARGS)``. Both table structure slots
    get SLANet_plus (the only offline table model); the table classifier and
    cell detectors are placeholders (see placeholders.py).
    """
    pack = Path(models_dir)
    _check(pack, REQUIRED_DIRS)
    return {
        **offline_ocr_kwargs(pack),
        **_model(pack, "layout_detection", "PicoDet_layout_1x"),
        "layout_merge_bboxes_mode": dict(LAYOUT_MERGE_BBOXES_MODE),
        **_model(pack, "wired_table_structure_recognition", "SLANet_plus_onnx"),
        **_model(pack, "wireless_table_structure_recognition", "SLANet_plus_onnx"),
        **_model(pack, "table_classification", "placeholder_table_cls"),
        **_model(pack, "wired_table_cells_detection", "placeholder_wired_cell_det"),
        **_model(pack, "wireless_table_cells_detection", "placeholder_wireless_cell_det"),
        **STRUCTURE_DISABLED,
    }
