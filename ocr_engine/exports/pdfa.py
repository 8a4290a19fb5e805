"""PDF/A-2b searchable PDF: the searchable PDF, made an archival file and checked before it is returned.

Every page starts as in ``pdf.render``: the page image (JPEG, DeviceRGB or
DeviceGray) with the lines over it as invisible text in the embedded
``glyphless`` font. A born-digital page, one the engine read from the PDF's own
text layer (``text_source == "pdf"``), is instead the uploaded PDF's page itself,
copied object for object: its vector text and images stay as they were and no
second text layer is added (on a "mixed" page, only the lines the engine OCR'd
in pictures of text are laid over it, invisible). That page is kept only when
it is fit for PDF/A-2b on its own (its fonts embedded, no transparency, ...), as pikepdf's validator
judges it; otherwise, on pages a reviewer corrected (the original page cannot
show the corrected text) and on turned mixed pages, the page image with the invisible text is used,
so the file can still honestly claim PDF/A. Ghostscript could embed a missing
font instead, but it would make the engine depend on a system program.

``pikepdf.pdfa.save`` then adds what PDF/A asks of the whole file: the sRGB ICC
output intent (the profile ships with pikepdf), XMP metadata declaring
pdfaid:part 2, conformance B, with dc:title, xmp:CreateDate and pdf:Producer
synchronised with the document information dictionary; and it re-reads the
bytes it wrote and validates them against the veraPDF rule catalogue, raising
rather than returning a file it does not approve.
"""

from __future__ import annotations

import io
from decimal import Decimal
from os import PathLike
from typing import BinaryIO

import pikepdf
import pikepdf.pdfa

from ..errors import OcrError
from ..schema import DocumentResult, Page
from . import pdf

SourcePdf = str | PathLike | BinaryIO | bytes  # the uploaded PDF, or anything pikepdf.open reads


def render(result: DocumentResult, page_image: pdf.PageImage | None, level: str = "2b",
           source_pdf: SourcePdf | None = None) -> bytes:
    """The PDF/A-``level`` searchable PDF of ``result`` (a level of ``PDFA_LEVELS``);
    ``source_pdf`` is the uploaded PDF (None for images)."""
    searchable = pdf.render(result, page_image)
    source = _open_source(source_pdf) if source_pdf is not None else None
    try:
        originals = {} if source is None else {
            index: original for index, page in enumerate(result.pages)
            if (original := _original_page(source, page, result)) is not None
        }
        try:
            return _save(searchable, originals, level)
        except pikepdf.pdfa.PdfaError as exc:
            if not originals:  # our own pages failed: a bug of ours, never a property of the user's file
                raise _failed(level, exc) from exc
        # Checking each original page alone costs ~0.3 s a page (its fonts are
        # parsed again), so it is done only once the whole file has failed.
        fit = {index: original for index, original in originals.items() if _fit_for_pdfa(original, level)}
        try:
            return _save(searchable, fit, level)
        except pikepdf.pdfa.PdfaError as exc:
            raise _failed(level, exc) from exc
    finally:
        if source is not None:
            source.close()


def _save(searchable: bytes, originals: dict[int, pikepdf.Page], level: str) -> bytes:
    """The searchable PDF with ``originals`` in place of those pages, as PDF/A; raises PdfaError."""
    with pikepdf.open(io.BytesIO(searchable)) as out:
        for page in out.pages:
            _drop_empty_transition(page)
        for index, original in originals.items():
            out.pages[index] = original
        buffer = io.BytesIO()
        pikepdf.pdfa.save(out, buffer, level)
        return buffer.getvalue()


def _failed(level: str, exc: pikepdf.pdfa.PdfaError) -> OcrError:
    return OcrError(f"The PDF/A-{level} file did not pass its check: {exc.report.summary(5)}", code="pdfa_failed")


def _open_source(source_pdf: SourcePdf) -> pikepdf.Pdf | None:
    """The uploaded PDF; None when pikepdf cannot open it (then every page is rasterised)."""
    if isinstance(source_pdf, bytes):
        source_pdf = io.BytesIO(source_pdf)
    try:
        return pikepdf.open(source_pdf)
    except (pikepdf.PdfError, pikepdf.PasswordError):
        return None


