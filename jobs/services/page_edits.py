"""Geometry review: create, change, delete, split and merge lines; retype and reorder regions; undo.

Each change is one ``PageEdit`` row (who, when, a resolved payload) replayed by
``ocr_engine.edits`` over the engine's page, so ``PageResult.raw`` and
``PageResult.normalized`` are never rewritten and every export (all read
``jobs.selectors.results.page_with_corrections``) shows the corrected page. Text-only
changes of engine lines on a page without geometry edits stay ``LineCorrection`` rows
(``line_correct``); ``line_edit`` picks the store for a PATCH of a line. Whichever row an
edit makes, the API answers it in one shape (docs/review.md, "What an edit answers").
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction
from django.utils import timezone

from jobs.errors import JobStateError, LineNotFound, RegionNotFound
from jobs.models import AuditEntry, LineCorrection, PageEdit, PageResult
from jobs.progress import publish
from jobs.selectors.results import page_with_corrections
from jobs.services.audit import Actor, audit_record
from jobs.services.review import line_correct
from jobs.services.search import page_index
from ocr_engine.edits import next_line_id, region_for_box, split_text
from ocr_engine.errors import InputError
from ocr_engine.geometry import box_from_polygon
from ocr_engine.schema import REGION_TYPES, Line, Page

# (page, polygon) -> (text, confidence); the API passes the worker-backed reader (jobs.reread).
Reader = Callable[[PageResult, list[list[float]]], tuple[str, float]]


def _current(page: PageResult) -> Page:
    if page.status != PageResult.Status.SUCCEEDED or not page.normalized:
        raise JobStateError(f"Page {page.page_number} has no result to correct.")
    return page_with_corrections(page)


def _line(current: Page, line_id: str) -> Line:
    line = next((line for line in current.lines if line.id == line_id), None)
    if line is None:
        raise LineNotFound(f"Page {current.page_number} has no line {line_id!r}.")
    return line


def _check_polygon(current: Page, polygon: list[list[float]]) -> list[list[float]]:
    box = box_from_polygon(polygon)
    if len(polygon) < 3 or box[2] - box[0] < 2 or box[3] - box[1] < 2:
        raise InputError("A line's polygon needs at least three points around a non-empty area.")
    if box[0] < 0 or box[1] < 0 or box[2] > current.width or box[3] > current.height:
        raise InputError(f"The polygon leaves the page ({current.width}x{current.height} pixels).")
    return [[float(x), float(y)] for x, y in polygon]


def _fresh_line_id(page: PageResult) -> str:
    """Counts undone edits' ids too, so a redo-by-hand never reuses an id another view still shows."""
    used = [line["id"] for line in page.normalized["lines"]]
    used += [e.payload.get("line_id", "") for e in page.edits.all() if e.kind == PageEdit.Kind.LINE_CREATE]
    used += [e.payload.get("new_line_id", "") for e in page.edits.all() if e.kind == PageEdit.Kind.LINE_SPLIT]
    return next_line_id(page.page_number, used)


def _announce(edit: PageEdit) -> None:
    """Tell every open view of the job (ws/jobs/<id>/) to fetch the page again, once the edit is committed."""
    page = edit.page
    transaction.on_commit(lambda: publish(page.job, "corrected", page_number=page.page_number,
                                          correction_id=edit.pk, kind=edit.kind, undone=edit.undone_at is not None))


def _record(page: PageResult, kind: str, payload: dict, user, address: str | None) -> PageEdit:
    with transaction.atomic():
        edit = PageEdit.objects.create(page=page, kind=kind, payload=payload, made_by=user)
        audit_record(action=AuditEntry.Action.CORRECTED, job=page.job, by=Actor.of_user(user, address), detail=kind)
        page_index(page)
    _announce(edit)
    return edit


def line_create(*, page: PageResult, polygon, user, read: Reader, text: str | None = None,
                region_id: str | None = None, address: str | None = None) -> tuple[PageEdit, str]:
    """Add a line the detector missed; read it unless ``text`` is given. Returns (edit, new line id)."""
    current = _current(page)
    polygon = _check_polygon(current, polygon)
    if region_id is None:
        region = region_for_box(current, box_from_polygon(polygon))
        if region is None:
            raise InputError("This page has no region to put a line in.")
        region_id = region.id
    elif not any(r.id == region_id for r in current.regions):
        raise RegionNotFound(f"Page {page.page_number} has no region {region_id!r}.")
    confidence = 1.0  # typed by the reviewer
    if text is None:
        text, confidence = read(page, polygon)
    line_id = _fresh_line_id(page)
    edit = _record(page, PageEdit.Kind.LINE_CREATE, {
        "line_id": line_id, "region_id": region_id, "polygon": polygon, "text": text, "confidence": confidence,
    }, user, address)
    return edit, line_id


def line_change(*, page: PageResult, line_id: str, user, read: Reader, polygon=None, text: str | None = None,
                region_id: str | None = None, address: str | None = None) -> PageEdit:
    """Move/resize a line (re-read unless ``text`` is given), retype it, or move it to another region."""
    current = _current(page)
    _line(current, line_id)
    payload: dict = {"line_id": line_id}
    if region_id is not None:
        if not any(r.id == region_id for r in current.regions):
            raise RegionNotFound(f"Page {page.page_number} has no region {region_id!r}.")
        payload["region_id"] = region_id
    if polygon is not None:
        payload["polygon"] = _check_polygon(current, polygon)
        if text is None:
            payload["text"], payload["confidence"] = read(page, payload["polygon"])
    if text is not None:
        payload["text"], payload["confidence"] = text, 1.0
    if len(payload) == 1:
        raise InputError("Give at least one of polygon, text, region_id.")
    return _record(page, PageEdit.Kind.LINE_CHANGE, payload, user, address)


def line_edit(*, page: PageResult, line_id: str, user, read: Reader, polygon=None, text: str | None = None,
              region_id: str | None = None, address: str | None = None) -> PageEdit | LineCorrection | None:
    """PATCH of a line: a ``LineCorrection`` (``line_correct``) or a ``PageEdit`` (``line_change``).

    Only a retype of an engine line on a page no geometry edit ever touched is a ``LineCorrection``:
    corrections are applied before edits are replayed, so on an edited page an engine line's text may be a
    split's half or a merge's join, and a line a reviewer drew has no engine text to correct at all. The
    training set reads both stores. Returns the row made (None: the line is back to the engine's text).
    """
    engine_line = any(line["id"] == line_id for line in (page.normalized or {}).get("lines") or [])
    if text is not None and polygon is None and region_id is None and engine_line and not page.edits.exists():
        return line_correct(page=page, line_id=line_id, text=text, user=user, address=address)
    return line_change(page=page, line_id=line_id, user=user, read=read, polygon=polygon, text=text,
                       region_id=region_id, address=address)


def line_delete(*, page: PageResult, line_id: str, user, address: str | None = None) -> PageEdit:
    _line(_current(page), line_id)
    return _record(page, PageEdit.Kind.LINE_DELETE, {"line_id": line_id}, user, address)


def line_split(*, page: PageResult, line_id: str, at: float, user,
               address: str | None = None) -> tuple[PageEdit, str]:
    """Split a line at page x ``at``; the text splits at the space nearest that point. Returns (edit, new id)."""
    line = _line(_current(page), line_id)
    x0, _, x1, _ = line.bbox
    if not x0 + 1 < at < x1 - 1:
        raise InputError(f"Split point {at} is not inside the line (x {x0:.0f} to {x1:.0f}).")
    texts = split_text(line.text, (at - x0) / (x1 - x0))
    new_id = _fresh_line_id(page)
    edit = _record(page, PageEdit.Kind.LINE_SPLIT,
                   {"line_id": line_id, "at": float(at), "new_line_id": new_id, "texts": list(texts)}, user, address)
    return edit, new_id


def line_merge(*, page: PageResult, line_ids: list[str], user, address: str | None = None) -> PageEdit:
    """Merge lines into the first in reading order (its id stays); the texts join with a space."""
    current = _current(page)
    for line_id in line_ids:
        _line(current, line_id)
    if len(set(line_ids)) < 2:
        raise InputError("Merging needs at least two different lines.")
    ordered = [line.id for line in current.lines if line.id in set(line_ids)]
    return _record(page, PageEdit.Kind.LINE_MERGE, {"line_ids": ordered}, user, address)


def region_change(*, page: PageResult, region_id: str, user, type: str | None = None,  # noqa: A002 - API name
                  order: int | None = None, address: str | None = None) -> PageEdit:
    current = _current(page)
    if not any(r.id == region_id for r in current.regions):
        raise RegionNotFound(f"Page {page.page_number} has no region {region_id!r}.")
    if type is not None and type not in REGION_TYPES:
        raise InputError(f"Unknown region type {type!r}; one of: {', '.join(REGION_TYPES)}.")
    if order is not None and not 1 <= order <= len(current.regions):
        raise InputError(f"order must be between 1 and {len(current.regions)}.")
    if type is None and order is None:
        raise InputError("Give type, order or both.")
    payload = {"region_id": region_id, **({"type": type} if type else {}), **({"order": order} if order else {})}
    return _record(page, PageEdit.Kind.REGION_CHANGE, payload, user, address)


def edited_line_id(edit: PageEdit) -> str | None:
    """The line an edit was made on (a merge's: the merged line); None for a region's edit."""
    return edit.payload.get("line_id") or next(iter(edit.payload.get("line_ids") or []), None)


def page_edit_undo(*, edit: PageEdit, user, address: str | None = None) -> PageEdit:
    """Undo an edit (any, not only the last: later edits whose target it made are skipped on replay)."""
    with transaction.atomic():
        updated = PageEdit.objects.filter(pk=edit.pk, undone_at__isnull=True).update(undone_at=timezone.now())
        edit.refresh_from_db()
        if not updated:
            raise JobStateError(f"Correction {edit.pk} is already undone.")
        audit_record(action=AuditEntry.Action.CORRECTED, job=edit.page.job, by=Actor.of_user(user, address),
                     detail=f"undo {edit.kind}")
        page_index(edit.page)
    _announce(edit)
    return edit
