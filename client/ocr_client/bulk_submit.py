"""``ocr-client submit``: many files, a bounded number at a time, resumable.

Resuming rests on the server's dedup: the same file with the same options from the same user,
within its dedup window, is answered with the job it already made (``reused``). A run killed
at any point and started again therefore never makes a second job for a file, even one whose
upload was answered after the kill. The state file in the output folder
(``.ocr-client-state.json``, keyed by each file's SHA-256 and the options) only saves work:
files whose job is done and whose exports are written are skipped without a request.
"""

from __future__ import annotations

import hashlib
import json
import queue
import threading
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from ocr_client.client import Client, Job, write_whole
from ocr_client.errors import AuthError, ConnectionFailed, NotFound, OcrClientError, WaitTimeout

STATE_FILE = ".ocr-client-state.json"
# Formats that are not an export of their own name: "pdfa" is the searchable PDF as PDF/A-2b.
EXPORT_ALIASES = {"pdfa": ("pdf", {"pdfa": "2b"}, ".pdfa.pdf")}
# Not an export: the job's fields (GET /jobs/{id}/fields) as the server answers them, NAME.fields.json.
FIELDS_FORMAT = "fields.json"
FIELDS_WAIT = 600.0  # seconds the fields stage, which runs after OCR, may take when --timeout does not say


@dataclass(frozen=True)
class Source:
    path: Path
    name: Path  # relative to the folder it was found in: the exports' names

    def output(self, out_dir: Path, fmt: str) -> Path:
        suffix = EXPORT_ALIASES[fmt][2] if fmt in EXPORT_ALIASES else f".{fmt}"
        return out_dir / self.name.parent / (self.name.stem + suffix)


def sources(paths: list[Path], out_dir: Path) -> list[Source]:
    """Every file named, and every file under each folder named (hidden ones and the output's state left out)."""
    found: list[Source] = []
    for path in paths:
        if path.is_dir():
            found += [Source(p, p.relative_to(path)) for p in sorted(path.rglob("*"))
                      if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
                      and not _inside(p, out_dir)]
        elif path.is_file():
            found.append(Source(path, Path(path.name)))
        else:
            raise FileNotFoundError(f"no such file or folder: {path}")
    names: dict[Path, Path] = {}
    for source in found:
        key = source.name.with_suffix("")
        if key in names and names[key] != source.path:
            raise ValueError(f"{names[key]} and {source.path} would write the same exports ({key}.*); "
                             "submit them in separate runs or with separate -o folders")
        names[key] = source.path
    return found


def _inside(path: Path, folder: Path) -> bool:
    return folder.resolve() in path.resolve().parents


class State:
    """What earlier runs finished, by file hash and options; written whole after each change."""

    def __init__(self, path: Path):
        self.path = path
        self.lock = threading.Lock()
        try:
            self.entries: dict[str, dict] = json.loads(path.read_text())["files"]
        except (OSError, ValueError, KeyError):
            self.entries = {}

    def get(self, key: str) -> dict:
        with self.lock:
            return dict(self.entries.get(key, {}))

    def put(self, key: str, **values) -> None:
        with self.lock:
            self.entries[key] = {**self.entries.get(key, {}), **values}
            write_whole(self.path, json.dumps({"version": 1, "files": self.entries}, indent=1).encode())


@dataclass
class Outcome:
    source: Source
    status: str  # succeeded, failed, canceled, refused, queued/running (not awaited), skipped
    job_id: str | None = None
    message: str = ""
    reused: bool = False  # the server answered the upload with its earlier job for this file (dedup)
    resumed: bool = False  # the job an earlier run made, found in the state file
    exports: list[Path] = field(default_factory=list)


