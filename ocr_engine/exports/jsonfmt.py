"""JSON: the normalized result exactly as stored, UTF-8, indented."""

from __future__ import annotations

import json

from ..schema import DocumentResult, to_dict


def render(result: DocumentResult) -> bytes:
    return json.dumps(to_dict(result), ensure_ascii=False, indent=2).encode("utf-8")
