"""The SHA-256 of a run's log files: what makes two opens of one run one run in the history.

Hashing a big log is a sizeable share of `summary`, and it needs nothing but the file, so the command
line starts it before it has read the log, on a thread (`digest_ahead`): hashlib and the file reads
let go of the GIL while they work, so it runs on the second core while the command imports and
reads on the first. The history then takes that digest (`content_digest`) if the file is still the
one that was hashed — same device, inode, size and modification time — else it hashes the file as it
is then. The parts are large because the thread takes the GIL back after each part, and each time may
wait for the main thread to give it up.

This module imports nothing heavy, so the command line can start a digest before its own imports."""

from __future__ import annotations

import hashlib
import os
import threading

from inspector.core.readers.safe_files import check_regular, open_regular

DIGEST_PART_BYTES = 8 << 20


class _Ahead:
    """One file's digest being worked out on a thread: the file as it was opened, and the digest (or
    None where the read failed: the history then hashes the file itself)."""

    def __init__(self, handle):
        info = os.fstat(handle.fileno())
        self.key = _key(info)
        self.digest: str | None = None
        self.thread = threading.Thread(target=self._hash, args=(handle,), name="log digest", daemon=True)

    def _hash(self, handle) -> None:
        try:
            with handle:
                self.digest = _hashed(handle)
        except OSError:
            self.digest = None


_ahead: dict[tuple, _Ahead] = {}


def digest_ahead(path: str | os.PathLike) -> None:
    """Start working out the digest of the regular file at `path` on a thread (nothing for anything
    else: a folder, a FIFO, a file that cannot be opened)."""
    try:
        handle = open_regular(path)
    except (OSError, ValueError):
        return
    try:
        ahead = _Ahead(handle)
    except OSError:
        handle.close()
        return
    _ahead.clear()  # one log ahead at a time: a command reads one, and a test process runs many
    _ahead[ahead.key] = ahead
    ahead.thread.start()


def wait_for_digests() -> None:
    """Return once every digest started ahead is worked out: before this process forks (a copy must
    start with one thread) and before a command's own work needs both cores."""
    for ahead in list(_ahead.values()):
        ahead.thread.join()


def content_digest(file: str | os.PathLike) -> str:
    """The SHA-256 of a log's bytes (a regular file only: a FIFO named like a log is refused), the one
    worked out ahead where the file is unchanged since."""
    ahead = _ahead.pop(_key(check_regular(file)), None)
    if ahead is not None:
        ahead.thread.join()
        if ahead.digest is not None:
            return ahead.digest
    with open_regular(file) as handle:
        return _hashed(handle)


def _hashed(handle) -> str:
    """The digest of what `handle` holds, read into one buffer (a new one for each part would cost a
    fresh mapping of its pages, each part)."""
    digest, buffer = hashlib.sha256(), memoryview(bytearray(DIGEST_PART_BYTES))
    while size := handle.readinto(buffer):
        digest.update(buffer[:size])
    return digest.hexdigest()


def _key(info: os.stat_result) -> tuple:
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns

