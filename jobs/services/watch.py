"""A watched folder (``manage.py ocr_watch``): files dropped in become jobs, their exports land in another folder.

Each pass (``watch_step``) lists the folder, submits the files that stopped
growing, writes the exports of the jobs that ended and moves their originals to
``done/`` (or ``failed/``, with ``<name>.error.txt`` beside it). What became of
each file lives in the database (``WatchedFile``, whose docstring has the
states), never only in this process: a watcher killed at any point and started
again redoes at most the step it was in, and every step gives the same outcome
when done twice. Only when a file was last seen to change is kept in memory; a
restart forgets it and waits one settle interval more.

Between passes the watcher sleeps in ``watchfiles.watch`` (inotify, or polling
where inotify does not fire, as on network shares), which wakes it as soon as
something changes, and at least every ``TICK_MS`` anyway: the pass itself finds
the work, so a missed event only delays it by one tick.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import watchfiles
from django.db import DatabaseError, connection, transaction

from jobs.models import Job, WatchedFile
from jobs.selectors import results
from jobs.services.submission import job_create
from ocr_engine import exports
from ocr_engine.errors import OcrError, UnsupportedOption

logger = logging.getLogger(__name__)

DONE, FAILED = "done", "failed"  # subfolders of the watched folder
FORMATS = (*exports.FORMATS, exports.PDFA_FORMAT)  # pdfa: the PDF/A-2b searchable PDF, as <stem>.pdfa.pdf
PART_SUFFIX = ".watch-part"  # an export being written: hidden (leading dot) and renamed when whole
TICK_MS = 500
RETRY_SECONDS = 5  # after a pass failed on the database or the filesystem (disk full, a share gone)
Signature = tuple[int, int]  # (size in bytes, mtime in ns)


@dataclass(frozen=True)
class WatchOptions:
    folder: Path  # absolute
    out: Path
    owner: object  # the user the jobs are submitted as
    pipeline: str
    lang: str
    formats: tuple[str, ...]
    settle_seconds: float = 2.0


def watch_options_check(formats: tuple[str, ...]) -> None:
    """Raise UnsupportedOption for an export format the watcher cannot write."""
    unknown = [fmt for fmt in formats if fmt not in FORMATS]
    if unknown or not formats:
        raise UnsupportedOption(f"Unknown export format(s) {', '.join(unknown) or '(none)'}; "
                                f"choose from {', '.join(FORMATS)}.")


@dataclass
class Settling:
    """When each file was last seen to change (in memory only): a file is stable once its size and
    mtime stayed the same for ``seconds``."""

    seconds: float
    clock: Callable[[], float] = time.monotonic
    _since: dict[str, tuple[Signature, float]] = field(default_factory=dict)

    def stable(self, files: dict[str, Signature]) -> list[str]:
        now, ready = self.clock(), []
        for name, signature in files.items():
            seen = self._since.get(name)
            if seen is None or seen[0] != signature:
                self._since[name] = (signature, now)
            elif now - seen[1] >= self.seconds:
                ready.append(name)
        for name in self._since.keys() - files.keys():
            del self._since[name]
        return sorted(ready)


def folder_files(folder: Path) -> dict[str, Signature]:
    """The regular files directly in ``folder`` (not done/ or failed/), hidden ones (a copy tool's
    temporary files) left out."""
    found = {}
    with os.scandir(folder) as entries:
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_file(follow_symlinks=False):
                continue
            try:
                stat = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # moved away while listed
            found[entry.name] = (stat.st_size, stat.st_mtime_ns)
    return found


def watch_step(options: WatchOptions, settling: Settling) -> None:
    """One pass over the folder and its files' jobs."""
    folder = str(options.folder)
    active = {row.name: row for row in WatchedFile.objects.filter(folder=folder, state__in=WatchedFile.ACTIVE_STATES)
              .select_related("job")}
    in_flight = {name for name, row in active.items() if row.state != WatchedFile.State.SEEN or row.error_code}
    files = folder_files(options.folder)
    for name in settling.stable({name: sig for name, sig in files.items() if name not in in_flight}):
        file_submit(options, name, files[name], active.get(name))
    for row in active.values():
        if row.error_code:
            file_fail(options, row)  # a failure recorded before the watcher stopped: finish moving it
        elif row.state == WatchedFile.State.SUBMITTED and (row.job is None or row.job.is_final):
            file_finish(options, row)
        elif row.state == WatchedFile.State.EXPORTED:
            file_move_done(options, row)