class BulkSubmit:
    """One ``submit`` run: ``concurrency`` files in flight, one progress bar per file and one for all."""

    def __init__(self, client: Client, options: dict, out_dir: Path, formats: list[str], wait: bool,
                 concurrency: int = 4, timeout: float | None = None, progress: bool | None = None):
        self.client, self.options, self.out_dir, self.formats = client, options, out_dir, formats
        self.wait, self.concurrency, self.timeout = wait or bool(formats), max(1, concurrency), timeout
        self.state = State(out_dir / STATE_FILE)
        self.options_key = hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()[:16]
        self.progress = progress  # None: bars on a terminal only (tqdm's rule)
        self.slots: queue.Queue[int] = queue.Queue()

    def run(self, files: list[Source]) -> list[Outcome]:
        """Every file's outcome, in ``files``' order. A bad token or an unreachable server stops the run (raised)."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        for slot in range(1, self.concurrency + 1):
            self.slots.put(slot)
        disable = None if self.progress is None else not self.progress
        with tqdm(total=len(files), desc="all files", unit="file", position=0, disable=disable) as overall, \
                ThreadPoolExecutor(self.concurrency) as pool:
            futures = [pool.submit(self._one, source, overall) for source in files]
            done, pending = wait(futures, return_when=FIRST_EXCEPTION)
            for future in done:
                if isinstance(future.exception(), (AuthError, ConnectionFailed)):
                    for other in pending:
                        other.cancel()
                    raise future.exception()
            return [future.result() for future in futures]

    def _one(self, source: Source, overall: tqdm) -> Outcome:
        slot = self.slots.get()
        bar = tqdm(total=1, desc=str(source.name)[-40:], unit="page", position=slot, leave=False,
                   disable=overall.disable)
        try:
            outcome = self._process(source, bar)
        except (AuthError, ConnectionFailed):
            raise
        except OcrClientError as error:
            outcome = Outcome(source, "refused", message=f"{error.code}: {error.detail}")
        finally:
            bar.close()
            self.slots.put(slot)
        overall.update(1)
        tqdm.write(describe(outcome))
        return outcome

    def _process(self, source: Source, bar: tqdm) -> Outcome:
        key = f"{hashlib.sha256(source.path.read_bytes()).hexdigest()}:{self.options_key}"
        entry = self.state.get(key)
        if self._finished(entry, source):
            return Outcome(source, "skipped", entry["job"], "done in an earlier run")
        job = self._job(entry)
        resumed = job is not None
        if job is None:  # a repeated upload is answered with the earlier job: see the module's docstring
            job = self.client.submit(source.path, **self.options)
            self.state.put(key, file=str(source.path), job=job.id, status=job.status)
        if not self.wait:
            return Outcome(source, job.status, job.id, reused=job.reused, resumed=resumed)

        def show(progress) -> None:
            bar.total = max(progress.pages_total, 1)
            bar.n = progress.pages_done
            bar.set_postfix_str(progress.status, refresh=True)

        job.wait(timeout=self.timeout, on_progress=show)
        self.state.put(key, status=job.status)
        if job.status != "succeeded":
            error = job.error or {}
            message = f"{error.get('code', '')}: {error.get('detail', '')}".strip(": ")
            return Outcome(source, job.status, job.id, message, reused=job.reused, resumed=resumed)
        written = [self._export(job, source, fmt) for fmt in self.formats]
        self.state.put(key, exports=sorted(set(entry.get("exports", [])) | set(self.formats)))
        return Outcome(source, "succeeded", job.id, reused=job.reused, resumed=resumed, exports=written)

    def _finished(self, entry: dict, source: Source) -> bool:
        if not entry.get("job") or (self.wait and entry.get("status") != "succeeded"):
            return False
        return all(fmt in entry.get("exports", []) and source.output(self.out_dir, fmt).exists()
                   for fmt in self.formats)

    def _job(self, entry: dict) -> Job | None:
        """The job an earlier run made for this file, unless it is gone or ended without success."""
        if not entry.get("job"):
            return None
        try:
            job = self.client.job(entry["job"])
        except NotFound:
            return None
        return None if job.status in ("failed", "canceled") else job

    def _export(self, job: Job, source: Source, fmt: str) -> Path:
        if fmt == FIELDS_FORMAT:
            return write_fields(job, source.output(self.out_dir, fmt), self.timeout or FIELDS_WAIT)
        name, params, _ = EXPORT_ALIASES.get(fmt, (fmt, {}, ""))
        return job.export(name, source.output(self.out_dir, fmt), **params)


def write_fields(job: Job, path: Path | None, wait: float) -> Path | bytes:
    """The job's fields as JSON, once the fields stage has ended (``WaitTimeout`` after ``wait`` seconds):
    written whole to ``path``, or the bytes without one. A stage that failed or was skipped is written too:
    its ``status`` and ``error`` say so."""
    fields = job.fields(wait=wait)
    if not fields.final:
        raise WaitTimeout(f"The fields of job {job.id} were still {fields.status} after {wait:.0f} s.")
    content = json.dumps(fields.raw, indent=1, ensure_ascii=False).encode()
    return content if path is None else write_whole(path, content)


def describe(outcome: Outcome) -> str:
    parts = [f"{outcome.source.path}: {outcome.status}"]
    if outcome.job_id:
        parts.append(f"job {outcome.job_id}" + (" (made by an earlier run)" if outcome.resumed else
                                                " (the server's earlier job for this file)" if outcome.reused else ""))
    if outcome.message:
        parts.append(outcome.message)
    parts += [f"-> {path}" for path in outcome.exports]
    return ", ".join(parts)
