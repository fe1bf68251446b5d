"""The one way readers open files they did not choose themselves: regular files only (a FIFO, device or
socket named like a log would hang or never end), links followed only when they stay inside the folder
the user opened, reads capped in size, and JSON decoded with a bounded nesting depth.

Every refusal is an `UnsafeFile`, an `OSError`, so a reader's existing "could not read" handling counts
it like any unreadable file instead of failing."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

from inspector.core.readers import json_codec

MAX_JSON_BYTES = 64 << 20  # manifest, results, profile summaries, structured graphs
MAX_TEXT_BYTES = 64 << 20  # debug-folder texts (IR dumps, output code)
MAX_SOURCE_BYTES = 4 << 20  # a script shown in the Source view
READ_PART_BYTES = 1 << 20


class UnsafeFile(OSError):
    """A path a reader refuses to open: not a regular file, a link leading out of the opened folder,
    or larger than the reader's cap."""


def is_inside(path: str | os.PathLike, root: str | os.PathLike) -> bool:
    """Whether `path`, with every link resolved, lies in `root` (also resolved)."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def check_regular(path: str | os.PathLike, root: str | os.PathLike | None = None) -> os.stat_result:
    """The stat of `path` if a reader may open it; raises `UnsafeFile` (or the OSError of a missing
    file) otherwise. `stat` never blocks, even on a FIFO, so this is safe to call on anything."""
    if "\0" in os.fspath(path):
        raise UnsafeFile(f"{os.fspath(path)!r}: a name with a NUL byte (not read)")
    if root is not None and not is_inside(path, root):
        raise UnsafeFile(f"{path}: a link to a file outside the opened folder (not read)")
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeFile(f"{path}: not a regular file (a FIFO, device or socket; not read)")
    return info


def is_readable_file(path: str | os.PathLike, root: str | os.PathLike | None = None) -> bool:
    try:
        check_regular(path, root)
    except OSError:
        return False
    return True


def open_regular(path: str | os.PathLike, root: str | os.PathLike | None = None) -> BinaryIO:
    """A binary handle on `path`, refused unless it is a regular file (inside `root` when given).
    Opened non-blocking so a FIFO swapped in after the check cannot hang the open, and checked again
    on the open descriptor."""
    check_regular(path, root)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
    descriptor = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise UnsafeFile(f"{path}: not a regular file (not read)")
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


def read_bytes(path: str | os.PathLike, limit: int, root: str | os.PathLike | None = None) -> bytes:
    """The whole of a regular file of at most `limit` bytes; a larger one raises `UnsafeFile`."""
    with open_regular(path, root) as handle:
        # As much as the file holds (and one byte more, to see it grew past `limit`), never `limit` at
        # once: a read of n bytes allocates them all first (64 MiB for a 250 KB file). A file that grew
        # since it was measured is read on, in parts, to `limit`.
        asked = min(os.fstat(handle.fileno()).st_size, limit) + 1
        data = handle.read(asked)
        if len(data) == asked <= limit:  # rare: a file still being written
            parts, total = [data], len(data)
            while total <= limit and (part := handle.read(min(READ_PART_BYTES, limit + 1 - total))):
                parts.append(part)
                total += len(part)
            data = b"".join(parts)
    if len(data) > limit:
        raise UnsafeFile(f"{path}: larger than {limit >> 20} MiB (not read)")
    return data


def read_text(path: str | os.PathLike, limit: int = MAX_TEXT_BYTES, root: str | os.PathLike | None = None) -> str:
    return read_bytes(path, limit, root).decode("utf-8", errors="replace")


def read_json(path: str | os.PathLike, limit: int = MAX_JSON_BYTES, root: str | os.PathLike | None = None) -> Any:
    """A JSON file read through `read_text`; OSError when it may not be read, ValueError when it is
    not JSON."""
    return json_codec.loads(read_text(path, limit, root))



SOURCE_SUFFIXES = (".py", ".pyi")
_SYSTEM_TREES = ("/proc", "/sys", "/dev")


def read_source(file: str, folder: Path | None) -> tuple[str | None, str | None]:
    """The text of a source file a session names (its script, a frame of a break), for the Source
    view, or None and why it is not shown. A session may come from anyone, so only a regular file is
    read, of at most MAX_SOURCE_BYTES, and only when it lies inside the session's `folder` or is a
    Python file outside the system's pseudo-file trees."""
    if not file:
        return None, None
    if "\0" in file:
        return None, f"{file!r}\n\nNot shown: a name with a NUL byte."
    path = Path(file)
    if not path.is_absolute():
        if folder is None:
            return None, f"{file}\n\nNot shown: a relative path outside a session folder."
        path = folder / path
    real = os.path.realpath(path)
    inside = folder is not None and is_inside(real, folder)
    if not inside and (real.startswith(tuple(tree + os.sep for tree in _SYSTEM_TREES))
                       or Path(real).suffix not in SOURCE_SUFFIXES):
        return None, (f"{file}\n\nNot shown: the session names this file, but it is neither inside the session "
                      "folder nor a Python source file.")
    try:
        return read_text(real, MAX_SOURCE_BYTES), None
    except FileNotFoundError:
        return None, (f"{file}\n\nThis file is not on this machine: the session was captured elsewhere. "
                      "Its breaks and recompiles are listed under Problems.")
    except OSError as error:
        return None, f"{file}\n\nNot shown: {error.strerror or error}"
