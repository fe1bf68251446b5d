"""The lines of a JSON-lines file from a stranger, plain or gzipped, read a chunk at a time under caps:
a gzip bomb stops at the cap on decompressed bytes (never inflated whole, so refusing it costs one
chunk of memory), an over-long line is skipped without being held, and a worker thread can be stopped
between chunks (`progress`, called between them, may raise: the app closing). What was cut is counted
in the reader's ReadProblems, never raised; a file cut off mid-stream, damaged part-way, or followed
by bytes that are no gzip member each count as their own problem, naming the file."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers.inflated import inflated_parts
from inspector.core.readers.safe_files import open_regular

@dataclass(frozen=True)
class LineCaps:
    decompressed_bytes: int  # of the whole file, after gunzip
    line_bytes: int  # one line longer than this is skipped unread
    lines: int  # blank ones too: a file of newlines is still work


def capped_lines(path: Path, problems: ReadProblems, caps: LineCaps,
                 progress: Callable[[int, int], None] | None = None) -> Iterator[tuple[int, bytes]]:
    """(line number, line without its newline) for each non-blank line of `path` within the caps.
    `progress(bytes read, file size)` is called between chunks; what it raises (ReadCancelled) ends the read."""
    try:
        handle = open_regular(path)
    except OSError as error:
        problems.add("unreadable_file", f"{path}: {error.strerror or error}")
        return
    with handle:
        held: list[bytes] = []  # the parts of the line under way
        held_bytes, line_no, skipping = 0, 0, False
        cut: list[str] = []  # why the bytes stopped before the file's end, if they did
        for chunk in _chunks(handle, path, problems, caps, progress, cut):
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                piece = chunk[start:] if end < 0 else chunk[start:end]
                if not skipping and held_bytes + len(piece) > caps.line_bytes:
                    skipping, held, held_bytes = True, [], 0
                    problems.add("overlong_line", f"{path.name} line {line_no + 1}: over {caps.line_bytes >> 20} MiB")
                if end < 0:
                    if not skipping:
                        held.append(piece)
                        held_bytes += len(piece)
                    break
                line_no += 1
                if not skipping and (held_bytes or piece.strip()):
                    yield line_no, b"".join(held) + piece if held else piece
                held, held_bytes, skipping = [], 0, False
                start = end + 1
                if line_no >= caps.lines:
                    problems.add("line_cap", f"{path.name}: stopped after {line_no:,} lines; the rest left unread")
                    return
        if held_bytes and not skipping and not cut:
            yield line_no + 1, b"".join(held)  # a last line without its newline, in a file that ended whole


def _chunks(handle, path: Path, problems: ReadProblems, caps: LineCaps,
            progress: Callable[[int, int], None] | None, cut: list[str]) -> Iterator[bytes]:
    """The file's (decompressed) bytes a part at a time, up to the cap; `cut` gets the problem's
    category when they stop before the end (its last line is then no line)."""
    produced = 0
    for chunk in inflated_parts(handle, path, problems, progress, cut):
        if produced + len(chunk) > caps.decompressed_bytes:
            yield chunk[:caps.decompressed_bytes - produced]
            problems.add("decompressed_cap", f"{path.name}: over {caps.decompressed_bytes >> 20} MiB "
                                             "uncompressed; the rest left unread")
            cut.append("decompressed_cap")
            return
        produced += len(chunk)
        yield chunk
