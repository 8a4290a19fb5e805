"""Resource limits checked when a document is opened or a page is rendered."""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Limits:
    """Upper bounds that keep one upload from exhausting a worker.

    ``max_pixels`` applies to every page of an image file and is checked against
    the size its header declares, before any pixel is decoded (decompression
    bombs). ``max_render_pixels`` caps a rendered PDF page: a page that would
    exceed it at the requested scale is rendered at the largest scale that fits
    instead of failing, because an oversized page (a poster, an engineering
    drawing) is still worth reading; ``Document.page_scale`` reports the scale
    actually used. The default fits an A0 page at scale 2 (about 32 MP).
    """

    max_file_bytes: int = 200 * 2**20
    max_pages: int = 2000
    max_pixels: int = 120_000_000
    max_render_pixels: int = 40_000_000

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"Limits.{f.name} must be a positive integer, got {value!r}")
