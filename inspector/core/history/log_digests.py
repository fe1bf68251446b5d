"""The SHA-256 of a run's log files: what makes two opens of one run one run in the history.

Hashing a big log is a sizeable share of `summary`, and it needs nothing but the file, so the command
line starts it before it has read the log, on a thread (`digest_ahead`): hashlib and the file reads
let go of the GIL while they work, so it runs on the second core while the command imports and
reads on the first. The history then takes that digest (`content_digest`) if the file is still the
one that was hashed (same device, inode, size, modification and change times), else it hashes the
file as it is then. The parts are large because the thread takes the GIL back after each one, and
each time may have to wait for the main thread to give it up.

Of the project this imports only the safe opening of files, so the command line can start a digest
before its own imports."""

from __future__ import annotations

import hashlib
import os
import threading

from inspector.core.readers.safe_files import check_regular, open_regular

DIGEST_PART_BYTES = 8 << 20


class _Ahead:
    """One file's digest being worked out on a thread: the file as it was opened, and the digest (None
    until done, and where the read failed or was stopped: the history then hashes the file itself)."""

    def __init__(self, handle):
        self.key = _key(os.fstat(handle.fileno()))
        self.digest: str | None = None
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._hash, args=(handle,), name="log digest", daemon=True)

    def _hash(self, handle) -> None:
        try:
            with handle:
                self.digest = _hashed(handle, self.stopped)
        except Exception:  # noqa: BLE001 - a failed read, no memory for the buffer: hashed later, as before
            self.digest = None


_ahead: dict[tuple, _Ahead] = {}  # by the key of the file each was started on


def digest_ahead(path: str | os.PathLike) -> None:
    """Start working out the digest of the regular file at `path` on a thread; nothing for anything else
    (a folder, a FIFO, a file that cannot be opened), or where no thread can be started (a process at
    its limit of threads): the history then hashes the file when it records the run, as before. One
    file at a time: a digest still being worked out is stopped first."""
    stop_digests()
    try:
        handle = open_regular(path)
    except (OSError, ValueError):
        return
    try:
        ahead = _Ahead(handle)
        ahead.thread.start()
    except (OSError, RuntimeError):
        handle.close()
        return
    _ahead[ahead.key] = ahead


def wait_for_digests() -> None:
    """Return once every digest started ahead is worked out: before this process forks (a copy must
    start with one thread)."""
    for ahead in list(_ahead.values()):
        ahead.thread.join()


def stop_digests() -> None:
    """Stop the digests started ahead and forget them, once the command that started them is done
    with them (one that ended early, or read a file the history does not hash, leaves no thread
    behind in a process that goes on, as the tests' in-process runs do)."""
    for ahead in _ahead.values():
        ahead.stopped.set()
    wait_for_digests()
    _ahead.clear()


def content_digest(file: str | os.PathLike) -> str:
    """The SHA-256 of a log's bytes (a regular file only: a FIFO named like a log is refused): the one
    worked out ahead while the file is the one that was hashed, else worked out now."""
    ahead = _ahead.pop(_key(check_regular(file)), None)
    if ahead is not None:
        ahead.thread.join()
        if ahead.digest is not None:
            return ahead.digest
    with open_regular(file) as handle:
        return _hashed(handle)


def _hashed(handle, stopped: threading.Event | None = None) -> str | None:
    """The digest of what `handle` holds, read into one buffer (a new one for each part would cost a
    fresh mapping of its pages, each part); None once `stopped` is set."""
    digest, buffer = hashlib.sha256(), memoryview(bytearray(DIGEST_PART_BYTES))
    while size := handle.readinto(buffer):
        if stopped is not None and stopped.is_set():
            return None
        digest.update(buffer[:size])
    return digest.hexdigest()


def _key(info: os.stat_result) -> tuple:
    """What tells the file hashed from a file changed since: its change time too, which every write and
    every setting of the modification time moves and nothing sets back."""
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns
