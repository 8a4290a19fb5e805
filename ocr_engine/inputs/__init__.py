"""Input stage: validate a PDF or image and hand out its pages as RGB images.

Contract for the stages after it:

* ``open_document`` accepts bytes or a path, detects the type by signature and
  validates the whole file (size, type, encryption, page count, pixel count,
  truncation) before returning, raising an ``ocr_engine.errors.InputError``
  subclass with a stable ``code`` otherwise.
* ``Document.render`` / ``iter_pages`` give one RGB page at a time: PDF pages
  rendered by pdfium at ``scale`` x 72 DPI, images at their own size, upright
  (EXIF orientation applied) and with transparency composited onto white.
* Page numbers are 1-based everywhere; ``parse_page_range`` turns ``"1-3,7"``
  into ``[1, 2, 3, 7]``.
"""

from .detect import SUPPORTED_MEDIA_TYPES, detect_media_type
from .document import Document, open_document
from .limits import Limits
from .pages import parse_page_range

__all__ = ["SUPPORTED_MEDIA_TYPES", "Document", "Limits", "detect_media_type", "open_document",
           "parse_page_range"]
