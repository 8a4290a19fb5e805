"""PDF pages through pypdfium2, one page in memory at a time."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
from PIL import Image

from ..errors import CorruptFile, EmptyDocument, EncryptedDocument, TooManyPages, WrongPassword
from .limits import Limits

# PDFium must not be called from two threads at once, even for different
# documents; a web process validating uploads in a thread pool would crash.
_PDFIUM_LOCK = threading.RLock()

T = TypeVar("T")

_RENDERS_PER_OPEN = 32

_DAMAGED = ("The PDF file is damaged or incomplete and cannot be opened; it may have been cut off "
            "during upload. Download or export it again and upload the new copy.")


class PdfPages:
    """An open PDF: page count at open, pages rendered on demand.

    A path is handed to pdfium, which reads the file as pages need it; bytes are
    read in place. Either way no page is loaded until it is rendered.
    """

    kind = "pdf"

    def __init__(self, source: bytes | Path, *, password: str | None, limits: Limits):
        self._limits = limits
        self._source = source  # bytes stay referenced: pdfium reads them in place until close()
        self._password = password
        self._renders = 0
        self._pdf = self._open()
        try:
            with _PDFIUM_LOCK:
                self.page_count = len(self._pdf)
            if self.page_count == 0:
                raise EmptyDocument("The PDF has no pages. Upload a document with at least one page.")
            if self.page_count > limits.max_pages:
                raise TooManyPages(f"The PDF has {self.page_count} pages; the limit is {limits.max_pages}. "
                                   "Split it into smaller documents or choose a page range.")
        except BaseException:
            self.close()
            raise

    def _open(self) -> pdfium.PdfDocument:
        with _PDFIUM_LOCK:
            pdf = pdfium.PdfDocument(_load(self._source, self._password))
            # Filled-in form fields are part of what the user sees; pdfium draws
            # them only with a form environment made before any page is loaded.
            pdf.init_forms()
            return pdf

    def page_scale(self, page_number: int, scale: float) -> float:
        with _PDFIUM_LOCK:
            width, height = self._pdf.get_page_size(page_number - 1)
        return _fit_scale(width, height, scale, self._limits.max_render_pixels)

    def page_dpi(self, page_number: int, scale: float) -> float:
        return 72.0 * self.page_scale(page_number, scale)

    def render(self, page_number: int, scale: float) -> Image.Image:
        # pdfium keeps every object it has parsed until the document is closed,
        # about the compressed size of each page read; reopening now and then
        # keeps a long document at flat memory (measured: +50 MB over 200 pages
        # without it).
        if self._renders == _RENDERS_PER_OPEN:
            with _PDFIUM_LOCK:
                self._pdf.close()
            self._pdf, self._renders = self._open(), 0
        self._renders += 1
        with _PDFIUM_LOCK:
            return self._render(page_number, scale)

    def _render(self, page_number: int, scale: float) -> Image.Image:
        try:
            page = self._pdf[page_number - 1]
        except pdfium.PdfiumError:
            raise CorruptFile(f"Page {page_number} of the PDF is damaged and cannot be read.") from None
        try:
            width, height = page.get_size()
            if width <= 0 or height <= 0:
                raise CorruptFile(f"Page {page_number} of the PDF has no area and cannot be rendered.")
            bitmap = page.render(scale=_fit_scale(width, height, scale, self._limits.max_render_pixels),
                                 draw_annots=True)
            try:
                # pdfium's default BGR bitmap becomes an RGB copy in to_pil(), so
                # the image stays valid after the bitmap is freed.
                return bitmap.to_pil()
            finally:
                bitmap.close()
        finally:
            page.close()

    def with_page(self, page_number: int, read: Callable[[pdfium.PdfPage], T]) -> T:
        """Call ``read`` with the open pdfium page, under the lock pdfium needs (text layer, objects)."""
        with _PDFIUM_LOCK:
            page = self._pdf[page_number - 1]
            try:
                return read(page)
            finally:
                page.close()

    def close(self) -> None:
        with _PDFIUM_LOCK:
            self._pdf.close()
        self._source = None


def _load(source: bytes | Path, password: str | None):
    """Open with pdfium's C API: pypdfium2's constructor reports a PDF with zero
    pages as a load failure, which would hide ``EmptyDocument`` behind ``CorruptFile``."""
    pw = None if password is None else (password + "\x00").encode("utf-8")
    if isinstance(source, bytes):
        raw = pdfium_c.FPDF_LoadMemDocument64(source, len(source), pw)
    else:
        raw = pdfium_c.FPDF_LoadDocument((str(source) + "\x00").encode("utf-8"), pw)
    if raw:
        return raw
    error = pdfium_c.FPDF_GetLastError()
    if error == pdfium_c.FPDF_ERR_PASSWORD:
        if password:
            raise WrongPassword("The password for this PDF is wrong. Check it and try again.")
        raise EncryptedDocument("This PDF is protected by a password. Provide the password to open it.")
    if error == pdfium_c.FPDF_ERR_SECURITY:
        raise EncryptedDocument("This PDF uses an encryption method that cannot be opened. "
                                "Remove the protection (for example, print it to a new PDF) and upload it again.")
    raise CorruptFile(_DAMAGED)


def _fit_scale(width: float, height: float, scale: float, max_pixels: int) -> float:
    """``scale``, lowered just enough that the rendered page has at most ``max_pixels``.

    pypdfium2 sizes the bitmap as ``ceil(points * scale)``, which the check mirrors.
    """
    def pixels(s: float) -> int:
        return math.ceil(width * s) * math.ceil(height * s)

    if pixels(scale) <= max_pixels:
        return scale
    fitted = math.sqrt(max_pixels / (width * height))
    while pixels(fitted) > max_pixels:  # the ceilings can add a row and a column
        fitted *= 0.999
    return fitted
