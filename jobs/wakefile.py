"""A file touched to tell other processes that something happened, and read back as a mark.

A watcher compares the file's modification time with the one it last saw: a ``stat`` call where a
database query would be needed otherwise. Where the processes share no disk the mark never moves,
and the watchers fall back on their own polling. Two touches within the file system's clock tick
leave one mark: watchers that must not miss one still poll, less often.
"""

from __future__ import annotations

import os
from pathlib import Path


def touch(path: str | os.PathLike) -> None:
    """Move the mark of ``path`` (created with its folder when missing); a failure only delays watchers."""
    try:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()
    except OSError:
        pass


def mark(path: str | os.PathLike) -> int:
    """The current mark of ``path``: its modification time in ns, 0 while it does not exist."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0
