"""Pages as scans arrive (grey, noisy, turned, skewed) and the real pages of the test data."""

from __future__ import annotations

from pathlib import Path

from PIL import Image


def scanned(image: Image.Image, angle: float = 0.8, noise: float = 12.0, seed: int = 0) -> Image.Image:
    """The page as a mediocre scan: grey, slightly rotated, blurred and noisy."""
    import numpy as np
    from PIL import ImageFilter

    grey = image.convert("L").rotate(angle, fillcolor=255, resample=Image.BICUBIC).filter(ImageFilter.GaussianBlur(0.8))
    pixels = np.asarray(grey, dtype=float) + np.random.default_rng(seed).normal(0, noise, (grey.height, grey.width))
    return Image.fromarray(pixels.clip(0, 255).astype("uint8")).convert("RGB")


# Real pages (see data/README.md): name -> page image at REAL_PAGE_DPI and the PDF's own text.
REAL_PAGES = ("debian-reference-en-p108", "debian-reference-de-p79")
REAL_PAGE_DPI = 144
_WHITE = (255, 255, 255)


def real_page(name: str) -> tuple[Image.Image, str]:
    folder = Path(__file__).parent / "data" / "pages"
    return Image.open(folder / f"{name}.png").convert("RGB"), (folder / f"{name}.txt").read_text(encoding="utf-8")


def _skewed(degrees: float):
    return lambda im: im.rotate(degrees, expand=True, fillcolor=_WHITE, resample=Image.Resampling.BICUBIC)


# How scans arrive, made from an upright page (PIL turns counter-clockwise for
# positive angles), with the (rotation, skew) the engine must record to stand
# each upright again: variant name -> (make, rotation, skew).
SCAN_VARIANTS = {
    "turned-90": (lambda im: im.transpose(Image.Transpose.ROTATE_270), 270, 0.0),  # lying on its right side
    "turned-180": (lambda im: im.transpose(Image.Transpose.ROTATE_180), 180, 0.0),
    "turned-270": (lambda im: im.transpose(Image.Transpose.ROTATE_90), 90, 0.0),
    "skewed+3": (_skewed(3), 0, -3.0),
    "skewed-5": (_skewed(-5), 0, 5.0),
}
