"""Image files through Pillow: every page decoded once at open, then on demand as RGB."""

from __future__ import annotations

import io
import struct
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

from ..errors import CorruptFile, ImageTooLarge, OcrError, TooManyPages, UnsupportedFileType
from .limits import Limits

# Pillow decoders to try for each detected type; "MPO" is how Pillow names the
# multi-picture JPEGs that many cameras write (the first picture is the photo).
_PIL_FORMATS = {
    "image/png": ("PNG",),
    "image/jpeg": ("JPEG", "MPO"),
    "image/tiff": ("TIFF",),
    "image/bmp": ("BMP",),
    "image/webp": ("WEBP",),
}
# Modes a decoder can produce that ``to_rgb`` turns into RGB.
_MODES = {"1", "L", "P", "LA", "PA", "RGB", "RGBA", "RGBa", "RGBX", "CMYK", "YCbCr", "LAB", "HSV",
          "I", "F", "I;16", "I;16L", "I;16B", "I;16N"}
_WHITE = (255, 255, 255, 255)


class ImagePages:
    """An open image file; a multi-page TIFF has one page per frame, other types one page.

    Every page's header is checked at open (pixels, colour mode); with ``decode``
    every page is also decoded once, so that a truncated or corrupt file is
    refused before its job starts, not halfway through it. Pages are decoded
    again when rendered: only one is held in memory.
    """

    kind = "image"

    def __init__(self, source: bytes | Path, *, media_type: str, limits: Limits, decode: bool = True):
        self._limits = limits
        with _decoding("The image", limits):
            # Only TIFF pages are pages; frames of other types are animations
            # or previews, so the first frame is the picture. Counted before
            # Pillow parses any page.
            self.page_count = _tiff_page_count(source, limits.max_pages) if media_type == "image/tiff" else 1
            self._image = Image.open(io.BytesIO(source) if isinstance(source, bytes) else source,
                                     formats=_PIL_FORMATS[media_type])
        try:
            for page_number in range(1, self.page_count + 1):
                self._load(page_number, decode=decode)
        except BaseException:
            self.close()
            raise

    def page_scale(self, page_number: int, scale: float) -> float:
        return 1.0  # an image is read at its own resolution

    def page_dpi(self, page_number: int, scale: float) -> float | None:
        dpi = self._load(page_number).info.get("dpi")
        # Many files carry no resolution or a placeholder such as 1 dpi.
        return float(dpi[0]) if dpi and 50 <= dpi[0] <= 4800 else None

    def render(self, page_number: int, scale: float) -> Image.Image:
        frame = self._load(page_number)
        try:
            upright = ImageOps.exif_transpose(frame)
        except Exception:
            # Malformed EXIF is common in phone photos and Pillow fails on it in
            # many ways; it only costs the orientation, so read the page as stored.
            upright = frame.copy()
        image = to_rgb(upright)
        if "dpi" in frame.info:  # compositing and 16-bit conversion start new images without it
            image.info["dpi"] = frame.info["dpi"]
        return image

    def close(self) -> None:
        self._image.close()

    def _load(self, page_number: int, decode: bool = True) -> Image.Image:
        what = f"Page {page_number} of the image" if self.page_count > 1 else "The image"
        with _decoding(what, self._limits):
            if self._image.tell() != page_number - 1:
                self._image.seek(page_number - 1)
            width, height = self._image.size
            if width * height > self._limits.max_pixels:
                raise ImageTooLarge(f"{what} is {width}x{height} pixels ({width * height:,}); the limit is "
                                    f"{self._limits.max_pixels:,}. Scan or export it at a lower resolution.")
            if self._image.mode not in _MODES:
                raise UnsupportedFileType(f"{what} uses the colour mode {self._image.mode!r}, which is not "
                                          "supported. Save it as RGB or grayscale and upload it again.")
            if decode:
                self._image.load()
        return self._image


