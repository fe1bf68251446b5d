"""The SHA-256 of a run's log files, which the history identifies a run by, worked out ahead on a
thread while the summary is made: reading and hashing a 100 MB log costs the reader's main thread
~0.07 s, and both let go of the GIL, so a second core does it beside the summary for nothing.

`digest_ahead(files)` starts the work; `content_digest(file)` takes its answer, or hashes the file
itself where none was started or the file changed since (its stat no longer the one it started from)."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from inspector.core.readers.safe_files import check_regular, open_regular

# Big parts: the thread takes the GIL back after each read and each hash, and where the main thread
# is busy it waits up to the switch interval to get it.
PART_BYTES = 8 << 20

_ahead: dict[tuple, _Digest] = {}
_ahead_lock = threading.Lock()


class _Digest:
    """One file's digest being worked out on a thread of its own."""

    def __init__(self, file: Path):
        self.value: str | OSError | None = None
        self._thread = threading.Thread(target=self._work, args=(file,), name="content digest", daemon=True)
        self._thread.start()

    def _work(self, file: Path) -> None:
        try:
            self.value = _hashed(file)
        except OSError as error:
            self.value = error

    def result(self) -> str:
        self._thread.join()
        if isinstance(self.value, OSError):
            raise self.value
        return self.value


def digest_ahead(files: list[Path]) -> None:
    """Start hashing each of `files` on a thread of its own (at most once per version of a file)."""
    for file in files:
        try:
            key = _version(file)
        except OSError:
            continue  # said when the digest is asked for
        with _ahead_lock:
            if key not in _ahead:
                _ahead[key] = _Digest(file)


def content_digest(file: Path) -> str:
    """The SHA-256 of a log's bytes (a regular file only: a FIFO named like a log is refused)."""
    with _ahead_lock:
        started = _ahead.pop(_version(file), None)
    if started is not None:
        return started.result()
    return _hashed(file)


def _version(file: Path) -> tuple:
    """What tells one version of a file from another: where it lies, its inode, size and time."""
    info = check_regular(file)
    return os.fspath(file), info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


def _hashed(file: Path) -> str:
    digest = hashlib.sha256()
    part = bytearray(PART_BYTES)
    view = memoryview(part)
    with open_regular(file) as handle:
        while size := handle.readinto(part):
            digest.update(view[:size])
    return digest.hexdigest()
