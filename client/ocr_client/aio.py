"""The asyncio client: ``AsyncClient`` and ``AsyncJob``, the same calls as ``Client`` and ``Job``, awaited.

    async with AsyncClient("http://127.0.0.1:8000", token) as client:
        job = await client.submit("scan.pdf")
        await job.wait()
        print((await job.result()).text)
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from ocr_client import _core
from ocr_client._core import Call, RetryPolicy
from ocr_client._job import JobBase
from ocr_client.client import _closed, page_of, write_whole
from ocr_client.errors import WaitTimeout
from ocr_client.fields import UNSET, Evidence, Fields, field_change, poll_delay
from ocr_client.models import EditAnswer, Page, Progress, Result, SearchHit
from ocr_client.version import USER_AGENT

ProgressCallback = Callable[[Progress], Any]  # a plain function or a coroutine function


class AsyncClient:
    """``Client`` for asyncio: every method is awaited; ``jobs()`` is an async iterator."""

    def __init__(self, base_url: str, token: str | None, *, timeout: float = 30.0,
                 retry: RetryPolicy | None = None, transport: httpx.AsyncBaseTransport | None = None):
        self.base_url = _core.normalized_base_url(base_url)
        self.token = token
        self.timeout = timeout
        self.retry = retry or RetryPolicy()
        self._http = httpx.AsyncClient(**_core.http_options(self.base_url, token, timeout, USER_AGENT),
                                       transport=transport)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def send(self, call: Call) -> httpx.Response:
        attempt = 0
        while True:
            try:
                outcome = await self._http.request(call.method, call.path,
                                                   **_core.request_options(call, self.timeout))
            except httpx.TransportError as error:
                outcome = error
            delay = self.retry.next_wait(call, outcome, attempt, self.base_url)
            if delay is None:
                return _core.raise_for_error(outcome)
            await asyncio.sleep(delay)
            attempt += 1

    async def call(self, call: Call) -> Any:
        return _core.parsed(await self.send(call), call)

    async def submit(self, src: str | os.PathLike | bytes, filename: str | None = None, *,
                     pipeline: str | None = None, lang: str | None = None, pages: str | list[int] | None = None,
                     text_layer: str | None = None, orientation: str | None = None,
                     webhook_url: str | None = None, document_type: str | int | None = None) -> AsyncJob:
        """See ``Client.submit``."""
        options = {"pipeline": pipeline, "lang": lang, "pages": pages, "text_layer": text_layer,
                   "orientation": orientation, "webhook_url": webhook_url, "document_type": document_type}
        call = await asyncio.to_thread(_core.submit_call, src, filename, options)  # reads the file off the loop
        return AsyncJob(self, await self.call(call))

    async def job(self, job_id: str) -> AsyncJob:
        return await AsyncJob(self, {"id": str(job_id)}).refresh()

    async def jobs(self, status: str | None = None, *, pipeline: str | None = None, created_after=None,
                   created_before=None) -> AsyncIterator[AsyncJob]:
        call = Call("GET", "jobs", params=_core.jobs_params(status, pipeline, created_after, created_before))
        while call:
            body = await self.call(call)
            for data in body["results"]:
                yield AsyncJob(self, data)
            call = _core.next_page(self.base_url, body)

    async def search(self, q: str, job: str | None = None, page: int | None = None, *,
                     limit: int = 50) -> list[SearchHit]:
        hits: list[SearchHit] = []
        call: Call | None = Call("GET", "search", params=_core.search_params(q, job, page))
        while call and len(hits) < limit:
            body = await self.call(call)
            hits += [SearchHit.from_dict(hit, self.base_url) for hit in body["results"]]
            call = _core.next_page(self.base_url, body)
        return hits[:limit]


class AsyncJob(JobBase):
    """``Job`` for ``AsyncClient``."""

    _client: AsyncClient

    async def refresh(self) -> AsyncJob:
        self._update(await self._client.call(self._get()))
        return self

    async def wait(self, timeout: float | None = None, on_progress: ProgressCallback | None = None) -> AsyncJob:
        """See ``Job.wait``; ``on_progress`` may be a coroutine function."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self.final and not await self._listen(deadline, on_progress):
            await self._poll(deadline, on_progress)
        return await self.refresh()

    async def _listen(self, deadline: float | None, on_progress: ProgressCallback | None) -> bool:
        headers = {"Authorization": f"Token {self._client.token}", "User-Agent": USER_AGENT}
        try:
            async with ws_connect(_core.websocket_url(self._client.base_url, self.id), additional_headers=headers,
                                  open_timeout=self._client.timeout, proxy=None) as socket:
                while True:
                    try:
                        message = await asyncio.wait_for(socket.recv(), _core.quiet_for(deadline))
                        progress = _core.event_progress(self.id, message)
                    except TimeoutError:  # see Job._listen
                        if (progress := await self._check(deadline)) is None:
                            continue
                    self.data = {**self.data, "status": progress.status}
                    await _report(on_progress, progress)
                    if progress.final:
                        return True
        except InvalidStatus as error:
            if error.response.status_code == 403:
                await self.refresh()
            return False
        except ConnectionClosed as error:
            _closed(self.id, error)
            return False
        except WaitTimeout:
            raise
        except (InvalidHandshake, OSError):
            return False

    async def _check(self, deadline: float | None) -> Progress | None:
        if deadline is not None and time.monotonic() >= deadline:
            raise WaitTimeout(f"Job {self.id} is still {self.status}.")
        progress = _core.poll_progress((await self.refresh()).data)
        return progress if progress.final else None

    async def _poll(self, deadline: float | None, on_progress: ProgressCallback | None) -> None:
        last = None
        while True:
            remaining = _core.MAX_WAIT_SECONDS if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                raise WaitTimeout(f"Job {self.id} is still {self.status}.")
            self._update(await self._client.call(_core.wait_call(self.id, remaining)))
            progress = _core.poll_progress(self.data)
            if progress != last:
                await _report(on_progress, progress)
            last = progress
            if progress.final:
                return

    async def result(self) -> Result:
        body = await self._client.call(self._result())
        return Result.from_dict(body["result"] if body.get("inline") else await self._client.call(self._result_json()))

    async def export(self, fmt: str, path: str | os.PathLike | None = None, *, timeout: float = 600,
                     **params: Any) -> bytes | Path:
        call, deadline = _core.export_call(self.id, fmt, params), time.monotonic() + timeout
        while (response := await self._client.send(call)).status_code == 202:
            if time.monotonic() > deadline:
                raise WaitTimeout(f"The {fmt} export of job {self.id} was not ready within {timeout} s.")
            await asyncio.sleep(_core.retry_after(response) or 5)
        if path is None:
            return response.content
        return await asyncio.to_thread(write_whole, Path(path), response.content)

    async def page(self, page_number: int) -> Page:
        return page_of(self.id, await self._client.call(self._page(page_number)))

    async def page_image(self, page_number: int) -> bytes:
        return await self._client.call(self._page_image(page_number))

    async def cancel(self) -> AsyncJob:
        self._update(await self._client.call(self._action("cancel")))
        return self

    async def retry(self) -> AsyncJob:
        self._update(await self._client.call(self._action("retry")))
        return self

    async def delete(self) -> None:
        await self._client.call(self._delete())

    async def add_line(self, page: int, polygon, text: str | None = None, region_id: str | None = None) -> EditAnswer:
        return EditAnswer.from_dict(await self._client.call(self._line_create(page, polygon, text, region_id)))

    async def edit_line(self, page: int, line_id: str, *, text: str | None = None, polygon=None,
                        region_id: str | None = None) -> EditAnswer:
        return EditAnswer.from_dict(await self._client.call(self._line_edit(page, line_id, text, polygon, region_id)))

    async def delete_line(self, page: int, line_id: str) -> EditAnswer:
        return EditAnswer.from_dict(await self._client.call(self._line_delete(page, line_id)))

    async def split_line(self, page: int, line_id: str, at: float) -> EditAnswer:
        return EditAnswer.from_dict(await self._client.call(self._line_split(page, line_id, at)))

    async def merge_lines(self, page: int, line_ids: list[str]) -> EditAnswer:
        return EditAnswer.from_dict(await self._client.call(self._lines_merge(page, line_ids)))

    async def edit_region(self, page: int, region_id: str, *, type: str | None = None,  # noqa: A002
                          order: int | None = None) -> EditAnswer:
        return EditAnswer.from_dict(await self._client.call(self._region_edit(page, region_id, type, order)))

    async def undo(self, correction_id: int) -> EditAnswer:
        return EditAnswer.from_dict(await self._client.call(self._undo(correction_id)))

    async def fields(self, wait: float = 0) -> Fields:
        """See ``Job.fields``."""
        deadline, attempt = time.monotonic() + wait, 0
        while True:
            found = Fields.from_dict(await self._client.call(self._fields()))
            if found.final or time.monotonic() >= deadline:
                return found
            await asyncio.sleep(min(poll_delay(attempt), max(0.0, deadline - time.monotonic())))
            attempt += 1

    async def correct_field(self, name: str, *, value: Any = UNSET,
                            evidence: list[Evidence | dict] | None = None) -> Fields:
        """See ``Job.correct_field``."""
        return Fields.from_dict(await self._client.call(self._field_edit(name, field_change(value, evidence))))

    async def set_document_type(self, document_type: str | int) -> Fields:
        """See ``Job.set_document_type``."""
        await self._client.call(self._document_type_set(document_type))
        return await self.fields()


async def _report(on_progress: ProgressCallback | None, progress: Progress) -> None:
    if on_progress is not None:
        outcome = on_progress(progress)
        if inspect.isawaitable(outcome):
            await outcome
