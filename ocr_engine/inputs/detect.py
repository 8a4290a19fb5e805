"""File type detection by signature (magic bytes), never by file name.

A name is whatever the user's computer called the file; the bytes decide. Known
but unsupported formats are named in the error so the user knows what to convert.
"""

from __future__ import annotations

import struct

from ..errors import EmptyDocument, UnsupportedFileType

# pdfium accepts a PDF header anywhere in the first 1024 bytes (some generators
# prepend junk), so detection needs that much of the file.
HEAD_BYTES = 1024

SUPPORTED_MEDIA_TYPES = {
    "application/pdf": "PDF",
    "image/png": "PNG",
    "image/jpeg": "JPEG",
    "image/tiff": "TIFF",
    "image/bmp": "BMP",
    "image/webp": "WebP",
}
SUPPORTED_NAMES = "PDF, PNG, JPEG, TIFF, BMP and WebP"

_CONVERT_IMAGE = "Convert it to PNG or JPEG first."
_EXPORT_PDF = "Save or export it as PDF first."

# (prefix, what it is, what to do); checked only when no supported type matched.
_KNOWN_UNSUPPORTED = (
    (b"GIF87a", "a GIF image", _CONVERT_IMAGE),
    (b"GIF89a", "a GIF image", _CONVERT_IMAGE),
    (b"PK\x03\x04", "a ZIP archive (Word, Excel, PowerPoint and OpenDocument files are ZIP archives too)",
     "Upload the PDF or image files themselves, or export the document as PDF."),
    (b"PK\x05\x06", "an empty ZIP archive", "Upload the PDF or image files themselves."),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "a legacy Microsoft Office file (.doc, .xls or .ppt)", _EXPORT_PDF),
    (b"{\\rtf", "an RTF document", _EXPORT_PDF),
    (b"%!PS", "a PostScript file", _EXPORT_PDF),
    (b"AT&TFORM", "a DjVu document", _EXPORT_PDF),
    (b"\x1f\x8b", "a gzip archive", "Unpack it and upload the files inside."),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive", "Unpack it and upload the files inside."),
    (b"Rar!\x1a\x07", "a RAR archive", "Unpack it and upload the files inside."),
    (b"8BPS", "a Photoshop (PSD) image", _CONVERT_IMAGE),
    (b"\xff\x4f\xff\x51", "a JPEG 2000 image", _CONVERT_IMAGE),
    (b"\x00\x00\x00\x0cjP  \r\n\x87\n", "a JPEG 2000 image", _CONVERT_IMAGE),
    (b"\xff\x0a", "a JPEG XL image", _CONVERT_IMAGE),
    (b"\x00\x00\x00\x0cJXL \r\n\x87\n", "a JPEG XL image", _CONVERT_IMAGE),
    (b"\x00\x00\x01\x00", "an icon (ICO) file", _CONVERT_IMAGE),
)
_HEIF_BRANDS = {b"heic", b"heix", b"heim", b"heis", b"hevc", b"hevx", b"hevm", b"hevs", b"mif1", b"msf1"}
# Sizes of the BMP info headers Pillow reads; "BM" alone is too weak a signature.
_BMP_HEADER_SIZES = {12, 16, 40, 52, 56, 64, 108, 124}


def detect_media_type(head: bytes) -> str:
    """Return the media type of a file from its first ``HEAD_BYTES`` bytes.

    Raises ``EmptyDocument`` for an empty file and ``UnsupportedFileType`` for
    anything else that is not one of ``SUPPORTED_MEDIA_TYPES``.
    """
    if not head:
        raise EmptyDocument("The file is empty (0 bytes). Upload the document again.")
    media_type = _supported(head)
    if media_type:
        return media_type
    what, hint = _describe_unsupported(head)
    if what is None:
        raise UnsupportedFileType("The file type is not recognised (it is judged by the content, not the name). "
                                  f"Check that the file is a PDF or an image. Supported formats: {SUPPORTED_NAMES}.")
    raise UnsupportedFileType(f"This file looks like {what}, which cannot be read. {hint} "
                              f"Supported formats: {SUPPORTED_NAMES}.")


def _supported(head: bytes) -> str | None:
    if head.startswith(b"%PDF-"):
        return "application/pdf"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head[:4] in (b"II*\x00", b"MM\x00*", b"II+\x00", b"MM\x00+"):  # classic and BigTIFF
        return "image/tiff"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    if head[:2] == b"BM" and len(head) >= 18 and struct.unpack("<I", head[14:18])[0] in _BMP_HEADER_SIZES:
        return "image/bmp"
    if b"%PDF-" in head[:HEAD_BYTES]:  # checked last: image metadata may quote it
        return "application/pdf"
    return None


def _describe_unsupported(head: bytes) -> tuple[str | None, str]:
    for prefix, what, hint in _KNOWN_UNSUPPORTED:
        if head.startswith(prefix):
            return what, hint
    if head[4:8] == b"ftyp":  # ISO base media: HEIF/AVIF photos, MP4/MOV video
        brand = head[8:12]
        if brand in (b"avif", b"avis"):
            return "an AVIF image", _CONVERT_IMAGE
        if brand in _HEIF_BRANDS:
            return "a HEIC/HEIF photo (the iPhone default)", _CONVERT_IMAGE
        return "a video or audio file", "Upload a PDF or an image instead."
    if head[:4] == b"RIFF":
        return "a RIFF media file (audio or video)", "Upload a PDF or an image instead."
    return _describe_text(head)


def _describe_text(head: bytes) -> tuple[str | None, str]:
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError as exc:
        # The head may end in the middle of a multi-byte character.
        if exc.start < len(head) - 3:
            return None, ""
        text = head[: exc.start].decode("utf-8")
    if "\x00" in text:
        return None, ""
    start = text.lstrip("\ufeff \t\r\n").lower()
    if start.startswith("<svg") or (start.startswith("<?xml") and "<svg" in start):
        return "an SVG image", _CONVERT_IMAGE
    if start.startswith(("<!doctype html", "<html")):
        return "an HTML page", "Print it to PDF first."
    if start.startswith("<?xml"):
        return "an XML file", "Upload a PDF or an image instead."
    return "a plain text file", "It already contains text; upload a PDF or an image to recognise."
