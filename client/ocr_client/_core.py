"""What the sync and async clients share: each API call as data, the retry rule, answers checked and parsed.

``Client`` and ``AsyncClient`` differ only in how they send a ``Call`` and sleep; every route,
option and rule is written once, here.
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx2 as httpx

from ocr_client.errors import ConnectionFailed, ForeignLink, OcrClientError, error_for
from ocr_client.models import FINAL_STATUSES, Progress

logger = logging.getLogger("ocr_client")

API_PREFIX = "/api/v1/"
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
RETRY_STATUSES = frozenset({429, 502, 503, 504})
MAX_WAIT_SECONDS = 50  # the server's longest ?wait= (below a proxy's 60 s read timeout)
SUBMIT_OPTIONS = ("pipeline", "lang", "pages", "text_layer", "orientation", "webhook_url", "document_type")


@dataclass(frozen=True)
class Call:
    """One API request: ``path`` relative to ``/api/v1/`` (or an absolute URL the server gave)."""

    method: str
    path: str
    params: dict[str, Any] | None = None
    json: Any = None
    data: dict[str, str] | None = None
    files: dict[str, tuple[str, bytes]] | None = None
    # Safe to send again after a lost connection: GET/PUT/DELETE, and an upload (the server
    # answers a repeated file and options with the job it already made).
    idempotent: bool | None = None
    read_timeout: float | None = None
    binary: bool = False  # the answer is bytes (an export, an image), not JSON

    @property
    def safe_to_resend(self) -> bool:
        return self.idempotent if self.idempotent is not None else self.method in IDEMPOTENT_METHODS


@dataclass(frozen=True)
class RetryPolicy:
    """429/502/503/504 are retried after ``Retry-After`` (or a growing pause), ``max_retries`` times, as long as
    the server asks for at most ``max_retry_wait`` seconds; a lost connection ``max_connection_retries`` times,
    for idempotent calls (a server that is down is reported within seconds)."""

    max_retries: int = 5
    max_connection_retries: int = 3
    max_retry_wait: float = 120.0
    backoff: float = 0.5

    def after_answer(self, response: httpx.Response, attempt: int) -> float | None:
        if response.status_code not in RETRY_STATUSES or attempt >= self.max_retries:
            return None
        wait = retry_after(response)
        if wait is None:
            return self._pause(attempt)
        return wait if wait <= self.max_retry_wait else None

    def after_error(self, call: Call, error: httpx.TransportError, attempt: int) -> float | None:
        # Nothing reached the server when the connection could not be made: any call may go again.
        unsent = isinstance(error, (httpx.ConnectError, httpx.ConnectTimeout))
        if attempt >= self.max_connection_retries or not (unsent or call.safe_to_resend):
            return None
        return self._pause(attempt)

    def next_wait(self, call: Call, outcome: httpx.Response | httpx.TransportError, attempt: int,
                  base_url: str) -> float | None:
        """Seconds to wait before sending ``call`` again after ``outcome`` (logged), or None when the
        answer is final; a connection error that is not retried is raised as ``ConnectionFailed``."""
        if isinstance(outcome, httpx.TransportError):
            delay = self.after_error(call, outcome, attempt)
            if delay is None:
                raise connection_failed(base_url, outcome) from outcome
            log_retry(call, type(outcome).__name__, delay, attempt)
            return delay
        delay = self.after_answer(outcome, attempt)
        if delay is not None:
            log_retry(call, f"HTTP {outcome.status_code}", delay, attempt)
        return delay

    def _pause(self, attempt: int) -> float:
        return min(self.backoff * 2 ** attempt, 10.0)


def retry_after(response: httpx.Response) -> float | None:
    """``Retry-After`` in seconds (delta-seconds or an HTTP date), or None."""
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def log_retry(call: Call, why: str, delay: float, attempt: int) -> None:
    logger.warning("%s %s: %s; retrying in %.1f s (retry %d)", call.method, call.path, why, delay, attempt + 1)


def connection_failed(base_url: str, error: httpx.TransportError) -> ConnectionFailed:
    return ConnectionFailed(f"No answer from {base_url}: {error or type(error).__name__}")


def raise_for_error(response: httpx.Response) -> httpx.Response:
    """``response`` if it is not an error; else the typed ``OcrClientError`` of its 4xx/5xx answer."""
    if response.status_code >= 400:
        try:
            body: Any = response.json()
        except ValueError:
            body = response.text
        raise error_for(response.status_code, body, retry_after(response))
    return response


def parsed(response: httpx.Response, call: Call) -> Any:
    """The answer's body: bytes for a ``binary`` call, else JSON (None for an empty answer)."""
    if call.binary:
        return response.content
    if response.status_code == 204 or not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        raise OcrClientError(f"The server's answer to {call.method} {call.path} is not JSON "
                             f"({response.headers.get('content-type')}): is {response.url} this API?",
                             code="not_json", status=response.status_code) from None


