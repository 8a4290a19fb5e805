"""The read side of results: stored pages -> normalized DocumentResult (with corrections) -> exports.

Nothing here reshapes the schema: pages are stored as ``schema.to_dict(Page)``
and read back with ``schema.page_from_dict``; reviewers' corrections replace a
line's ``text`` and keep the engine's reading in ``original_text``.
"""

from __future__ import annotations

import json
from typing import Any

from django.db.models import Sum, TextField
from django.db.models.functions import Cast, Length
from PIL import Image

from jobs.models import Job, PageResult
from jobs.selectors.fields import job_fields_block
from ocr_engine import exports
from ocr_engine.edits import apply_edits
from ocr_engine.engine import assemble_document
from ocr_engine.normalize import refresh_texts
from ocr_engine.schema import EngineInfo, Page, page_from_dict, to_dict


def page_with_corrections(page: PageResult) -> Page:
    """The stored normalized page with reviewers' text corrections, then their geometry edits, applied."""
    normalized = page_from_dict(page.normalized)
    corrections = {c.line_id: c for c in page.corrections.all()}
    edits = [{"kind": e.kind, **e.payload} for e in page.edits.all() if e.undone_at is None]
    if corrections:
        for line in normalized.lines:
            correction = corrections.get(line.id)
            if correction is not None and correction.text != line.text:
                line.original_text = line.text
                line.text = correction.text
    if edits:
        apply_edits(normalized, edits)
    if corrections or edits:
        refresh_texts(normalized)
    return normalized


def job_document_result(job: Job):
    """The job's DocumentResult over its succeeded pages (schema.DocumentResult), with its ``fields``
    block where the fields stage applies to the job."""
    pages = job.pages.filter(status=PageResult.Status.SUCCEEDED).prefetch_related("corrections", "edits")
    engine = EngineInfo(**job.engine) if job.engine else EngineInfo(
        pipeline=job.pipeline, lang=job.lang, backend="", device="", models={}, version=""
    )
    document = assemble_document(
        pages=[page_with_corrections(p) for p in pages],
        engine=engine,
        source={
            "filename": job.document.original_name,
            "media_type": job.document.media_type,
            "sha256": job.document.sha256,
            "page_count": job.document.page_count,
            "pages": job.page_numbers,
        },
    )
    document.fields = job_fields_block(job)
    return document


def job_result_json(job: Job) -> bytes:
    """The whole normalized result as the JSON export writes it (the download)."""
    return exports.render(job_document_result(job), "json")


def job_result_inline(job: Job, max_bytes: int) -> tuple[dict[str, Any] | None, int]:
    """(the result as a dict, or None when it is over ``max_bytes``; its size in bytes as compact JSON).

    A polling client must not make the web process build a 2,000-page result to
    learn that it is too big to inline: the database first sums the stored pages'
    JSON text. Their stored form adds at most one space per separator (each
    separator follows at least one character), so it is at most 1.5 times their
    compact JSON, and the result holds all of them: above twice the limit the
    result cannot be inlined, and that sum (an estimate) is the size reported.
    """
    stored = job.pages.filter(status=PageResult.Status.SUCCEEDED).aggregate(
        chars=Sum(Length(Cast("normalized", TextField())))
    )["chars"] or 0
    if stored > 2 * max_bytes:
        return None, stored
    data = to_dict(job_document_result(job))
    size = len(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
    return (data if size <= max_bytes else None), size


def job_export(job: Job, fmt: str, *, pdfa: str | None = None) -> tuple[bytes, str, str]:
    """(content, media type, file name) of an export; raises UnsupportedOption for an unknown format.

    ``pdfa`` ("2b", "pdf" only) makes the searchable PDF a PDF/A file that keeps
    the uploaded PDF's born-digital pages as they are.
    """
    exports.check_options(fmt, pdfa)
    succeeded = job.pages.filter(status=PageResult.Status.SUCCEEDED).only("page_number", "image")
    images = {p.page_number: p.image for p in succeeded}  # not the pages' results: read once, below

    def page_image(number: int) -> Image.Image | None:
        field = images.get(number)
        if not field:
            return None
        with field.open("rb") as fh:
            image = Image.open(fh)
            image.load()
        return image

    result = job_document_result(job)
    if pdfa is None or job.document.media_type != "application/pdf" or not job.document.file:
        content = exports.render(result, fmt, page_image=page_image, pdfa=pdfa)
    else:
        with job.document.file.open("rb") as source_pdf:
            content = exports.render(result, fmt, page_image=page_image, pdfa=pdfa, source_pdf=source_pdf)
    return (content, *export_download(job, fmt, content[:2]))


def export_download(job: Job, fmt: str, head: bytes) -> tuple[str, str]:
    """(media type, file name) of an export whose content starts with ``head``.

    The name is the uploaded file's stem with the export's extension.
    """
    media_type, extension = export_type(fmt, head)
    stem = job.document.original_name.rsplit(".", 1)[0] or "document"
    return media_type, f"{stem}.{extension}"


def export_type(fmt: str, head: bytes) -> tuple[str, str]:
    """(media type, file extension) of an export whose content starts with ``head``."""
    if fmt == "page" and head.startswith(b"PK"):  # PAGE holds one page per file: longer results are a ZIP
        return "application/zip", "page.zip"
    return exports.FORMATS[fmt]
