"""The files GPU users already have, possibly gzipped: how to recognise one from its first bytes
(tritonparse traces and profiler traces). A JSON-lines one is read by `capped_lines`."""

from __future__ import annotations

from pathlib import Path

from inspector.core.readers.inflated import inflated_start
from inspector.core.readers.safe_files import open_regular

HEAD_BYTES = 64 << 10
# What the registry says of these kinds, which are no torch.compile Session, when asked for one.
GPU_FILES_ELSEWHERE = "`compile-inspector summary` reads it (text or --json), and the app opens it in the GPU tab"


def head(path: Path) -> bytes:
    """The first (inflated) bytes of `path`; b"" when it cannot be read. Gzip is known by its first
    bytes, as the readers know it, and a damaged one still shows its start (`inflated_start`), so a
    damaged trace is recognised, then read and named as damaged, not left out of a folder unsaid."""
    try:
        with open_regular(path) as handle:
            return inflated_start(handle.read(HEAD_BYTES), HEAD_BYTES)
    except (OSError, ValueError):
        return b""

