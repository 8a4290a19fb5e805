"""How many pixels the text detector needs for a page: as many as its small characters call for.

The DB text detector's time grows with the pixels it is fed, and PaddleOCR
feeds it the page as rendered or scanned. It finds lines as well once a
character is about ten pixels tall: the real-page corpus at 200 DPI
(bench/compare.py --zoom 1.39), detected at about 0.72 of its size, read within
0.1 point of CER of full-size detection on most pages, in half the detection
time, while detection below about eight pixels began to lose lines. So each page's detector input is shrunk (never enlarged) until
its small characters are ``EngineConfig.det_char_px`` tall. Recognition is
unchanged: it still reads every line cropped from the full-resolution page.

The page's character size is measured on its own ink: the heights of the
character-sized connected components of the binarised page. A low percentile,
so footnotes and punctuation pull the estimate down (towards full size), never
up; a page with too few characters to measure is detected at full size.
"""

from __future__ import annotations

import numpy as np

# Which percentile of character heights counts as the page's small characters.
SMALL_CHAR_PERCENTILE = 20
# Fewer character-like components than this (a photo, a near-empty page): no estimate.
MIN_CHARS = 50
# Components outside these bounds are not characters: specks, rules, pictures (share of the page height).
MIN_CHAR_PX, MAX_CHAR_PAGE_SHARE = 4, 1 / 20
# Pages larger than this (longer side) are measured at this size: a 300-DPI page in a quarter of the time.
MEASURE_SIDE = 1800
# The detector never gets less than this on its longer side: a page of large type stays legible to it.
MIN_DETECTOR_SIDE = 960


def small_char_height(gray: np.ndarray) -> float | None:
    """Height in pixels of the page's small characters (a low percentile), or None if it has too few."""
    import cv2

    shrink = min(1.0, MEASURE_SIDE / max(gray.shape))
    if shrink < 1.0:
        gray = cv2.resize(gray, None, fx=shrink, fy=shrink, interpolation=cv2.INTER_AREA)
    _, ink = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY_INV | cv2.THRESH_OTSU)
    _, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    height, width = stats[1:, cv2.CC_STAT_HEIGHT], stats[1:, cv2.CC_STAT_WIDTH]
    area = stats[1:, cv2.CC_STAT_AREA]
    # Character-like: not a speck, not a rule or a picture, not a hollow frame.
    chars = ((height >= MIN_CHAR_PX) & (height <= gray.shape[0] * MAX_CHAR_PAGE_SHARE)
             & (width <= 4 * height) & (area >= 0.1 * height * width))
    if np.count_nonzero(chars) < MIN_CHARS:
        return None
    return float(np.percentile(height[chars], SMALL_CHAR_PERCENTILE)) / shrink


def detector_side(gray: np.ndarray, *, max_side: int, char_px: int | None) -> int:
    """The longer side, in pixels, of the detector's input for this page (PaddleOCR's limit type "max")."""
    side = max(gray.shape)
    height = small_char_height(gray) if char_px else None
    if height is None or height <= char_px:
        return min(side, max_side)
    return min(max(round(side * char_px / height), min(side, MIN_DETECTOR_SIDE)), max_side)
