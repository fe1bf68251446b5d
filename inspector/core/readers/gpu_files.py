"""The files GPU users already have, possibly gzipped: how to recognise one from its first bytes
(tritonparse traces and profiler traces), and how to read a JSON-lines one event by event (counted,
never raising on damage, never holding the whole file)."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Iterator
from pathlib import Path

from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers import json_codec
from inspector.core.readers.safe_files import open_regular

HEAD_BYTES = 64 << 10


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


def json_lines(path: Path, problems: ReadProblems) -> Iterator[dict]:
    """Each line of `path` that is a JSON object; the others are counted (bad_json), a damaged or
    cut-off gzip stream ends the file with what was read (truncated)."""
    try:
        handle = _opened(path)
    except OSError as error:
        problems.add("unreadable_file", f"{path}: {error.strerror or error}")
        return
    with handle:
        line_no = 0
        try:
            for line in handle:
                line_no += 1
                if not line.strip():
                    continue
                try:
                    event = json_codec.loads(line)
                except (ValueError, RecursionError):
                    problems.add("bad_json", f"line {line_no}")
                    continue
                if isinstance(event, dict):
                    yield event
                else:
                    problems.add("bad_record", f"line {line_no}: not a JSON object")
        except (OSError, EOFError, zlib.error) as error:
            problems.add("truncated", f"{path.name} after line {line_no}: {error}")