def _original_page(source: pikepdf.Pdf, page: Page, result: DocumentResult) -> pikepdf.Page | None:
    """The uploaded page to keep in place of ``page``'s image and text, or None to keep those."""
    if page.text_source not in ("pdf", "mixed") or any(line.original_text is not None for line in page.lines):
        return None
    if not 1 <= page.page_number <= len(source.pages):
        return None
    original = source.pages[page.page_number - 1]
    rotation = _quarter_turns(original.obj.get("/Rotate", 0))
    if rotation is None:
        return None
    original.obj.Rotate = rotation  # as written on the page read, so every viewer turns it the same way
    if page.text_source == "mixed" and not _add_ocr_lines(original, page, result):
        return None
    _drop_empty_transition(original)
    _drop_internal_links(original)
    _drop_cidsets(original.obj.get("/Resources", pikepdf.Dictionary()), seen=set())
    return original


def _add_ocr_lines(original: pikepdf.Page, page: Page, result: DocumentResult) -> bool:
    """Lay the invisible text of the lines OCR'd on a "mixed" page (pictures of text) over the original page.

    The lines are in the pixels of the page as pdfium rendered it: its crop box,
    upright. A page turned by /Rotate, or by the engine, is in another frame than
    its content stream: False, and it is rasterised instead.
    """
    if original.obj.Rotate or page.rotation or page.skew:
        return False
    text = pdf.invisible_text(result, page, lambda line: line.source == "ocr")
    with pikepdf.open(io.BytesIO(text)) as overlay:
        original.add_overlay(overlay.pages[0], pikepdf.Rectangle(original.cropbox))
    return True


def _quarter_turns(rotate: pikepdf.Object) -> int | None:
    """A page's /Rotate as 0, 90, 180 or 270; None when it is not a multiple of 90 (the spec asks for one).

    Viewers disagree on any other value (pdfium truncates 135 to 90, pdf.js reads it as 0, a string fails
    pikepdf's arithmetic): such a page is rasterised as the engine rendered and read it, never kept.
    /Rotate inherited from the page tree is already on the page: qpdf pushes it down when it lists pages.
    """
    # pikepdf gives a PDF integer as int, a real as Decimal, a boolean as bool, anything else as an Object.
    if isinstance(rotate, bool) or not isinstance(rotate, (int, Decimal)) or rotate % 90:
        return None
    return int(rotate) % 360


def _drop_empty_transition(page: pikepdf.Page) -> None:
    # reportlab gives every page an empty /Trans (slide-show transition), ours and
    # many an upload's: it means nothing, and the validator does not approve keys it does not check.
    if "/Trans" in page.obj and not page.obj.Trans.keys():
        del page.obj.Trans


def _drop_internal_links(page: pikepdf.Page) -> None:
    """Remove links into the uploaded document (this in-memory copy of it is never saved).

    A link's destination is a page of the upload, which the export may not hold;
    copying the link would copy that page along, content and all, unseen.
    """
    annotations = page.obj.get("/Annots")
    if annotations is None:
        return
    page.obj.Annots = pikepdf.Array([
        annotation for annotation in annotations
        if "/Dest" not in annotation and annotation.get("/A", pikepdf.Dictionary()).get("/S") != "/GoTo"
    ])


def _drop_cidsets(resources: pikepdf.Dictionary, seen: set) -> None:
    """Remove the /CIDSet of embedded CID fonts, here and in the page's form XObjects.

    PDF/A-2 makes a CIDSet optional (PDF/A-1 required one); the validator cannot
    check one against a TrueType-based subset, so it approves no file that has
    one, and xdvipdfmx (dblatex, LaTeX) writes one for every such font.
    """
    for font in resources.get("/Font", pikepdf.Dictionary()).values():
        for descendant in font.get("/DescendantFonts", pikepdf.Array()):
            descriptor = descendant.get("/FontDescriptor")
            if descriptor is not None and "/CIDSet" in descriptor:
                del descriptor.CIDSet
    for xobject in resources.get("/XObject", pikepdf.Dictionary()).values():
        if xobject.get("/Subtype") == "/Form" and xobject.objgen not in seen:
            seen.add(xobject.objgen)
            _drop_cidsets(xobject.get("/Resources", pikepdf.Dictionary()), seen)


def _fit_for_pdfa(original: pikepdf.Page, level: str) -> bool:
    """Whether the page alone, prepared as ``save`` prepares the file, passes the validator."""
    with pikepdf.new() as alone:
        alone.pages.append(original)
        pikepdf.pdfa.prepare(alone, level)
        return pikepdf.pdfa.check(alone, level).passed
