"""What ``Job`` and ``AsyncJob`` share: the job's fields as the server last sent them, and the call of each action."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from ocr_client._core import Call, job_path, line_change, region_change
from ocr_client.models import FINAL_STATUSES


class JobBase:
    """A job's last known state (``data``: the server's job representation) and the calls that act on it."""

    def __init__(self, client, data: dict[str, Any]):
        self._client = client
        self.data = data

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id} {self.status}>"

    def __eq__(self, other) -> bool:
        return isinstance(other, JobBase) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def status(self) -> str | None:
        """queued, running, succeeded, failed or canceled (None until the job is first read)."""
        return self.data.get("status")

    @property
    def final(self) -> bool:
        return self.status in FINAL_STATUSES

    @property
    def progress(self) -> dict[str, Any]:
        """``{"pages_done", "pages_total", "percent"}``."""
        return self.data.get("progress") or {}

    @property
    def document(self) -> dict[str, Any]:
        """``{"name", "media_type", "size_bytes", "page_count", "sha256"}``."""
        return self.data.get("document") or {}

    @property
    def error(self) -> dict[str, str] | None:
        """``{"code", "detail"}`` of a failed job, else None."""
        return self.data.get("error")

    @property
    def reused(self) -> bool:
        """True when ``submit`` was answered with an earlier job for the same file and options (server dedup)."""
        return bool(self.data.get("reused"))

    @property
    def links(self) -> dict[str, Any]:
        return self.data.get("links") or {}

    def _update(self, data: dict[str, Any]) -> None:
        self.data = {**data, "reused": data.get("reused", self.reused)}  # the submit's answer says it, not a GET

    # The calls; each flavour sends them its own way.
    def _get(self) -> Call:
        return Call("GET", job_path(self.id))

    def _action(self, name: str) -> Call:
        return Call("POST", job_path(self.id, name))

    def _delete(self) -> Call:
        return Call("DELETE", job_path(self.id))

    def _result(self) -> Call:
        return Call("GET", job_path(self.id, "result"))

    def _result_json(self) -> Call:
        return Call("GET", job_path(self.id, "result.json"), read_timeout=300)

    def _page(self, page_number: int) -> Call:
        return Call("GET", job_path(self.id, "pages", page_number), params={"raw": "false"})

    def _page_image(self, page_number: int) -> Call:
        return Call("GET", job_path(self.id, "pages", page_number, "image"), binary=True)

    def _line_create(self, page: int, polygon, text: str | None, region_id: str | None) -> Call:
        body = {"polygon": polygon, **({"text": text} if text is not None else {}),
                **({"region_id": region_id} if region_id else {})}
        return Call("POST", job_path(self.id, "pages", page, "lines"), json=body, read_timeout=120)

    def _line_edit(self, page: int, line_id: str, text, polygon, region_id) -> Call:
        return Call("PATCH", job_path(self.id, "pages", page, "lines", line_id),
                    json=line_change(text, polygon, region_id), read_timeout=120)

    def _line_delete(self, page: int, line_id: str) -> Call:
        return Call("DELETE", job_path(self.id, "pages", page, "lines", line_id), idempotent=False)

    def _line_split(self, page: int, line_id: str, at: float) -> Call:
        return Call("POST", job_path(self.id, "pages", page, "lines", line_id, "split"), json={"at": at})

    def _lines_merge(self, page: int, line_ids: list[str]) -> Call:
        return Call("POST", job_path(self.id, "pages", page, "lines", "merge"), json={"line_ids": list(line_ids)})

    def _region_edit(self, page: int, region_id: str, type, order) -> Call:  # noqa: A002
        return Call("PATCH", job_path(self.id, "pages", page, "regions", region_id), json=region_change(type, order))

    def _undo(self, correction_id: int) -> Call:
        return Call("POST", job_path(self.id, "corrections", correction_id, "undo"))

    # Fields (docs/extraction.md)
    def _fields(self) -> Call:
        return Call("GET", job_path(self.id, "fields"))

    def _field_edit(self, name: str, body: dict[str, Any]) -> Call:
        return Call("PATCH", job_path(self.id, "fields", quote(name, safe="")), json=body)

    def _document_type_set(self, document_type: str | int) -> Call:
        return Call("PUT", job_path(self.id, "document-type"), json={"document_type": str(document_type)})
