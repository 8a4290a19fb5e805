"""A watched folder (``manage.py ocr_watch``): files dropped in become jobs, their exports land in another folder.

Each pass (``watch_step``) lists the folder, submits the files that stopped
growing, writes the exports of the jobs that ended and moves their originals to
``done/`` (or ``failed/``, with ``<name>.error.txt`` beside it). What became of
each file lives in the database (``WatchedFile``, whose docstring has the
states), never only in this process: a watcher killed at any point and started
again redoes at most the step it was in, and every step gives the same outcome
when done twice. Only when a file was last seen to change, and which refusals
were logged, is kept in memory (``WatchMemory``); a restart forgets it and waits
one settle interval more.

Whoever may write to the folder is not trusted with anything else: every file
operation goes through ``jobs.services.watch_files`` (descriptors, no paths), a
name the watcher cannot keep apart from others is refused into ``failed/``, and a
move or write it will not do (a link where its folder was) is logged, left, and
tried again on the next pass, while the other files go on.

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
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import watchfiles
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from watchfiles._rust_notify import WatchfilesRustInternalError

from jobs.models import Job, WatchedFile
from jobs.options import JobOptions
from jobs.selectors import results
from jobs.services.submission import job_create
from jobs.services.watch_files import (ERROR_SUFFIX, NAME_MAX, Refused, Signature, error_file_name, folder_files,
                                       is_utf8, move, opened_dir, parts_remove, read_settled, shown_name, subfolder,
                                       subfolders_make, write_whole)
from ocr_engine import exports
from ocr_engine.errors import OcrError, UnsupportedOption

logger = logging.getLogger(__name__)

DONE, FAILED = "done", "failed"  # subfolders of the watched folder
FORMATS = (*exports.FORMATS, exports.PDFA_FORMAT)  # pdfa: the PDF/A-2b searchable PDF, as <name>.pdfa.pdf
PDFA_EXTENSION = "pdfa.pdf"
TICK_MS = 500
RETRY_SECONDS = 5  # after a pass failed on the database or the filesystem (disk full, a share gone)


@dataclass(frozen=True)
class WatchOptions:
    folder: Path  # absolute
    out: Path
    owner: object  # the user the jobs are submitted as
    formats: tuple[str, ...]
    job_options: JobOptions = JobOptions()
    settle_seconds: float = 2.0


def watch_options_check(formats: tuple[str, ...]) -> None:
    """Raise UnsupportedOption for an export format the watcher cannot write."""
    unknown = [fmt for fmt in formats if fmt not in FORMATS]
    if unknown or not formats:
        raise UnsupportedOption(f"Unknown export format(s) {', '.join(unknown) or '(none)'}; "
                                f"choose from {', '.join(FORMATS)}.")


@dataclass
class Settling:
    """When each file was last seen to change: a file is stable once its size and mtime stayed the same
    for ``seconds``."""

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


@dataclass
class WatchMemory:
    """What only this process keeps: the settling of each file, and the refusals of the last pass (a
    refused move is tried again every pass, and logged once while it lasts)."""

    settling: Settling
    _said: set[str] = field(default_factory=set)
    _now: set[str] = field(default_factory=set)

    @contextmanager
    def refusals(self) -> Iterator[None]:
        try:
            yield
        except Refused as exc:
            if str(exc) not in self._said | self._now:
                logger.warning("watch: refused: %s", exc)
            self._now.add(str(exc))

    def pass_done(self) -> None:
        self._said, self._now = self._now, set()


def watch_step(options: WatchOptions, memory: WatchMemory) -> None:
    """One pass over the folder and its files' jobs."""
    active = {row.name: row for row in WatchedFile.objects.filter(folder=str(options.folder),
                                                                  state__in=WatchedFile.ACTIVE_STATES)
              .select_related("job")}
    in_flight = {name for name, row in active.items() if row.state != WatchedFile.State.SEEN or row.error_code}
    with opened_dir(options.folder) as folder_fd:
        files = {name: sig for name, sig in folder_files(folder_fd).items() if name not in in_flight}
        problems = name_problems(files, taken=in_flight, formats=options.formats)
        for name in memory.settling.stable(files):
            with memory.refusals():
                if name in problems:
                    file_refuse(options, folder_fd, name, files[name], *problems[name])
                else:
                    file_submit(options, folder_fd, name, files[name], active.get(name))
        for row in active.values():
            with memory.refusals():
                if row.error_code:
                    file_fail(options, folder_fd, row)  # a failure recorded before the watcher stopped: finish it
                elif row.state == WatchedFile.State.SUBMITTED and (row.job is None or row.job.is_final):
                    file_finish(options, folder_fd, row)
                elif row.state == WatchedFile.State.EXPORTED:
                    file_move_done(folder_fd, row)
    memory.pass_done()


