"""Opening a document: size limit, type by signature, then the PDF or image reader."""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterable, Iterator
from functools import cached_property
from pathlib import Path
from typing import Protocol

from PIL import Image

from ..config import DEFAULT_SCALE
from ..errors import FileTooLarge, InputError, UnsupportedOption
from .detect import HEAD_BYTES, detect_media_type
from .image import ImagePages
from .limits import Limits
from .pages import check_page, parse_page_range
from .pdf import PdfPages

DEFAULT_LIMITS = Limits()
Source = bytes | bytearray | memoryview | str | os.PathLike


class _Pages(Protocol):
    kind: str
    page_count: int

    def render(self, page_number: int, scale: float) -> Image.Image: ...
    def page_scale(self, page_number: int, scale: float) -> float: ...
    def page_dpi(self, page_number: int, scale: float) -> float | None: ...
    def close(self) -> None: ...


def open_document(source: Source, *, password: str | None = None, limits: Limits = DEFAULT_LIMITS,
                  filename: str | None = None, decode: bool = True) -> Document:
    """Open and fully validate a PDF or image given as bytes or a path.

    Raises an ``InputError`` subclass for anything a worker could not process, so
    a caller can validate an upload before queueing it. Cheap: no PDF page is
    rendered; image pages are decoded once (to catch truncation) and dropped.
    ``decode=False`` checks images from their headers only (type, page count,
    pixels, colour mode): what a web process can afford per upload; a truncated
    image then fails when it is opened with ``decode=True`` or rendered.
    A ``str`` is always a path, never file content.
    """
    if isinstance(source, (bytes, bytearray, memoryview)):
        data, path = bytes(source), None
        size, head = len(data), data[:HEAD_BYTES]
    else:
        data, path = None, Path(source)
        if not _is_file(path):
            raise InputError(f"File not found: {path}. Check the path and try again.", code="file_not_found")
        filename = filename or path.name
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(HEAD_BYTES)
    if size > limits.max_file_bytes:
        raise FileTooLarge(f"The file is {_human(size)}; the limit is {_human(limits.max_file_bytes)}. "
                           "Split the document or reduce its resolution and upload it again.")
    media_type = detect_media_type(head)
    readable = data if path is None else path
    if media_type == "application/pdf":
        pages: _Pages = PdfPages(readable, password=password, limits=limits)
    else:
        pages = ImagePages(readable, media_type=media_type, limits=limits, decode=decode)
    return Document(pages, media_type=media_type, filename=filename, size_bytes=size, data=data, path=path)


class Document:
    """A validated document whose pages are rendered on demand, one at a time.

    Use it as a context manager: ``close()`` releases the pdfium document or the
    image file. Page numbers are 1-based. ``scale`` is the PDF render scale
    (2.0 = 144 DPI); images are read at their own size and ignore it.
    """

    def __init__(self, pages: _Pages, *, media_type: str, filename: str | None, size_bytes: int,
                 data: bytes | None, path: Path | None):
        self._pages = pages
        self._data = data
        self._path = path
        self._closed = False
        self.media_type = media_type
        self.filename = filename
        self.size_bytes = size_bytes

    @property
    def kind(self) -> str:
        """``"pdf"`` or ``"image"``."""
        return self._pages.kind

    @property
    def page_count(self) -> int:
        return self._pages.page_count

    @cached_property
    def sha256(self) -> str:
        """Hex SHA-256 of the file's bytes; a path is hashed in chunks, not read whole."""
        if self._data is not None:
            return hashlib.sha256(self._data).hexdigest()
        with self._path.open("rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()

    def select_pages(self, spec: str | None) -> list[int]:
        """Pages a spec such as ``"1-3,7"`` selects; ``None`` or ``""`` is every page."""
        return parse_page_range(spec, self.page_count)

    def render(self, page_number: int, scale: float = DEFAULT_SCALE) -> Image.Image:
        """The page as an RGB image without alpha, owned by the caller."""
        self._check(page_number, scale)
        return self._pages.render(page_number, scale)

    def page_scale(self, page_number: int, scale: float = DEFAULT_SCALE) -> float:
        """The scale ``render`` uses for a requested ``scale``: lower than asked only
        for a PDF page that would exceed ``Limits.max_render_pixels``; 1.0 for images."""
        self._check(page_number, scale)
        return self._pages.page_scale(page_number, scale)

    def page_dpi(self, page_number: int, scale: float = DEFAULT_SCALE) -> float | None:
        """Resolution of the rendered page: 72 x scale for PDF pages, the file's own
        DPI for images (``None`` when the file does not say)."""
        self._check(page_number, scale)
        return self._pages.page_dpi(page_number, scale)

    def with_pdf_page(self, page_number: int, read):
        """``read(pdfium_page)`` for a PDF page (its text layer and objects); None for images."""
        self._check(page_number, DEFAULT_SCALE)
        return self._pages.with_page(page_number, read) if self.kind == "pdf" else None

    def iter_pages(self, pages: Iterable[int] | None = None,
                   scale: float = DEFAULT_SCALE) -> Iterator[tuple[int, Image.Image]]:
        """Yield ``(page_number, image)``, rendering each page only when asked for the next."""
        numbers = list(range(1, self.page_count + 1)) if pages is None else list(pages)
        for number in numbers:  # all checked first, so a bad number fails before any work
            self._check(number, scale)
        for number in numbers:
            yield number, self.render(number, scale)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._pages.close()

    def __enter__(self) -> Document:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Document {self.filename or '(bytes)'} {self.media_type} pages={self.page_count}>"

    def _check(self, page_number: int, scale: float) -> None:
        if self._closed:
            raise ValueError("The document is closed.")
        if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
            raise UnsupportedOption(f"Render scale must be a positive number, got {scale!r}.")
        if not isinstance(page_number, int) or isinstance(page_number, bool):
            raise TypeError(f"page_number must be an int, got {page_number!r}")
        check_page(page_number, self.page_count)


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # a name too long for the file system is no file either
        return False


def _human(size: int) -> str:
    for unit, factor in (("GB", 2**30), ("MB", 2**20), ("KB", 2**10)):
        if size >= factor:
            return f"{size / factor:.1f} {unit}"
    return f"{size} bytes"
