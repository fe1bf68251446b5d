"""The files GPU users already have, possibly gzipped: how to recognise one from its first bytes
(tritonparse traces and profiler traces). A JSON-lines one is read by `capped_lines`."""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from inspector.core.readers.safe_files import open_regular

HEAD_BYTES = 64 << 10
# What the registry says of these kinds, which are no torch.compile Session, when asked for one.
GPU_FILES_ELSEWHERE = "`compile-inspector summary` reads it (text or --json), and the app opens it in the GPU tab"


def _opened(path: Path):
    handle = open_regular(path)
    if path.name.endswith(".gz"):
        return gzip.GzipFile(fileobj=handle, mode="rb")
    return handle


def head(path: Path) -> bytes:
    """The first (decompressed) bytes of `path`; b"" when it cannot be read."""
    try:
        with _opened(path) as handle:
            return handle.read(HEAD_BYTES)
    except (OSError, EOFError, zlib.error, ValueError):
        return b""

