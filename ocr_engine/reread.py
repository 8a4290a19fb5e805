"""Re-read one box: crop it from the page image (deskewed along the box), run the job's recognition model.

``LineReader(config)`` loads only the text recognition model the config's
pipeline uses (the same folder of the offline pack, or PaddleOCR's default), so
a redrawn box is read the way the engine read the page, in well under a second.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from PIL import Image

from .config import EngineConfig
from . import pipelines
from .pipelines.paddle import bgr_array, prepare_process

Polygon = Sequence[Sequence[float]]


def crop_polygon(image: Image.Image | np.ndarray, polygon: Polygon) -> Image.Image:
    """The polygon's minimum-area rectangle, rotated upright (text runs left to right).

    ``image``: a PIL image, or its RGB pixels as an array where many lines are cut from one page
    (each PIL image is converted to an array of the whole page first).
    """
    import cv2

    points = np.asarray(polygon, dtype=np.float32)
    (cx, cy), (w, h), angle = cv2.minAreaRect(points)
    if w < h:  # cv2 may report the long side as height: text lines are wider than tall
        w, h, angle = h, w, angle - 90
    if abs(angle) > 45:  # upright box reported as turned by ±90
        angle -= math.copysign(90, angle)
        w, h = h, w
    corners = cv2.boxPoints(((cx, cy), (w, h), angle))
    # Order corners as top-left, top-right, bottom-right, bottom-left.
    by_y = corners[np.argsort(corners[:, 1])]
    top = by_y[:2][np.argsort(by_y[:2, 0])]
    bottom = by_y[2:][np.argsort(by_y[2:, 0])]
    source = np.float32([top[0], top[1], bottom[1], bottom[0]])
    width, height = max(1, round(w)), max(1, round(h))
    target = np.float32([[0, 0], [width, 0], [width, height], [0, height]])
    matrix = cv2.getPerspectiveTransform(source, target)
    rgb = image if isinstance(image, np.ndarray) else np.asarray(image.convert("RGB"))
    return Image.fromarray(cv2.warpPerspective(rgb, matrix, (width, height), flags=cv2.INTER_CUBIC,
                                               borderMode=cv2.BORDER_REPLICATE))


def recognition_kwargs(config: EngineConfig) -> dict:
    """TextRecognition arguments for the model ``config``'s pipeline reads text with."""
    # A pipeline without a recogniser of its own (vl) re-reads with PP-OCR's.
    source = pipelines.get(config.pipeline)
    model_args = getattr(source, "model_args", pipelines.get("ocr").model_args)(config)
    model = {k.removeprefix("text_recognition_"): v for k, v in model_args.items()
             if k in ("text_recognition_model_name", "text_recognition_model_dir")}
    return {**model, **prepare_process(config)}


class LineReader:
    def __init__(self, config: EngineConfig):
        from paddleocr import TextRecognition  # the ML stack loads in workers only

        self.config = config
        self._model = TextRecognition(**recognition_kwargs(config))

    def read(self, image: Image.Image, polygon: Polygon) -> tuple[str, float]:
        """(text, confidence) of the box ``polygon`` (page pixels) on ``image``."""
        crop = crop_polygon(image, polygon)
        (result,) = list(self._model.predict(bgr_array(crop), batch_size=1))
        return str(result["rec_text"]).strip(), round(float(result["rec_score"]), 4)
