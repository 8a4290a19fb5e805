"""ZIPs that zipfile will not write: members compressed by bzip2 and LZMA that inflate far past any limit,
directories that claim more entries than they hold, names no file may have."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

# bz2.compress(bytes(1 << 30), 9): 785 bytes that inflate to 1 GiB of zeros (10 s to make, so shipped).
GIGABYTE_OF_ZEROS_BZ2 = (Path(__file__).parent / "gigabyte_of_zeros.bz2").read_bytes()
GIGABYTE = 1 << 30
GIGABYTE_OF_ZEROS_CRC = 0x5B64C2B0  # zlib.crc32 of those zeros
LZMA_ZEROS = 32 << 20


def zip_of(members: list[tuple[str | zipfile.ZipInfo, bytes]], compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members:
            archive.writestr(name, data)
    return buffer.getvalue()


def bzip2_gigabyte_zip(page: bytes) -> bytes:
    """One real page and ``bomb.png``: the 785 bytes of bzip2 (method 12) that inflate to 1 GiB, with the
    sizes and CRC of that gigabyte in its headers, as a bzip2-capable zip tool writes them."""
    archive = bytearray(zip_of([("page.png", page), ("bomb.png", GIGABYTE_OF_ZEROS_BZ2)], zipfile.ZIP_STORED))
    local = zipfile.ZipFile(io.BytesIO(bytes(archive))).getinfo("bomb.png").header_offset
    struct.pack_into("<H", archive, local + 8, zipfile.ZIP_BZIP2)
    struct.pack_into("<L", archive, local + 14, GIGABYTE_OF_ZEROS_CRC)
    struct.pack_into("<L", archive, local + 22, GIGABYTE)
    central = archive.rfind(b"PK\x01\x02")  # the last entry's: bomb.png
    struct.pack_into("<H", archive, central + 10, zipfile.ZIP_BZIP2)
    struct.pack_into("<L", archive, central + 16, GIGABYTE_OF_ZEROS_CRC)
    struct.pack_into("<L", archive, central + 24, GIGABYTE)
    return bytes(archive)


def lzma_zip(page: bytes) -> bytes:
    """One real page and ``bomb.png``: 32 MiB of zeros as LZMA (method 14)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("page.png", page)
        archive.writestr("bomb.png", bytes(LZMA_ZEROS), compress_type=zipfile.ZIP_LZMA)
    return buffer.getvalue()


def claiming_entries(archive: bytes, entries: int) -> bytes:
    """``archive`` with its end of central directory claiming ``entries`` entries: past 65,535 through a
    ZIP64 end record and locator, as a real ZIP64 of that many files has."""
    data = bytearray(archive)
    end = data.rfind(b"PK\x05\x06")
    directory_bytes, directory_at = struct.unpack_from("<LL", data, end + 12)
    if entries < 0xFFFF:
        struct.pack_into("<HH", data, end + 8, entries, entries)
        return bytes(data)
    zip64_at = end
    zip64 = struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, entries, entries, directory_bytes,
                        directory_at)
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, zip64_at, 1)
    record = bytearray(data[end:])
    struct.pack_into("<HH", record, 8, 0xFFFF, 0xFFFF)
    return bytes(data[:end]) + zip64 + locator + bytes(record)