def file_submit(options: WatchOptions, name: str, signature: Signature, row: WatchedFile | None) -> None:
    """seen -> submitted: the job and the state change commit together, so a watcher killed in between
    finds the file still ``seen`` and no job (and submits it again), never a job it does not know of."""
    path = options.folder / name
    unreadable = None
    try:
        with path.open("rb") as fh:
            sha256 = hashlib.file_digest(fh, "sha256").hexdigest()
    except FileNotFoundError:
        return  # moved away since it was listed
    except OSError as exc:  # e.g. no permission to read it: said in failed/, not retried every pass
        sha256, unreadable = "", f"The watcher could not read the file: {exc.strerror}."
    row = row or WatchedFile(folder=str(options.folder), name=name)
    row.size_bytes, row.mtime_ns, row.sha256 = *signature, sha256
    row.save()
    if unreadable:
        _record_failure(row, "unreadable_file", unreadable)
        file_fail(options, row)
        return
    try:
        # On SQLite the transaction holds the write lock while job_create stores the file: a copy
        # of at most OCR_MAX_UPLOAD_BYTES, worth it for a job that can never be lost.
        with transaction.atomic():
            job, reused = job_create(owner=options.owner, file=path, filename=name, pipeline=options.pipeline,
                                     lang=options.lang)
            row.job, row.state = job, WatchedFile.State.SUBMITTED
            row.save()
    except OcrError as exc:  # refused as an upload would be: same code and detail
        _record_failure(row, exc.code, exc.message)
        file_fail(options, row)
        return
    except FileNotFoundError:
        return  # moved away while it was submitted: nothing was committed
    logger.info("watch: %s -> job %s%s", name, job.pk, " (reused: same file and options)" if reused else "")


def file_finish(options: WatchOptions, row: WatchedFile) -> None:
    """submitted -> exported (then done), or failed: the job has ended (or was deleted)."""
    job = row.job
    if job is None:
        _record_failure(row, "job_deleted", "The job was deleted before it ended.")
    elif job.status != Job.Status.SUCCEEDED:
        code = job.error_code or job.status
        _record_failure(row, code, job.error_detail or f"The job was {job.status}.")
    else:
        try:
            for fmt in options.formats:
                content, extension = export_content(job, fmt)
                write_whole(options.out / f"{stem(row.name)}.{extension}", content)
        except OcrError as exc:
            _record_failure(row, exc.code, exc.message)
        else:
            row.state = WatchedFile.State.EXPORTED
            row.save(update_fields=["state", "updated_at"])
            file_move_done(options, row)
            return
    file_fail(options, row)


def file_move_done(options: WatchOptions, row: WatchedFile) -> None:
    """exported -> done."""
    move_original(options, row, DONE)
    row.state = WatchedFile.State.DONE
    row.save(update_fields=["state", "updated_at"])
    logger.info("watch: %s done", row.name)


def file_fail(options: WatchOptions, row: WatchedFile) -> None:
    """A recorded failure -> failed: the reason beside the original in failed/."""
    write_whole(options.folder / FAILED / f"{row.name}.error.txt", f"{row.error_code}: {row.error_detail}\n".encode())
    move_original(options, row, FAILED)
    row.state = WatchedFile.State.FAILED
    row.save(update_fields=["state", "updated_at"])
    logger.info("watch: %s failed: [%s] %s", row.name, row.error_code, row.error_detail)


def _record_failure(row: WatchedFile, code: str, detail: str) -> None:
    """Written before the moves, so that a watcher killed during them finishes them after a restart."""
    row.error_code, row.error_detail = code[:64], detail
    row.save(update_fields=["error_code", "error_detail", "updated_at"])


def export_content(job: Job, fmt: str) -> tuple[bytes, str]:
    """(content, file extension) of the job's ``fmt`` export, as the API's ``export.<fmt>`` serves it
    (``pdfa``: ``export.pdf?pdfa=2b``)."""
    fmt, pdfa = exports.export_of(fmt)
    content, _, _ = results.job_export(job, fmt, pdfa=pdfa)
    return content, "pdfa.pdf" if pdfa else results.export_type(fmt, content[:2])[1]


def move_original(options: WatchOptions, row: WatchedFile, subfolder: str) -> None:
    """Move the file into ``subfolder``, unless it is gone (moved already) or another file took its place
    since it was read (that one is left to be picked up as a new file)."""
    source = options.folder / row.name
    try:
        stat = source.stat()
    except FileNotFoundError:
        return
    if (stat.st_size, stat.st_mtime_ns) != (row.size_bytes, row.mtime_ns):
        return
    (options.folder / subfolder).mkdir(exist_ok=True)
    os.replace(source, options.folder / subfolder / row.name)


def write_whole(path: Path, content: bytes) -> None:
    """Write ``path`` so that a reader sees the old file or the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f".{path.name}{PART_SUFFIX}")
    part.write_bytes(content)
    os.replace(part, path)


def stem(name: str) -> str:
    return name.rsplit(".", 1)[0] or name


def watch_run(options: WatchOptions, *, force_polling: bool | None = None,
              stop: threading.Event | None = None) -> None:
    """Watch until ``stop`` is set. ``force_polling=None`` lets watchfiles decide (WATCHFILES_FORCE_POLLING)."""
    for part in options.out.glob(f".*{PART_SUFFIX}"):  # left by a watcher killed while writing
        part.unlink(missing_ok=True)
    settling = Settling(options.settle_seconds)
    changes = watchfiles.watch(options.folder, watch_filter=None, recursive=False, rust_timeout=TICK_MS,
                               yield_on_timeout=True, force_polling=force_polling, poll_delay_ms=TICK_MS,
                               stop_event=stop, raise_interrupt=False)
    while True:
        try:
            watch_step(options, settling)
        except (DatabaseError, OSError):
            # Every step is redone safely, so the pass is simply tried again; a connection the
            # database dropped is opened anew.
            logger.exception("watch: the pass failed; trying again in %d s", RETRY_SECONDS)
            connection.close()
            time.sleep(RETRY_SECONDS)
        if next(changes, None) is None:
            return
