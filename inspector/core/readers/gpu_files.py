"""The files GPU users already have, possibly gzipped: how to recognise one from its first bytes
(tritonparse traces and profiler traces). A JSON-lines one is read by `capped_lines`."""

from __future__ import annotations

import zlib
from pathlib import Path

from inspector.core.readers.safe_files import open_regular

HEAD_BYTES = 64 << 10
# What the registry says of these kinds, which are no torch.compile Session, when asked for one.
GPU_FILES_ELSEWHERE = "`compile-inspector summary` reads it (text or --json), and the app opens it in the GPU tab"


def head(path: Path) -> bytes:
    """The first (decompressed) bytes of `path`; b"" when it cannot be read. A gzip cut short still
    shows its start (inflated from what is there, not failed at its missing end), so a damaged trace is
    recognised, then read and named as damaged, rather than left out of a folder without a word."""
    try:
        with open_regular(path) as handle:
            start = handle.read(HEAD_BYTES)
        if path.name.endswith(".gz"):
            return zlib.decompressobj(wbits=31).decompress(start, HEAD_BYTES)  # 31: a gzip header
        return start
    except (OSError, zlib.error, ValueError):
        return b""

