"""The index entries of a TORCH_TRACE log: a record per envelope (its payload left on disk), the
chromium events as columns, and how a payload's digest settles whether it is whole. Shared by the
scanner that makes them (trace_scanner.py), the md5 helper that checks them (digest_helper.py) and the
log that reads them back (torch_trace.py)."""

from __future__ import annotations

from array import array
from dataclasses import dataclass

from inspector.core.model.compile_id import CompileId


@dataclass(slots=True)
class TraceRecord:
    """One envelope of the log; its payload stays on disk until `TraceLog.payload` reads it. The glog
    prefix's time and pid are not kept: nothing reads them, and a big log's timestamps cost megabytes."""

    kind: str
    name: str  # artifact name for ``artifact`` records, else the kind
    meta: dict
    compile_id: CompileId | None
    rank: int | None
    line_no: int
    line_start: int = -1  # byte offsets of the envelope line, to re-read values dropped from `meta`
    line_end: int = -1
    payload_start: int = -1
    payload_end: int = -1
    payload_md5: str | None = None
    payload_intact: bool | None = None  # None until its md5 is checked; False if damaged or cut off

    @property
    def has_payload(self) -> bool:
        return self.payload_start >= 0


def settle(record: TraceRecord, digest: str) -> bool:
    """Whether `record`'s payload is whole, from its digest, kept on the record; its md5 is then let go
    (a string a record, and a log holds tens of thousands: docs/benchmarks.md, "Peak memory of a log of
    many small records")."""
    record.payload_intact = intact = digest == record.payload_md5
    record.payload_md5 = None
    return intact


def settled_whole(record: TraceRecord, digest: str) -> bool:
    """Settle `record` now if its payload is whole; a damaged one is left unsettled, for the helper's
    `finish` to count in the order the serial reader would."""
    if digest != record.payload_md5:
        return False
    settle(record, digest)
    return True


class EventRows:
    """The log's `chromium_event` records whose event is their payload (every one torch writes): half
    to three quarters of a real log's records, kept as columns rather than a TraceRecord each (a
    fraction of the memory: docs/benchmarks.md, "Every row within issue 26's memory target: event
    rows"). Compile-stage spans are made of them, read back by row; nothing else reads them.

    A row's payload is checked as it is read, on this thread (an event is a few hundred bytes), unless
    the read checks nothing; its md5 is then kept until the row is read."""

    UNCHECKED, WHOLE, DAMAGED = 0, 1, 2

    def __init__(self):
        self.line_nos = array("q")
        self.starts = array("q")  # the payload's byte range in the log
        self.ends = array("q")
        self.states = bytearray()  # UNCHECKED, WHOLE or DAMAGED
        self.compile_ids: list[CompileId | None] = []
        self.md5s: dict[int, str] = {}  # of the rows not checked yet

    def __len__(self) -> int:
        return len(self.line_nos)

    def add(self, line_no: int, start: int, end: int, state: int, compile_id: CompileId | None,
            md5: str | None = None) -> None:
        if state == self.UNCHECKED:
            self.md5s[len(self.line_nos)] = md5
        self.line_nos.append(line_no)
        self.starts.append(start)
        self.ends.append(end)
        self.states.append(state)
        self.compile_ids.append(compile_id)


def count_damage(problems, cut_short: bool, line_no: int, name: str) -> None:
    """A payload whose md5 failed: cut off by the log's end (`truncated`), or changed (`md5_mismatch`)."""
    problems.add("truncated" if cut_short else "md5_mismatch", f"line {line_no} ({name})")
