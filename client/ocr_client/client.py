"""The blocking client: ``Client`` and its ``Job``.

    from ocr_client import Client

    with Client("http://127.0.0.1:8000", token) as client:
        job = client.submit("scan.pdf", pipeline="structure", lang="en")
        job.wait(on_progress=lambda p: print(p.pages_done, "/", p.pages_total))
        print(job.result().text)
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus
from websockets.sync.client import connect as ws_connect

from ocr_client import _core
from ocr_client._core import Call, RetryPolicy
from ocr_client._job import JobBase
from ocr_client.errors import AuthError, NotFound, WaitTimeout
from ocr_client.fields import UNSET, Evidence, Fields, field_change, poll_delay
from ocr_client.models import EditAnswer, Page, Progress, Result, SearchHit
from ocr_client.version import USER_AGENT

ProgressCallback = Callable[[Progress], Any]
CLOSE_TOKEN_REVOKED, CLOSE_JOB_DELETED = 4401, 4404  # the server's WebSocket close codes


class Client:
    """A token-authenticated client of one server's API (``/api/v1/``). Thread-safe; close it, or use ``with``.

    ``timeout``: seconds for each request (long polls and exports get longer). 429 and 503 are
    retried after the server's ``Retry-After``, and lost connections for idempotent calls, up to
    ``retry.max_retries`` times (``RetryPolicy``).
    """

    def __init__(self, base_url: str, token: str | None, *, timeout: float = 30.0,
                 retry: RetryPolicy | None = None, transport: httpx.BaseTransport | None = None):
        self.base_url = _core.normalized_base_url(base_url)
        self.token = token
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._http = httpx.Client(**_core.http_options(self.base_url, token, timeout, USER_AGENT), transport=transport)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    # --- Sending -------------------------------------------------------------------------------
    def send(self, call: Call) -> httpx.Response:
        """Send ``call`` with the retry rule; the answer, or its typed error."""
        attempt = 0
        while True:
            try:
                outcome = self._http.request(call.method, call.path, **_core.request_options(call, self.timeout))
            except httpx.TransportError as error:
                outcome = error
            delay = self.retry.next_wait(call, outcome, attempt, self.base_url)
            if delay is None:
                return _core.raise_for_error(outcome)
            time.sleep(delay)
            attempt += 1

    def call(self, call: Call) -> Any:
        return _core.parsed(self.send(call), call)

    # --- Jobs ----------------------------------------------------------------------------------
    def submit(self, src: str | os.PathLike | bytes, filename: str | None = None, *, pipeline: str | None = None,
               lang: str | None = None, pages: str | list[int] | None = None, text_layer: str | None = None,
               orientation: str | None = None, webhook_url: str | None = None,
               document_type: str | int | None = None) -> Job:
        """Queue a job for a file (a path or its bytes) or an http(s) URL a worker downloads.

        Options the server defaults when left out: ``pipeline`` (ocr, structure, vl), ``lang``, ``pages``
        ("1-3,7" or a list), ``text_layer`` (auto, ocr), ``orientation`` (auto, none), ``webhook_url``,
        ``document_type`` (the id or name of one of your document types; else the server classifies it).
        The same file with the same options within the server's dedup window returns the earlier
        job (``job.reused``). Raises ``Refused`` (413/415/422), ``BadRequest``, ``AuthError``...
        """
        options = {"pipeline": pipeline, "lang": lang, "pages": pages, "text_layer": text_layer,
                   "orientation": orientation, "webhook_url": webhook_url, "document_type": document_type}
        return Job(self, self.call(_core.submit_call(src, filename, options)))

    def job(self, job_id: str) -> Job:
        """The job ``job_id`` as the server has it now (``NotFound`` for an unknown job or another user's)."""
        return Job(self, {"id": str(job_id)}).refresh()

    def jobs(self, status: str | None = None, *, pipeline: str | None = None, created_after=None,
             created_before=None) -> Iterator[Job]:
        """The user's jobs, newest first, filtered; pages of 50 are fetched as the iteration goes."""
        call = Call("GET", "jobs", params=_core.jobs_params(status, pipeline, created_after, created_before))
        while call:
            body = self.call(call)
            yield from (Job(self, data) for data in body["results"])
            call = _core.next_page(self.base_url, body)

    def search(self, q: str, job: str | None = None, page: int | None = None, *, limit: int = 50) -> list[SearchHit]:
        """Lines of the user's results matching ``q`` (words, "a phrase", prefix*), best first, at most ``limit``."""
        hits: list[SearchHit] = []
        call: Call | None = Call("GET", "search", params=_core.search_params(q, job, page))
        while call and len(hits) < limit:
            body = self.call(call)
            hits += [SearchHit.from_dict(hit, self.base_url) for hit in body["results"]]
            call = _core.next_page(self.base_url, body)
        return hits[:limit]


class Job(JobBase):
    """One job of a ``Client``. Its fields are as last read: ``refresh()`` or ``wait()`` read them again."""

    _client: Client

    def refresh(self) -> Job:
        self._update(self._client.call(self._get()))
        return self

    def wait(self, timeout: float | None = None, on_progress: ProgressCallback | None = None) -> Job:
        """Until the job ends (succeeded, failed or canceled); ``on_progress`` gets each change.

        Listens on the job's WebSocket (``/ws/jobs/<id>/``); where no socket can be opened (a
        proxy without WebSockets) it long-polls ``GET /jobs/<id>?wait=``. Raises ``WaitTimeout``
        after ``timeout`` seconds. Returns the job, read afresh.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self.final and not self._listen(deadline, on_progress):
            self._poll(deadline, on_progress)
        return self.refresh()

    def _listen(self, deadline: float | None, on_progress: ProgressCallback | None) -> bool:
        """Follow the WebSocket until a final event: True; False when it cannot be used (then poll)."""
        headers = {"Authorization": f"Token {self._client.token}", "User-Agent": USER_AGENT}
        try:
            with ws_connect(_core.websocket_url(self._client.base_url, self.id), additional_headers=headers,
                            open_timeout=self._client.timeout, proxy=None) as socket:
                while True:
                    try:
                        progress = _core.event_progress(self.id, socket.recv(timeout=_core.quiet_for(deadline)))
                    except TimeoutError:  # a quiet socket: the job is read once, as events can be lost
                        if (progress := self._check(deadline)) is None:
                            continue
                    self.data = {**self.data, "status": progress.status}
                    if on_progress:
                        on_progress(progress)
                    if progress.final:
                        return True
        except InvalidStatus as error:
            if error.response.status_code == 403:  # refused at the handshake: the API says why
                self.refresh()
            return False
        except ConnectionClosed as error:
            _closed(self.id, error)
            return False
        except WaitTimeout:
            raise
        except (InvalidHandshake, OSError):  # no socket here (a proxy without WebSockets): poll
            return False

    def _check(self, deadline: float | None) -> Progress | None:
        """The job read afresh: its progress if it has ended, else None; ``WaitTimeout`` past the deadline."""
        if deadline is not None and time.monotonic() >= deadline:
            raise WaitTimeout(f"Job {self.id} is still {self.status}.")
        progress = _core.poll_progress(self.refresh().data)
        return progress if progress.final else None

    def _poll(self, deadline: float | None, on_progress: ProgressCallback | None) -> None:
        last = None
        while True:
            remaining = _core.MAX_WAIT_SECONDS if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                raise WaitTimeout(f"Job {self.id} is still {self.status}.")
            self._update(self._client.call(_core.wait_call(self.id, remaining)))
            progress = _core.poll_progress(self.data)
            if on_progress and progress != last:
                on_progress(progress)
            last = progress
            if progress.final:
                return

    def result(self) -> Result:
        """The normalized result (corrections applied) as typed objects; the pages done so far while it runs.

        Raises ``SchemaMismatch`` when the server writes another major schema version."""
        body = self._client.call(self._result())
        return Result.from_dict(body["result"] if body.get("inline") else self._client.call(self._result_json()))

    def export(self, fmt: str, path: str | os.PathLike | None = None, *, timeout: float = 600,
               **params: Any) -> bytes | Path:
        """The export ``fmt`` (txt, md, json, hocr, alto, pdf, page); ``params`` go in the query (``pdfa="2b"``).

        A long job's export is built by a worker (202 + Retry-After): this waits for it, up to
        ``timeout`` seconds. With ``path`` the file is written there whole (never half) and its
        ``Path`` returned; else the bytes.
        """
        call, deadline = _core.export_call(self.id, fmt, params), time.monotonic() + timeout
        while (response := self._client.send(call)).status_code == 202:
            if time.monotonic() > deadline:
                raise WaitTimeout(f"The {fmt} export of job {self.id} was not ready within {timeout} s.")
            time.sleep(_core.retry_after(response) or 5)
        return response.content if path is None else write_whole(Path(path), response.content)

    def page(self, page_number: int) -> Page:
        """One page as the review UI shows it now (corrections applied); ``NotFound`` for a page without a result."""
        return page_of(self.id, self._client.call(self._page(page_number)))

    def page_image(self, page_number: int) -> bytes:
        """The page image (JPEG) the engine read; every coordinate is in its pixels."""
        return self._client.call(self._page_image(page_number))

    def cancel(self) -> Job:
        self._update(self._client.call(self._action("cancel")))
        return self

    def retry(self) -> Job:
        """Run the failed pages again (``Conflict`` unless the job failed)."""
        self._update(self._client.call(self._action("retry")))
        return self

    def delete(self) -> None:
        self._client.call(self._delete())

    # --- Corrections (docs/review.md); each answers the page as it now is -------------------------
    def add_line(self, page: int, polygon, text: str | None = None, region_id: str | None = None) -> EditAnswer:
        """Draw a new line; without ``text`` a worker reads the box."""
        return EditAnswer.from_dict(self._client.call(self._line_create(page, polygon, text, region_id)))

    def edit_line(self, page: int, line_id: str, *, text: str | None = None, polygon=None,
                  region_id: str | None = None) -> EditAnswer:
        """Retype a line, move or reshape it, or give it to another region."""
        return EditAnswer.from_dict(self._client.call(self._line_edit(page, line_id, text, polygon, region_id)))

    def delete_line(self, page: int, line_id: str) -> EditAnswer:
        return EditAnswer.from_dict(self._client.call(self._line_delete(page, line_id)))

    def split_line(self, page: int, line_id: str, at: float) -> EditAnswer:
        """Split a line at x = ``at`` (page pixels); the answer names the new line (``new_line_id``)."""
        return EditAnswer.from_dict(self._client.call(self._line_split(page, line_id, at)))

    def merge_lines(self, page: int, line_ids: list[str]) -> EditAnswer:
        return EditAnswer.from_dict(self._client.call(self._lines_merge(page, line_ids)))

    def edit_region(self, page: int, region_id: str, *, type: str | None = None,  # noqa: A002
                    order: int | None = None) -> EditAnswer:
        """Retype a region (``type``) or move it in the reading order (``order``, 1-based)."""
        return EditAnswer.from_dict(self._client.call(self._region_edit(page, region_id, type, order)))

    def undo(self, correction_id: int) -> EditAnswer:
        return EditAnswer.from_dict(self._client.call(self._undo(correction_id)))

    # --- Fields (docs/extraction.md) ---------------------------------------------------------------
    def fields(self, wait: float = 0) -> Fields:
        """The job's document type and fields, each value with its confidence, grounding and lines.

        The fields stage runs after OCR (``status`` "pending" until it ends): ``wait`` seconds to wait for
        it to end first; the answer as it stands when they are up (still "pending" if it has not ended)."""
        deadline, attempt = time.monotonic() + wait, 0
        while True:
            found = Fields.from_dict(self._client.call(self._fields()))
            if found.final or time.monotonic() >= deadline:
                return found
            time.sleep(min(poll_delay(attempt), max(0.0, deadline - time.monotonic())))
            attempt += 1

    def correct_field(self, name: str, *, value: Any = UNSET, evidence: list[Evidence | dict] | None = None) -> Fields:
        """Correct one value (``name``: ``total``, ``line_items.0.amount``), its evidence (the lines it is
        read from: ``Evidence`` or ``{"page", "line_id"}``), or both; stored with who and when. The fields after."""
        return Fields.from_dict(self._client.call(self._field_edit(name, field_change(value, evidence))))

    def set_document_type(self, document_type: str | int) -> Fields:
        """Name the job's document type (its id or name) as a reviewer: its fields are read again, and the
        change teaches the classifier. The fields after (``status`` "pending" while they are read again)."""
        self._client.call(self._document_type_set(document_type))
        return self.fields()


def _closed(job_id: str, error: ConnectionClosed) -> None:
    """A socket the server closed on purpose says why; any other close falls back to polling."""
    code = error.rcvd.code if error.rcvd else None
    if code == CLOSE_JOB_DELETED:
        raise NotFound(f"Job {job_id} was deleted.", code="not_found", status=404) from None
    if code == CLOSE_TOKEN_REVOKED:
        raise AuthError("The API token was replaced while waiting.", code="token_revoked", status=401) from None


def page_of(job_id: str, body: dict) -> Page:
    """The normalized page of a page answer; a failed page (or one not read yet) has none."""
    if not body.get("normalized"):
        error = body.get("error") or {}
        raise NotFound(f"Page {body.get('page_number')} of job {job_id} has no result ({body.get('status')}"
                       + (f": {error.get('code')}: {error.get('detail')}" if error else "") + ").",
                       code="no_page_result", status=None, body=body)
    return Page.from_dict(body["normalized"])


def write_whole(path: Path, content: bytes) -> Path:
    """Write ``content`` to ``path`` through a temporary file beside it: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise
    return path
