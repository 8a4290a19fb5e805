"""The rendered page kept for the review UI: a JPEG of what the engine saw and a small WebP thumbnail."""

from __future__ import annotations

import io

from PIL import Image

JPEG_QUALITY = 85
THUMBNAIL_QUALITY = 70


def encode_page(image: Image.Image, *, thumbnail_size: int) -> tuple[bytes, bytes]:
    """(page JPEG at full size, WebP thumbnail fitting ``thumbnail_size`` px)."""
    rgb = image if image.mode == "RGB" else image.convert("RGB")
    page = io.BytesIO()
    # Same pixels as the engine saw: overlay coordinates map 1:1 onto this image.
    rgb.save(page, format="JPEG", quality=JPEG_QUALITY, optimize=True)
    thumb = rgb.copy()
    thumb.thumbnail((thumbnail_size, thumbnail_size), Image.Resampling.LANCZOS)
    small = io.BytesIO()
    thumb.save(small, format="WEBP", quality=THUMBNAIL_QUALITY)
    return page.getvalue(), small.getvalue()
