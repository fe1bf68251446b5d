"""Every file the app writes (a report, JUnit, SARIF, a bundle, a cache entry) goes through here, so that a
full disk, a bad path or a slip of the keyboard never costs the user a file:

- the data goes to a temporary file beside the target, is flushed to disk, then renamed over the
  target in one step: a reader (or a CI step after a crash) sees the old file or the new one, never half
  of one, and the temporary file is removed when anything fails;
- a target that is one of the inputs, or lies inside an input folder (the session being read), is
  refused: `report LOG -o LOG` must not replace the log with HTML;
- text is written as UTF-8 with anything that cannot be encoded (a lone surrogate from a log's JSON, a
  file name's undecodable byte) shown as a backslash escape instead of failing the write.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from contextlib import contextmanager
from pathlib import Path


class OutputRefused(ValueError):
    """The output path cannot or must not be written; the message says why, in one line."""


def checked_target(target: str | os.PathLike, inputs: Iterable[str | os.PathLike] = ()) -> Path:
    """`target` as a path that may be written, or OutputRefused with the reason."""
    if not os.fspath(target).strip():
        raise OutputRefused("no output file given (the path is empty)")
    path = Path(os.path.expanduser(target))
    if path.is_dir():
        raise OutputRefused(f"{path} is a folder; give a file name")
    if not path.parent.is_dir():
        raise OutputRefused(f"cannot write {path}: the folder {path.parent} does not exist")
    resolved = path.resolve()
    for given in inputs:
        source = Path(given).resolve()
        if resolved == source or (source.is_dir() and resolved.is_relative_to(source)):
            raise OutputRefused(f"refusing to write {path}: it is {'inside ' if resolved != source else ''}"
                                f"the input {given}")
    return path


@contextmanager
def replacing(target: str | os.PathLike, inputs: Iterable[str | os.PathLike] = ()):
    """Yield a temporary path beside `target` to write; on success it replaces `target` atomically
    (after an fsync), on any failure it is removed and the old `target` is left as it was."""
    path = checked_target(target, inputs)
    descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:80]}.", suffix=".part")
    os.close(descriptor)
    try:
        yield Path(temporary)
        with open(temporary, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    finally:
        if os.path.lexists(temporary):
            os.unlink(temporary)


def write_with(target: str | os.PathLike, write: Callable[[Path], object],
               inputs: Iterable[str | os.PathLike] = ()) -> Path:
    """Let `write` fill a temporary file, then put it in place of `target` (see `replacing`);
    returns the path written."""
    with replacing(target, inputs) as temporary:
        write(temporary)
    return Path(os.path.expanduser(target))


def write_text(target: str | os.PathLike, text: str, inputs: Iterable[str | os.PathLike] = ()) -> Path:
    """`write_with` for text, encoded as UTF-8 with what cannot be encoded shown as an escape."""
    return write_with(target, lambda temporary: temporary.write_bytes(text.encode("utf-8", "backslashreplace")),
                      inputs)
