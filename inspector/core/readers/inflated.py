"""The bytes of a file from a stranger, plain or gzipped, a bounded part at a time: the one place the
readers of JSON-lines (tritonparse) and JSON (torch.profiler) traces inflate gzip, so a gzip bomb is
never inflated whole, several gzip members (as `cat a.gz b.gz` makes) are all read, zero padding at
the end is no damage, and a stream cut off, damaged part-way, or followed by bytes that are no gzip
member is counted as its own problem, naming the file. Caps on what is kept are the readers' own."""

from __future__ import annotations

import os
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers.safe_files import READ_PART_BYTES

GZIP_MAGIC = b"\x1f\x8b"
# How much of a file's start is inflated at a time when it is recognised by its start (the step its
# damage is in is gone over again a byte at a time).
START_STEP = 4 << 10


class ReadCancelled(Exception):
    """What a reader's `progress` raises to stop it between parts (the app is closing)."""


def inflated_parts(handle, path: Path, problems: ReadProblems, progress: Callable[[int, int], None] | None = None,
                   cut: list[str] | None = None) -> Iterator[bytes]:
    """The file's bytes, inflated when they start as gzip, READ_PART_BYTES at most at a time.
    `progress(bytes read, file size)` is called before each part (per part inflated: a small gzip can
    inflate for long); what it raises (ReadCancelled) ends the read. `cut` gets the problem's category
    when the bytes stop before the file's end, so a reader knows its last line or value is no whole one."""
    size = os.fstat(handle.fileno()).st_size
    first = handle.read(READ_PART_BYTES)
    if first[:2] != GZIP_MAGIC:
        part = first
        while part:
            if progress is not None:
                progress(handle.tell(), size)
            yield part
            part = handle.read(READ_PART_BYTES)
        return
    yield from _gunzipped(handle, path, problems, first, size, progress, cut if cut is not None else [])


def inflated_start(data: bytes, limit: int) -> bytes:
    """The first `limit` bytes that `data` (a file's first bytes) holds, inflated when it starts as
    gzip, member after member: how a file is recognised by its start. A stream cut short or damaged
    part-way (a flipped byte, a wrong checksum at its end) gives what came before the damage, so the
    file is recognised, then read and counted as damaged rather than passed over."""
    if data[:2] != GZIP_MAGIC:
        return data[:limit]
    parts, size, at, view = [], 0, 0, memoryview(data)
    inflater = zlib.decompressobj(wbits=31)
    while at < len(data) and size < limit:
        step, before = view[at:at + START_STEP], inflater.copy()
        try:
            part = inflater.decompress(step, limit - size)
        except zlib.error:
            parts.append(_up_to_damage(before, step, limit - size))
            break
        parts.append(part)
        size += len(part)
        if not inflater.eof:
            at += len(step) - len(inflater.unconsumed_tail)
            continue
        at += len(step) - len(inflater.unused_data)
        if data[at:at + 2] != GZIP_MAGIC:  # the end, zero padding, or bytes that are no gzip
            break
        inflater = zlib.decompressobj(wbits=31)
    return b"".join(parts)


def _up_to_damage(inflater, step: memoryview, room: int) -> bytes:
    """What `step` inflates to before the byte that makes zlib fail (fed one byte at a time)."""
    parts, size = [], 0
    for at in range(len(step)):
        if size >= room:  # (a max_length of 0 would mean no limit)
            break
        try:
            part = inflater.decompress(step[at:at + 1], room - size)
        except zlib.error:
            break
        parts.append(part)
        size += len(part)
    return b"".join(parts)


def _gunzipped(handle, path: Path, problems: ReadProblems, pending: bytes, size: int,
               progress: Callable[[int, int], None] | None, cut: list[str]) -> Iterator[bytes]:
    inflater = zlib.decompressobj(wbits=31)
    while True:
        if not pending:
            pending = handle.read(READ_PART_BYTES)
            if not pending:
                problems.add("truncated", f"{path.name}: its gzip stream ends part-way (the file was cut off)")
                cut.append("truncated")
                return
        try:
            out = inflater.decompress(pending, READ_PART_BYTES)
        except zlib.error as error:
            problems.add("damaged_gzip", f"{path.name}: {error}")
            cut.append("damaged_gzip")
            return
        pending = inflater.unconsumed_tail
        if out:
            if progress is not None:
                progress(handle.tell(), size)
            yield out
        if not inflater.eof:
            continue
        pending = inflater.unused_data or handle.read(READ_PART_BYTES)
        if len(pending) == 1:  # a member ended one byte before a part's end: the next magic is split
            pending += handle.read(1)
        if not pending:
            return
        if pending.startswith(GZIP_MAGIC):
            inflater = zlib.decompressobj(wbits=31)
            continue
        if not _only_padding(pending, handle):
            left = len(pending) + max(0, size - handle.tell())
            problems.add("trailing_garbage", f"{path.name}: about {left:,} bytes after the end of its gzip stream "
                                             "(not read)")
        return


def _only_padding(last: bytes, handle) -> bool:
    """Whether `last` ends the file and is all zero bytes (padding some writers leave; at most a part)."""
    return not last.strip(b"\0") and not handle.read(1)