def name_problems(names: Iterable[str], *, taken: Iterable[str],
                  formats: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """``{name: (code, detail)}`` for the names the watcher refuses: one of its subfolders', not UTF-8 (the
    database, the exports' readers), too long for its exports' and error file's names, or whose exports
    would have the name of another file's (``taken``: the files in progress, then the others by name)."""
    problems, limit = {}, NAME_MAX - max(len(ERROR_SUFFIX), *(1 + len(ext) for ext in export_extensions(formats)))
    outputs_taken = {output for name in taken for output in output_names(name, formats)}
    for name in sorted(names):
        size = len(os.fsencode(name))
        if name in (DONE, FAILED):
            problems[name] = ("file_name_reserved", f"{name} is the name of the watcher's {name}/ folder.")
        elif not is_utf8(name):
            problems[name] = ("file_name_not_utf8", "The file's name is not UTF-8 text; rename it and drop it again.")
        elif size > limit:
            problems[name] = ("file_name_too_long", f"The file's name is {size} bytes; the watcher takes names of "
                                                    f"up to {limit} bytes, so that its exports' names fit.")
        elif clash := output_names(name, formats) & outputs_taken:
            problems[name] = ("file_name_clash", f"Its exports would overwrite another file's "
                                                 f"({', '.join(sorted(clash))}); rename it and drop it again.")
        else:
            outputs_taken |= output_names(name, formats)
    return problems


def export_extensions(formats: tuple[str, ...]) -> set[str]:
    """Every extension the exports of ``formats`` may have (``page``: XML, or a ZIP for longer results)."""
    found = set()
    for fmt in formats:
        fmt, pdfa = exports.export_of(fmt)
        found |= {PDFA_EXTENSION} if pdfa else {results.export_type(fmt, head)[1] for head in (b"", b"PK")}
    return found


def output_names(name: str, formats: tuple[str, ...]) -> set[str]:
    """The names the exports of input ``name`` may have in OUT_DIR: the whole input name, then the
    extension (``a.pdf`` -> ``a.pdf.txt``, so that ``a.png``'s are others)."""
    return {f"{name}.{extension}" for extension in export_extensions(formats)}


def file_submit(options: WatchOptions, folder_fd: int, name: str, signature: Signature,
                row: WatchedFile | None) -> None:
    """seen -> submitted: the job and the state change commit together, so a watcher killed in between
    finds the file still ``seen`` and no job (and submits it again), never a job it does not know of.
    The content is read once, and that content is hashed, checked and stored."""
    failure = content = None
    try:
        content = read_settled(folder_fd, name, signature, max_bytes=settings.OCR_MAX_UPLOAD_BYTES)
    except FileNotFoundError:
        return  # moved away since it was listed
    except OcrError as exc:  # hard-linked, too large
        failure = (exc.code, exc.message)
    except OSError as exc:  # e.g. no permission to read it: said in failed/, not retried every pass
        failure = ("unreadable_file", f"The watcher could not read the file: {exc.strerror}.")
    if content is None and failure is None:
        return  # written to since it settled: it settles again first
    row = row or WatchedFile(folder=str(options.folder), name=name)
    row.size_bytes, row.mtime_ns = signature
    row.sha256 = hashlib.sha256(content).hexdigest() if content is not None else ""
    row.save()
    if failure:
        _record_failure(row, *failure)
        file_fail(options, folder_fd, row)
        return
    try:
        # On SQLite the transaction holds the write lock while job_create stores the file: a copy
        # of at most OCR_MAX_UPLOAD_BYTES, worth it for a job that can never be lost.
        with transaction.atomic():
            job, reused = job_create(owner=options.owner, file=content, filename=name, options=options.job_options)
            row.job, row.state = job, WatchedFile.State.SUBMITTED
            row.save()
    except OcrError as exc:  # refused as an upload would be: same code and detail
        _record_failure(row, exc.code, exc.message)
        file_fail(options, folder_fd, row)
        return
    logger.info("watch: %s -> job %s%s", name, job.pk, " (reused: same file and options)" if reused else "")


def file_refuse(options: WatchOptions, folder_fd: int, name: str, signature: Signature, code: str,
                detail: str) -> None:
    """A name the watcher takes no job for: to failed/ with the reason, then a row that says so (failed
    already: its name, as text, may be no file's)."""
    _to_failed(folder_fd, name, signature, f"{code}: {detail}\n")
    WatchedFile.objects.create(folder=str(options.folder), name=shown_name(name), size_bytes=signature[0],
                               mtime_ns=signature[1], sha256="", state=WatchedFile.State.FAILED, error_code=code,
                               error_detail=detail)
    logger.info("watch: %s failed: [%s] %s", shown_name(name), code, detail)


def file_finish(options: WatchOptions, folder_fd: int, row: WatchedFile) -> None:
    """submitted -> exported (then done), or failed: the job has ended (or was deleted)."""
    job = row.job
    if job is None:
        _record_failure(row, "job_deleted", "The job was deleted before it ended.")
    elif job.status != Job.Status.SUCCEEDED:
        code = job.error_code or job.status
        _record_failure(row, code, job.error_detail or f"The job was {job.status}.")
    else:
        options.out.mkdir(parents=True, exist_ok=True)
        try:
            with opened_dir(options.out) as out_fd:
                for fmt in options.formats:
                    content, extension = export_content(job, fmt)
                    write_whole(out_fd, f"{row.name}.{extension}", content)
        except OcrError as exc:
            _record_failure(row, exc.code, exc.message)
        except Refused as exc:  # e.g. a folder under an export's name: said once, not built again every pass
            _record_failure(row, "export_not_written", str(exc))
        else:
            row.state = WatchedFile.State.EXPORTED
            row.save(update_fields=["state", "updated_at"])
            file_move_done(folder_fd, row)
            return
    file_fail(options, folder_fd, row)


def file_move_done(folder_fd: int, row: WatchedFile) -> None:
    """exported -> done."""
    with subfolder(folder_fd, DONE) as done_fd:
        move(folder_fd, row.name, (row.size_bytes, row.mtime_ns), done_fd)
    row.state = WatchedFile.State.DONE
    row.save(update_fields=["state", "updated_at"])
    logger.info("watch: %s done", row.name)


def file_fail(options: WatchOptions, folder_fd: int, row: WatchedFile) -> None:
    """A recorded failure -> failed: the reason beside the original in failed/."""
    _to_failed(folder_fd, row.name, (row.size_bytes, row.mtime_ns), f"{row.error_code}: {row.error_detail}\n")
    row.state = WatchedFile.State.FAILED
    row.save(update_fields=["state", "updated_at"])
    logger.info("watch: %s failed: [%s] %s", row.name, row.error_code, row.error_detail)


def _to_failed(folder_fd: int, name: str, signature: Signature, reason: str) -> None:
    with subfolder(folder_fd, FAILED) as failed_fd:
        write_whole(failed_fd, error_file_name(name), reason.encode())
        move(folder_fd, name, signature, failed_fd)


def _record_failure(row: WatchedFile, code: str, detail: str) -> None:
    """Written before the moves, so that a watcher killed during them finishes them after a restart."""
    row.error_code, row.error_detail = code[:64], detail
    row.save(update_fields=["error_code", "error_detail", "updated_at"])


def export_content(job: Job, fmt: str) -> tuple[bytes, str]:
    """(content, file extension) of the job's ``fmt`` export, as the API's ``export.<fmt>`` serves it
    (``pdfa``: ``export.pdf?pdfa=2b``)."""
    fmt, pdfa = exports.export_of(fmt)
    content, _, _ = results.job_export(job, fmt, pdfa=pdfa)
    return content, PDFA_EXTENSION if pdfa else results.export_type(fmt, content[:2])[1]


def watch_run(options: WatchOptions, *, force_polling: bool | None = None,
              stop: threading.Event | None = None) -> None:
    """Watch until ``stop`` is set. ``force_polling=None`` lets watchfiles decide (WATCHFILES_FORCE_POLLING).
    Raises UnsafeFolder, before anything is done, where done/ or failed/ is not a folder."""
    subfolders_make(options.folder, (DONE, FAILED))
    with opened_dir(options.folder) as folder_fd, subfolder(folder_fd, FAILED) as failed_fd:
        parts_remove(failed_fd)  # left by a watcher killed while writing
    if options.out.is_dir():
        with opened_dir(options.out) as out_fd:
            parts_remove(out_fd)
    memory = WatchMemory(Settling(options.settle_seconds))
    for _ in wakeups(options.folder, force_polling=force_polling, stop=stop):
        try:
            watch_step(options, memory)
        except (DatabaseError, OSError):
            # Every step is redone safely, so the pass is simply tried again; a connection the
            # database dropped is opened anew.
            logger.exception("watch: the pass failed; trying again in %d s", RETRY_SECONDS)
            connection.close()
            time.sleep(RETRY_SECONDS)


def wakeups(folder: Path, *, force_polling: bool | None, stop: threading.Event | None) -> Iterator[None]:
    """Yields at once, then after each change in ``folder`` or TICK_MS without one, until ``stop`` is set."""
    yield
    try:
        for _ in watchfiles.watch(folder, watch_filter=None, recursive=False, rust_timeout=TICK_MS,
                                  yield_on_timeout=True, force_polling=force_polling, poll_delay_ms=TICK_MS,
                                  stop_event=stop, raise_interrupt=False):
            yield
        return
    except WatchfilesRustInternalError:
        # watchfiles ends its watch on a changed name that is not UTF-8 ("Unable to decode path ... to
        # string", where its Rust side turns each path into a str: src/lib.rs of
        # https://github.com/samuelcolvin/watchfiles, 1.3.0); inotify and polling alike. Each pass lists
        # the folder itself, so a plain tick serves from here on.
        logger.warning("watch: watchfiles stopped on a name that is not UTF-8; looking every %d ms instead",
                       TICK_MS, exc_info=True)
    stop = stop or threading.Event()
    try:
        while not stop.wait(TICK_MS / 1000):
            yield
    except KeyboardInterrupt:
        return