def http_options(base_url: str, token: str | None, timeout: float, user_agent: str) -> dict:
    headers = {"User-Agent": user_agent, "Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Token {token}"
    return {"base_url": base_url + API_PREFIX, "headers": headers, "timeout": httpx.Timeout(timeout),
            "follow_redirects": False}


def request_options(call: Call, timeout: float) -> dict:
    options: dict[str, Any] = {"params": call.params, "data": call.data, "files": call.files}
    if call.json is not None:
        options["json"] = call.json
    if call.read_timeout:
        options["timeout"] = httpx.Timeout(timeout, read=call.read_timeout)
    return options


def own_link(base_url: str, link: str) -> str:
    """``link`` (a URL the server gave, absolute or relative) as an absolute URL, if it stays on this client's API:
    the scheme, host and port of ``base_url`` and a path under its ``/api/v1/``; else ``ForeignLink``.

    The client sends its token with every request, so a link elsewhere (planted in a list's ``next`` by a
    proxy, a misconfigured ``Host``, or a server that is not ours) would hand the token over. The URL is
    judged as httpx parses it, the parser that sends it."""
    root = httpx.URL(base_url + API_PREFIX)
    url = root.join(link)
    on_api = url.path.startswith(root.path) and ".." not in url.path.split("/")
    if (url.scheme, url.host, url.port, url.userinfo) != (root.scheme, root.host, root.port, b"") or not on_api:
        raise ForeignLink(f"The server's link {link!r} leads off its API ({root}): not followed, so that the "
                          "token is sent nowhere else.")
    return str(url)


def next_page(base_url: str, body: dict) -> Call | None:
    """The call for the page after ``body`` of a paginated list, or None after the last."""
    return Call("GET", own_link(base_url, body["next"])) if body.get("next") else None


def normalized_base_url(base_url: str) -> str:
    if not base_url or urlsplit(base_url).scheme not in ("http", "https"):
        raise ValueError(f"base_url must be an http(s) URL such as http://127.0.0.1:8000, not {base_url!r}")
    return base_url.rstrip("/")


# --- The calls ------------------------------------------------------------------------------------

def submit_call(src: str | os.PathLike | bytes, filename: str | None, options: dict[str, Any]) -> Call:
    """POST jobs: ``src`` is a file's path, its bytes, or an http(s) URL for a worker to download (``file_url``)."""
    unknown = sorted(set(options) - set(SUBMIT_OPTIONS))
    if unknown:
        raise TypeError(f"submit() got unknown options {unknown}; it takes {list(SUBMIT_OPTIONS)}")
    data = {name: _form_value(value) for name, value in options.items() if value is not None}
    if isinstance(src, str) and urlsplit(src).scheme in ("http", "https"):
        return Call("POST", "jobs", data={**data, "file_url": src}, idempotent=False)
    if isinstance(src, (bytes, bytearray, memoryview)):
        content, name = bytes(src), filename or "upload"
    else:
        path = Path(src)
        content, name = path.read_bytes(), filename or path.name
    return Call("POST", "jobs", data=data, files={"file": (name, content)}, idempotent=True)


def _form_value(value: Any) -> str:
    if isinstance(value, (list, tuple, range)):  # pages=[1, 2, 5] -> "1,2,5"
        return ",".join(str(v) for v in value)
    return str(value)


def job_path(job_id: str, *parts: str | int) -> str:
    return "/".join(["jobs", str(job_id), *(str(p) for p in parts)])


def wait_call(job_id: str, seconds: float) -> Call:
    seconds = max(0.0, min(seconds, MAX_WAIT_SECONDS))
    return Call("GET", job_path(job_id), params={"wait": f"{seconds:.1f}"} if seconds else None,
                read_timeout=seconds + 30)


def export_call(job_id: str, fmt: str, params: dict[str, Any]) -> Call:
    if not fmt.isalpha() or not fmt.islower():
        raise ValueError(f"export format must be lowercase letters (txt, md, json, hocr, alto, pdf, page), not {fmt!r}")
    return Call("GET", job_path(job_id, f"export.{fmt}"), params={k: _form_value(v) for k, v in params.items()} or None,
                binary=True, read_timeout=300)


def jobs_params(status: str | None, pipeline: str | None, created_after: Any, created_before: Any) -> dict:
    values = {"status": status, "pipeline": pipeline, "created_after": created_after, "created_before": created_before}
    return {name: value.isoformat() if hasattr(value, "isoformat") else value
            for name, value in values.items() if value is not None}


def search_params(q: str, job: str | None, page: int | None) -> dict:
    return {name: value for name, value in {"q": q, "job": job, "page": page}.items() if value is not None}


def line_change(text: str | None, polygon: Any, region_id: str | None) -> dict:
    body = {name: value for name, value in {"text": text, "polygon": polygon, "region_id": region_id}.items()
            if value is not None}
    if not body:
        raise TypeError("give at least one of text, polygon, region_id")
    return body


def region_change(type: str | None, order: int | None) -> dict:  # noqa: A002 - the API's field name
    body = {name: value for name, value in {"type": type, "order": order}.items() if value is not None}
    if not body:
        raise TypeError("give type, order or both")
    return body


# --- Progress --------------------------------------------------------------------------------------

def websocket_url(base_url: str, job_id: str) -> str:
    parts = urlsplit(base_url)
    scheme = "wss" if parts.scheme == "https" else "ws"
    return urlunsplit((scheme, parts.netloc, f"{parts.path}/ws/jobs/{job_id}/", "", ""))


# A job's socket silent this long: the job is read once over HTTP. The server sends events on a
# best-effort channel (a channel-layer hiccup loses them, by design, rather than failing the job),
# so a wait must not hang on one that never comes.
QUIET_SECONDS = 10.0


def quiet_for(deadline: float | None) -> float:
    """How long to listen before reading the job: ``QUIET_SECONDS``, or less where the deadline comes first."""
    return QUIET_SECONDS if deadline is None else max(0.0, min(QUIET_SECONDS, deadline - time.monotonic()))


def event_progress(job_id: str, message: str | bytes) -> Progress:
    """A WebSocket event (``{"event", "status", "job": {...}, ...}``) as ``Progress``."""
    event = json.loads(message)
    summary = event.get("job") or {}
    return Progress(job_id=job_id, event=event.get("event", ""), status=event.get("status") or summary.get("status"),
                    pages_done=summary.get("pages_done") or 0, pages_total=summary.get("pages_total") or 0,
                    page_number=event.get("page_number"))


def poll_progress(data: dict) -> Progress:
    progress = data.get("progress") or {}
    return Progress(job_id=data["id"], event="poll", status=data["status"], pages_done=progress.get("pages_done", 0),
                    pages_total=progress.get("pages_total", 0), via="poll")


def is_final(status: str | None) -> bool:
    return status in FINAL_STATUSES
