"""The ``structure`` pipeline on a text-layer page: the layout model only, no detection or recognition.

Returns a result in the shape of PP-StructureV3's (``parsing_res_list``,
``layout_det_res``, ``overall_ocr_res``, ``table_res_list``) so
``normalize.normalize_structure`` reads it unchanged, with the text-layer lines
as the page's OCR lines.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def layout_only(pipeline, layout_threshold: float, bgr: np.ndarray, lines_raw: dict[str, Any]) -> dict[str, Any]:
    """Run PP-StructureV3's own loaded layout model on the page (shared, not a second copy)."""
    # PaddleOCR's PPStructureV3 wraps PaddleX's layout-parsing pipeline, which
    # holds the layout detector as ``layout_det_model``; calling it is what
    # PP-StructureV3 does first in its own predict().
    model = pipeline.paddlex_pipeline.layout_det_model
    (result,) = list(model([bgr], threshold=layout_threshold, layout_nms=True))
    boxes = [{"label": str(b["label"]), "score": float(b["score"]), "coordinate": [float(v) for v in b["coordinate"]]}
             for b in result["boxes"]]
    return {
        "layout_det_res": {"boxes": boxes},
        "parsing_res_list": [{"block_label": b["label"], "block_bbox": b["coordinate"]} for b in boxes],
        "overall_ocr_res": lines_raw,
        "table_res_list": [],
    }
