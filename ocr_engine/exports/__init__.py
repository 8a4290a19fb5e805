"""Exports of the normalized result: plain text, Markdown, JSON, hOCR, ALTO and searchable PDF (or PDF/A).

Every format is built from the normalized ``DocumentResult`` alone (the PDF also
needs the page images), reading text from lines so reviewers' corrections reach
every format.
"""

from __future__ import annotations

from collections.abc import Callable

from PIL import Image

from ..errors import UnsupportedOption
from ..schema import DocumentResult
from . import alto, hocr, jsonfmt, markdown, pagexml, text

# format -> (media type, file extension)
FORMATS = {
    "json": ("application/json", "json"),
    "txt": ("text/plain; charset=utf-8", "txt"),
    "md": ("text/markdown; charset=utf-8", "md"),
    "hocr": ("text/html; charset=utf-8", "hocr"),
    "alto": ("application/xml", "xml"),
    "pdf": ("application/pdf", "pdf"),
    "page": ("application/xml", "page.xml"),  # PAGE XML 2019; a ZIP of one file per page for longer results
}

PDFA_LEVELS = ("2b",)  # the PDF/A part and conformance level offered for the "pdf" export
# The name command lines and the watched folder take for the PDF/A export: the "pdf" export with pdfa="2b".
PDFA_FORMAT = "pdfa"


def export_of(name: str) -> tuple[str, str | None]:
    """``(fmt, pdfa)`` for ``render`` from a format name that may be ``PDFA_FORMAT``."""
    return ("pdf", PDFA_LEVELS[0]) if name == PDFA_FORMAT else (name, None)

_RENDERERS: dict[str, Callable[[DocumentResult], bytes]] = {
    "json": jsonfmt.render,
    "txt": text.render,
    "md": markdown.render,
    "hocr": hocr.render,
    "alto": alto.render,
    "page": pagexml.render,
}


def render(
    result: DocumentResult, fmt: str, page_image: Callable[[int], Image.Image | None] | None = None, *,
    pdfa: str | None = None, source_pdf=None,
) -> bytes:
    """The result in format ``fmt`` (a key of ``FORMATS``).

    ``page_image(page_number)`` is needed for "pdf" only: it returns the page
    image the engine read, or None when it is gone (then the PDF fails with code
    ``page_image_missing``). ``pdfa`` ("2b", "pdf" only) makes it a PDF/A file;
    ``source_pdf``, the uploaded PDF, lets it keep the born-digital pages as
    they were (see ``pdfa``).
    """
    check_options(fmt, pdfa)
    if fmt == "pdf":
        # Imported here so the engine, which imports this package for page_text,
        # does not load reportlab or pikepdf.
        if pdfa is not None:
            from . import pdfa as pdfa_export

            return pdfa_export.render(result, page_image, pdfa, source_pdf)
        from . import pdf

        return pdf.render(result, page_image)
    return _RENDERERS[fmt](result)


def check_options(fmt: str, pdfa: str | None = None) -> None:
    """Raise UnsupportedOption (code ``unsupported_option``) unless ``render`` makes ``fmt`` with ``pdfa``."""
    if fmt not in FORMATS:
        raise UnsupportedOption(f"Unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}.")
    if pdfa is not None and fmt != "pdf":
        raise UnsupportedOption(f"PDF/A is a form of the pdf export, not of {fmt!r}.")
    if pdfa is not None and pdfa not in PDFA_LEVELS:
        raise UnsupportedOption(f"PDF/A {pdfa!r} is not offered; choose one of {', '.join(PDFA_LEVELS)}.")
