"""Corrections as training data: a PaddleOCR recognition training ZIP and the engine's error rate.

One builder serves ``GET /api/v1/training-set`` and ``manage.py ocr_training_set``.
A line counts as corrected when the reviewer changed its text, drew it, or
redrew its box; its crop is cut from the stored page image along the corrected
polygon (as the re-read does). The ZIP holds::

    crops/<job>-p<page>-<line>.png
    rec_gt.txt        crops/...png<TAB>corrected text   (PaddleOCR's rec label format)
    engine_reading.txt  crops/...png<TAB>corrected text<TAB>what the engine read ("" for a drawn line)

The CER report compares, page by page, the engine's page text with the corrected one.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.db.models import Q, QuerySet
from django.db.models.fields.json import KT
from PIL import Image

from jobs.models import Job, PageResult
from jobs.selectors.results import page_with_corrections
from ocr_engine.metrics import edit_distance, squeeze
from ocr_engine.schema import Line, Page, page_from_dict


@dataclass(frozen=True)
class CorrectedLine:
    job_id: str
    page: PageResult
    line: Line
    engine_text: str  # "" when the engine had no line there

    @property
    def path(self) -> str:
        return f"crops/{self.job_id}-p{self.page.page_number}-{self.line.id}.png"


def reviewed_jobs(user, since: datetime | None = None) -> QuerySet[Job]:
    """``user``'s jobs with reviewers' corrections (text or live geometry edits), made at or after ``since``."""
    text = Q(pages__corrections__isnull=False)
    geometry = Q(pages__edits__isnull=False, pages__edits__undone_at__isnull=True)
    if since is not None:
        text &= Q(pages__corrections__corrected_at__gte=since)
        geometry &= Q(pages__edits__made_at__gte=since)
    return Job.objects.filter(text | geometry, owner=user).distinct().order_by("-created_at")


def _pages(job: Job) -> QuerySet[PageResult]:
    """The job's read pages with their text, corrections and edits.

    The stored result (``normalized``, most of a page's row) is read only where a page is
    reviewed: the job page asks for the CER after every edit, and parsing every page of a
    100-page job took a second of the web process's CPU each time.
    """
    return (job.pages.filter(status=PageResult.Status.SUCCEEDED).annotate(engine_text=KT("normalized__text"))
            .defer("normalized").prefetch_related("corrections", "edits"))


def _reviewed(page: PageResult) -> bool:
    """Whether a reviewer changed ``page``: its corrected reading is otherwise the engine's."""
    return bool(page.corrections.all()) or any(edit.undone_at is None for edit in page.edits.all())


def _page_corrected_lines(job: Job, page: PageResult, corrected: Page) -> list[CorrectedLine]:
    """The lines of ``corrected`` (the reviewed reading of ``page``) whose text or box differs from the engine's."""
    engine = {line.id: line for line in page_from_dict(page.normalized).lines}
    return [CorrectedLine(str(job.pk), page, line, engine[line.id].text if line.id in engine else "")
            for line in corrected.lines
            if line.id not in engine or engine[line.id].text != line.text or engine[line.id].polygon != line.polygon]


# Pages read per query while the ZIP is written: each page's stored result is parsed and dropped with its chunk.
PAGES_PER_QUERY = 20


class _Drained:
    """What zipfile writes to: a stream that cannot seek (each member's sizes follow its data), emptied by ``drain``."""

    def __init__(self):
        self._parts: list[bytes] = []

    def write(self, data) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def drain(self) -> bytes:
        data = b"".join(self._parts)
        self._parts.clear()
        return data


def training_zip_chunks(user, since: datetime | None = None) -> Iterator[bytes]:
    """The training ZIP as it is written, member by member, for a streamed response or a file.

    Built whole, a reviewer's few hundred corrected pages took the ZIP, and every decoded page
    image of a job, into the web process at once. Here one page image is decoded at a time and released
    before the next, and each member leaves as soon as it is written.
    """
    from ocr_engine.reread import crop_polygon  # OpenCV only, no models

    out = _Drained()
    labels, readings = [], []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for job in reviewed_jobs(user, since):
            for page in filter(_reviewed, _pages(job).iterator(chunk_size=PAGES_PER_QUERY)):
                # An emptied line teaches the recogniser nothing.
                lines = [item for item in _page_corrected_lines(job, page, page_with_corrections(page))
                         if item.line.text.strip()]
                if not lines or not page.image:
                    continue
                with page.image.open("rb") as fh, Image.open(fh) as stored:
                    # The page's pixels once for all its lines: each PIL image would be copied whole per line.
                    pixels = np.asarray(stored if stored.mode == "RGB" else stored.convert("RGB"))
                fx, fy = pixels.shape[1] / page.normalized["width"], pixels.shape[0] / page.normalized["height"]
                for item in lines:
                    crop = crop_polygon(pixels, [[x * fx, y * fy] for x, y in item.line.polygon])
                    png = io.BytesIO()
                    crop.save(png, "PNG")
                    archive.writestr(item.path, png.getvalue())
                    labels.append(f"{item.path}\t{item.line.text}")
                    readings.append(f"{item.path}\t{item.line.text}\t{item.engine_text}")
                    yield out.drain()
                del pixels  # freed now, not once the next page's are decoded beside them
        archive.writestr("rec_gt.txt", "".join(f"{row}\n" for row in labels))
        archive.writestr("engine_reading.txt", "".join(f"{row}\n" for row in readings))
    yield out.drain()  # the two label files and the central directory, written as the archive closes


def job_cer(job: Job) -> dict:
    """{errors, characters, cer, corrected_lines}: the engine's page texts against the corrected ones."""
    errors = characters = lines = 0
    for page in _pages(job):
        engine_text = corrected = squeeze(page.engine_text)
        if _reviewed(page):
            corrected_page = page_with_corrections(page)
            corrected = squeeze(corrected_page.text)
            lines += len(_page_corrected_lines(job, page, corrected_page))
        errors += edit_distance(corrected, engine_text)
        characters += len(corrected)
    return {"errors": errors, "characters": characters,
            "cer": round(errors / characters, 4) if characters else None, "corrected_lines": lines}


def cer_report(user, job: Job | None = None) -> dict:
    """Per reviewed job and over all of them (characters-weighted)."""
    jobs = [job] if job is not None else list(reviewed_jobs(user))
    per_job = {str(j.pk): job_cer(j) for j in jobs}
    errors = sum(r["errors"] for r in per_job.values())
    characters = sum(r["characters"] for r in per_job.values())
    return {"jobs": per_job, "overall": {"errors": errors, "characters": characters,
                                         "cer": round(errors / characters, 4) if characters else None}}

