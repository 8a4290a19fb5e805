"""The watched folder's file operations, safe against whoever may write to the folder.

Whoever may drop files into the folder (a scanner share) may also plant links, FIFOs and odd names
there, and swap a file for one of those between two looks. So no call takes a path through the
folder: each is relative to a descriptor of a folder opened with ``O_DIRECTORY | O_NOFOLLOW`` (done/
and failed/ anew for every move, so that a link planted there meanwhile is refused, never followed).
An input file is opened once, with ``O_NOFOLLOW | O_NONBLOCK`` (a link is refused, a FIFO never
blocks), checked with ``fstat`` and read through that one descriptor. What the watcher writes is
first a new file under a random hidden name (``O_CREAT | O_EXCL | O_NOFOLLOW``), then renamed over its
name: a rename replaces a link planted under that name, it never writes through it.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from ocr_engine.errors import FileTooLarge, InputError

NAME_MAX = 255  # bytes in a file name (every Linux file system)
ERROR_SUFFIX = ".error.txt"  # failed/<name>.error.txt: why the file is there
PART_SUFFIX = ".watch-part"  # a file being written: hidden (leading dot) and renamed when whole
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
PART_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
Signature = tuple[int, int]  # (size in bytes, mtime in ns)


class UnsafeFolder(Exception):
    """At start: done/ or failed/ is there but is not a folder (a link, a file). The watcher does not start."""


class Refused(Exception):
    """A read, move or write the watcher will not do (a link, a FIFO or a file where it expects its own
    folder or the file it listed); nothing was changed, and the next pass tries again."""


def shown_name(name: str) -> str:
    """A listed name as text for the database and the logs: bytes that are not UTF-8 as ``\\xNN``, at
    most NAME_MAX characters."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")[:NAME_MAX]


def is_utf8(name: str) -> bool:
    try:
        os.fsencode(name).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def error_file_name(name: str) -> str:
    """``<name>.error.txt``, the name cut (at a character, where it is UTF-8) so that the whole fits NAME_MAX."""
    raw, room = os.fsencode(name), NAME_MAX - len(ERROR_SUFFIX)
    cut = raw[:room]
    if len(raw) > room and is_utf8(name):
        cut = cut.decode("utf-8", "ignore").encode("utf-8")
    return os.fsdecode(cut) + ERROR_SUFFIX


@contextmanager
def opened_dir(name: str | Path, dir_fd: int | None = None) -> Iterator[int]:
    fd = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
    try:
        yield fd
    finally:
        os.close(fd)


def subfolders_make(folder: Path, names: tuple[str, ...]) -> None:
    """Create the subfolders ``names`` of ``folder``; raise UnsafeFolder for one that is there but is no folder."""
    with opened_dir(folder) as folder_fd:
        for name in names:
            try:
                os.mkdir(name, dir_fd=folder_fd)
            except FileExistsError:
                mode = os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode
                if not stat.S_ISDIR(mode):
                    what = "a symbolic link" if stat.S_ISLNK(mode) else "not a folder"
                    raise UnsafeFolder(f"{folder / name} is {what}; the watcher moves files only into a folder of "
                                       f"its own there. Remove it, or let the watcher create it.") from None


@contextmanager
def subfolder(folder_fd: int, name: str) -> Iterator[int]:
    """The subfolder ``name`` (made again if it was removed), never through a link: Refused where a link
    or a file took its place."""
    with suppress(FileExistsError):
        os.mkdir(name, dir_fd=folder_fd)
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=folder_fd)
    except OSError as exc:
        if exc.errno in (errno.ENOTDIR, errno.ELOOP):
            raise Refused(f"{name}/ is not a folder now (a link or a file took its place): "
                          "files stay where they are until it is one again.") from None
        raise
    try:
        yield fd
    finally:
        os.close(fd)


def folder_files(folder_fd: int) -> dict[str, Signature]:
    """The regular files directly in the folder (not done/ or failed/), hidden ones (a copy tool's
    temporary files) left out. Names that are not UTF-8 come with their bytes as surrogates (os.fsdecode)."""
    found = {}
    with os.scandir(folder_fd) as entries:
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # moved away while listed
            if stat.S_ISREG(info.st_mode):
                found[entry.name] = (info.st_size, info.st_mtime_ns)
    return found


def read_settled(folder_fd: int, name: str, signature: Signature, *, max_bytes: int) -> bytes | None:
    """The content of the regular file ``name`` that settled at ``signature``, read through one descriptor;
    None when it changed since (it settles again first). Refused when something else took its name; an
    InputError for a file the watcher does not take (hard-linked, too large)."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=folder_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):  # a link; a socket
            raise Refused(f"{shown_name(name)} is no longer a regular file; left alone.") from None
        raise
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):  # a FIFO or a device swapped in
            raise Refused(f"{shown_name(name)} is no longer a regular file; left alone.")
        if (info.st_size, info.st_mtime_ns) != signature:
            return None
        if info.st_nlink > 1:  # a writer's hard link to a file it may not read, which the watcher may
            raise InputError("The file has other names (hard links); the watcher takes files of one name only.",
                             code="file_hard_linked")
        if info.st_size > max_bytes:
            raise FileTooLarge(f"The file is {info.st_size} bytes; the limit is {max_bytes}.")
        content = fh.read(info.st_size + 1)
        after = os.fstat(fd)
    if len(content) != info.st_size or (after.st_size, after.st_mtime_ns) != signature:
        return None  # written to while it was read
    return content


def move(folder_fd: int, name: str, signature: Signature, to_fd: int) -> None:
    """Move ``name`` into the folder ``to_fd`` (over a file of that name there), unless it is gone or is no
    longer the file of ``signature`` (then it is left to be taken as a new file)."""
    try:
        info = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode) or (info.st_size, info.st_mtime_ns) != signature:
        return
    try:
        os.replace(name, name, src_dir_fd=folder_fd, dst_dir_fd=to_fd)
    except FileNotFoundError:
        return
    except OSError as exc:  # a folder in the way, a share that refuses it
        raise Refused(f"{shown_name(name)} could not be moved: {exc.strerror}.") from None


def write_whole(dir_fd: int, name: str, content: bytes) -> None:
    """Write ``name`` in the folder ``dir_fd`` so that a reader sees the old file or the whole new one."""
    while True:
        part = f".{secrets.token_hex(8)}{PART_SUFFIX}"
        try:
            fd = os.open(part, PART_FLAGS, 0o666, dir_fd=dir_fd)
            break
        except FileExistsError:
            continue  # a name taken (planted): another
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(content)
        try:
            os.replace(part, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except OSError as exc:  # a folder in the way
            raise Refused(f"{shown_name(name)} could not be written: {exc.strerror}.") from None
    except BaseException:
        with suppress(OSError):
            os.unlink(part, dir_fd=dir_fd)
        raise


def parts_remove(dir_fd: int) -> None:
    """Remove the part files a watcher killed while writing left."""
    for name in os.listdir(dir_fd):
        if name.startswith(".") and name.endswith(PART_SUFFIX):
            with suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