def _tiff_page_count(source: bytes | Path, limit: int) -> int:
    """The number of pages (IFDs in the main chain) of a TIFF, refusing more than ``limit``.

    Pillow's ``n_frames`` parses every directory in full: about 1.4 s of CPU for
    10,000 tiny frames in 1 MB. Walking the chain of offsets costs three small
    reads per page, and no page is decoded before the count is known to be allowed.
    """
    stream = io.BytesIO(source) if isinstance(source, bytes) else open(source, "rb")  # noqa: SIM115
    with stream:
        size = stream.seek(0, io.SEEK_END)
        stream.seek(0)
        header = stream.read(16)
        order = "<" if header[:2] == b"II" else ">"
        big = struct.unpack(order + "H", header[2:4])[0] == 43  # BigTIFF: 8-byte counts and offsets
        count_format, entry_size, offset_format = ("Q", 20, "Q") if big else ("H", 12, "I")
        count_size, offset_size = struct.calcsize(count_format), struct.calcsize(offset_format)
        offset = struct.unpack(order + offset_format, header[8:16] if big else header[4:8])[0]
        seen: set[int] = set()
        while offset:
            if offset in seen or offset + count_size > size:
                raise CorruptFile("The image is damaged or incomplete and cannot be read: its list of pages loops "
                                  "or points past the end of the file. It may have been cut off during upload; "
                                  "upload the complete file again.")
            seen.add(offset)
            stream.seek(offset)
            entries = struct.unpack(order + count_format, stream.read(count_size))[0]
            stream.seek(offset + count_size + entries * entry_size)
            raw_next = stream.read(offset_size)
            # A cut-off last offset ends the chain, as in Pillow.
            offset = struct.unpack(order + offset_format, raw_next)[0] if len(raw_next) == offset_size else 0
    if len(seen) > limit:
        raise TooManyPages(f"The TIFF file has {len(seen)} pages; the limit is {limit}. "
                           "Split it into smaller files or choose a page range.")
    return len(seen)


@contextmanager
def _decoding(what: str, limits: Limits) -> Iterator[None]:
    """Turn Pillow's failures on bad data into typed errors.

    Pillow's own decompression-bomb guard (``Image.MAX_IMAGE_PIXELS``) stays as
    set process-wide; its warning is silenced here because ``Limits.max_pixels``
    is checked from the header before decoding, and its error becomes
    ``ImageTooLarge`` (it fires only above 2 x MAX_IMAGE_PIXELS, about 179 MP).
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            yield
    except OcrError:
        raise
    except Image.DecompressionBombError:
        limit = min(limits.max_pixels, 2 * (Image.MAX_IMAGE_PIXELS or limits.max_pixels))
        raise ImageTooLarge(f"{what} declares more than {limit:,} pixels, too many to process safely. "
                            "Scan or export it at a lower resolution.") from None
    except Exception as exc:
        # Pillow raises OSError, SyntaxError, ValueError, struct.error, EOFError...
        # on malformed data, depending on the codec.
        raise CorruptFile(f"{what} is damaged or incomplete and cannot be read; it may have been cut off "
                          "during upload. Upload the complete file again.") from exc


def to_rgb(image: Image.Image) -> Image.Image:
    """Any decoded mode as 8-bit RGB; transparency is composited onto white paper."""
    if image.mode.startswith("I") or image.mode == "F":
        image = _to_8bit(image)
    if image.mode in ("LA", "PA", "RGBA", "RGBa") or "transparency" in image.info:
        # Converting straight to RGB would drop alpha and show black where the
        # page is transparent; text is dark, so it would vanish.
        rgba = image.convert("RGBA")
        return Image.alpha_composite(Image.new("RGBA", rgba.size, _WHITE), rgba).convert("RGB")
    return image if image.mode == "RGB" else image.convert("RGB")


def _to_8bit(image: Image.Image) -> Image.Image:
    """16-bit and 32-bit grayscale to "L"; Pillow's own conversion clips at 255 and turns pages white."""
    values = np.asarray(image)
    if image.mode.startswith("I;16"):
        scaled = (values.astype(np.uint32) + 128) // 257  # 0..65535 onto 0..255
    else:
        # "I" (32-bit) and "F" (float) have no fixed range: keep 8-bit data as is,
        # stretch anything else over the range the page actually uses.
        lo, hi = float(values.min()), float(values.max())
        if image.mode == "F" and lo >= 0 and hi <= 1:
            scaled = values * 255.0
        elif lo >= 0 and hi <= 255:
            scaled = values
        else:
            scaled = (values - lo) * (255.0 / ((hi - lo) or 1.0))
    return Image.fromarray(np.clip(np.rint(scaled), 0, 255).astype(np.uint8))
