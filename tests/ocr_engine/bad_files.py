"""Bad files for input checks, built in memory in milliseconds: truncated, encrypted, bombs, zero pages."""

from __future__ import annotations

import io
import struct
import zlib

import pypdf

from tests.ocr_engine.samples import report_pdf


def truncated(data: bytes, keep: float = 0.5) -> bytes:
    """The first ``keep`` share of ``data``, like an interrupted upload."""
    return data[: max(1, int(len(data) * keep))]


def encrypted_pdf(password: str = "s3cret", data: bytes | None = None) -> bytes:
    """``data`` (default: a one-page report PDF) encrypted with AES-256 and a user password."""
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(data or report_pdf(1).data))
    writer.encrypt(user_password=password, algorithm="AES-256")
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def zero_page_pdf() -> bytes:
    """A well-formed PDF whose page tree is empty."""
    return pdf_from_objects([b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [] /Count 0 >>"])


def pdf_from_objects(objects: list[bytes]) -> bytes:
    """A PDF file of these object bodies (object 1 is the catalog), with a correct xref table."""
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def bomb_png(width: int = 30_000, height: int = 30_000) -> bytes:
    """A valid 1-bit PNG of ``width`` x ``height`` (900 MP by default) in about 100 KB.

    Built chunk by chunk from compressed zero rows, so making it needs neither
    the pixels nor much time.
    """
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    row = b"\x00" * (1 + (width + 7) // 8)  # filter byte + packed bits
    compressor = zlib.compressobj(9)
    idat = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)  # 1-bit grayscale
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")
