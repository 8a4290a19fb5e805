"""``manifest.json``: sha256 of every file in the pack and where each model came from.

``verify`` compares the files on disk with it, so a truncated copy, a disk error
or a hand-edited YAML is caught before the engine loads a broken model; ``build``
uses it to skip models that are already there.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

FILENAME = "manifest.json"
FORMAT = 1


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def hash_dir(model_dir: Path) -> dict[str, str]:
    return {p.relative_to(model_dir).as_posix(): sha256(p) for p in sorted(model_dir.rglob("*")) if p.is_file()}


def load(pack_dir: Path) -> dict:
    path = pack_dir / FILENAME
    if not path.exists():
        return {"format": FORMAT, "models": {}}
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: manifest format {data.get('format')!r}, expected {FORMAT}; rebuild with --force")
    return data


def save(pack_dir: Path, data: dict) -> None:
    # Write-then-rename, so a crash never leaves a half-written manifest behind.
    tmp = pack_dir / f".{FILENAME}.tmp"
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, pack_dir / FILENAME)


def problems(pack_dir: Path, dir_name: str, entry: dict | None) -> list[str]:
    """What is wrong with one model folder, compared with its manifest entry."""
    model_dir = pack_dir / dir_name
    if entry is None:
        return [f"{dir_name}: not in {FILENAME} (not built)"]
    if not model_dir.is_dir():
        return [f"{dir_name}: folder missing"]
    found = []
    for rel, expected in sorted(entry["files"].items()):
        path = model_dir / rel
        if not path.is_file():
            found.append(f"{dir_name}/{rel}: missing")
        elif sha256(path) != expected:
            found.append(f"{dir_name}/{rel}: checksum mismatch")
    return found
