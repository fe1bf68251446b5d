"""Reader of TORCH_TRACE structured logs (``dedicated_log_torch_trace_*.log``).

Each record is a glog prefix plus one JSON envelope on one line; an envelope with ``has_payload`` (an
md5) is followed by its payload as tab-prefixed lines. The reader indexes records and remembers where
each payload lies in the file, so opening a 100 MB log touches each byte once and keeps no payload in
memory: payloads are read back by offset when a view asks for them. Damage is counted, never raised.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from inspector.core.compile_id import CompileId
from inspector.core.read_problems import ReadProblems

_PREFIX = re.compile(r"^([VIWEC])(\d{4}) (\d{2}:\d{2}:\d{2}\.\d+)\s+(\d+) ([^\]]*)\] ")
_PAYLOAD_END = re.compile(rb"\n(?!\t)")
# Envelope keys that say where a record comes from rather than what it is.
CONTEXT_KEYS = frozenset({"frame_id", "frame_compile_id", "attempt", "rank", "compiled_autograd_id",
                          "subgraph_name", "has_payload", "stack", "payload_filename"})


@dataclass(slots=True)
class TraceRecord:
    """One envelope of the log; its payload stays on disk until `TraceLog.payload` reads it."""

    kind: str
    name: str  # artifact name for ``artifact`` records, else the kind
    meta: dict
    envelope: dict
    compile_id: CompileId | None
    rank: int | None
    timestamp: str  # ``MMDD hh:mm:ss.ffffff`` as logged (glog carries no year)
    pid: int
    line_no: int
    payload_start: int = -1
    payload_end: int = -1
    payload_md5: str | None = None
    payload_intact: bool = True  # False when the md5 did not match or the payload was cut off

    @property
    def has_payload(self) -> bool:
        return self.payload_start >= 0


class TraceLog:
    """The records of one log file, its string table and what could not be read."""

    def __init__(self, path: Path, records: list[TraceRecord], strings: dict[int, str],
                 problems: ReadProblems, rank: int | None):
        self.path = path
        self.records = records
        self.strings = strings
        self.problems = problems
        self.rank = rank

    def payload(self, record: TraceRecord) -> str:
        """The payload text of `record` with the leading tabs removed ('' when it has none)."""
        if not record.has_payload:
            return ""
        try:
            with open(self.path, "rb") as handle:
                handle.seek(record.payload_start)
                raw = handle.read(record.payload_end - record.payload_start)
        except OSError:
            return ""
        return _strip_tabs(raw).decode("utf-8", errors="replace")

    def payload_json(self, record: TraceRecord):
        """The payload decoded as JSON, or None when it is not JSON."""
        try:
            return json.loads(self.payload(record))
        except ValueError:
            return None


def _strip_tabs(raw: bytes) -> bytes:
    """Payload bytes as torch hashed them: tabs removed, lines joined by '\\n' (CRLF copies too)."""
    if b"\r" in raw:
        raw = raw.replace(b"\r\n", b"\n")
    raw = raw.rstrip(b"\r\n")
    if raw.startswith(b"\t"):
        raw = raw[1:]
    return raw.replace(b"\n\t", b"\n")


_RANK_IN_NAME = re.compile(r"_rank_(\d+)")


def rank_from_filename(path: Path) -> int | None:
    match = _RANK_IN_NAME.search(path.name)
    return int(match.group(1)) if match else None


def read_trace_log(path: str | os.PathLike, verify_md5: bool = True) -> TraceLog:
    """Index every record of the log at `path`; never raises on damaged content."""
    path = Path(path)
    problems = ReadProblems()
    records: list[TraceRecord] = []
    strings: dict[int, str] = {}
    file_rank = rank_from_filename(path)
    try:
        size = path.stat().st_size
        handle = open(path, "rb")
    except OSError as error:
        problems.add("unreadable_file", f"{path}: {error.strerror or error}")
        return TraceLog(path, records, strings, problems, file_rank)
    if size == 0:
        handle.close()
        problems.add("empty_file", str(path))
        return TraceLog(path, records, strings, problems, file_rank)
    with handle:
        data = handle.read()
    _scan(data, len(data), records, strings, problems, verify_md5, file_rank)
    return TraceLog(path, records, strings, problems, file_rank)


def _scan(data: bytes, size: int, records: list[TraceRecord], strings: dict[int, str],
          problems: ReadProblems, verify_md5: bool, file_rank: int | None) -> None:
    pos = 0
    line_no = 1
    while pos < size:
        eol = data.find(b"\n", pos)
        at_eof = eol == -1
        if at_eof:
            eol = size
        if data[pos:pos + 1] == b"\t":
            end = _payload_end(data, pos, size)
            problems.add("orphan_payload", f"line {line_no}")
            line_no += data.count(b"\n", pos, end) + 1
            pos = end + 1
            continue
        raw_line = data[pos:eol]
        record = _parse_envelope(raw_line, line_no, at_eof, problems, file_rank)
        line_no += 1
        pos = eol + 1
        if record is None:
            continue
        if record.payload_md5 is not None and pos < size and data[pos:pos + 1] == b"\t":
            end = _payload_end(data, pos, size)
            record.payload_start, record.payload_end = pos, end
            line_no += data.count(b"\n", pos, end) + 1
            if verify_md5:
                digest = hashlib.md5(_strip_tabs(data[pos:end])).hexdigest()
                if digest != record.payload_md5:
                    record.payload_intact = False
                    cut_short = end >= size and data[size - 1:size] != b"\n"
                    problems.add("truncated" if cut_short else "md5_mismatch",
                                 f"line {record.line_no} ({record.name})")
            pos = end + 1
        elif record.payload_md5 is not None and record.payload_md5 != hashlib.md5(b"").hexdigest():
            record.payload_intact = False
            problems.add("truncated", f"line {record.line_no} ({record.name}): payload missing")
        if record.kind == "str":
            _intern(record, strings, problems)
            continue
        records.append(record)


def _payload_end(data: bytes, start: int, size: int) -> int:
    """Offset of the newline that ends the run of tab-prefixed lines starting at `start`."""
    match = _PAYLOAD_END.search(data, start)
    return match.start() if match else size


def _parse_envelope(raw_line: bytes, line_no: int, at_eof: bool, problems: ReadProblems,
                    file_rank: int | None) -> TraceRecord | None:
    if not raw_line.strip():
        return None
    try:
        line = raw_line.decode("utf-8")
    except UnicodeDecodeError:
        problems.add("non_utf8", f"line {line_no}")
        line = raw_line.decode("utf-8", errors="replace")
    prefix = _PREFIX.match(line)
    if not prefix:
        problems.add("truncated" if at_eof else "bad_prefix", f"line {line_no}: {line[:80]!r}")
        return None
    try:
        envelope = json.loads(line[prefix.end():])
    except ValueError:
        problems.add("truncated" if at_eof else "bad_json", f"line {line_no}")
        return None
    if not isinstance(envelope, dict):
        problems.add("bad_json", f"line {line_no}: not an object")
        return None
    kind = next((key for key in envelope if key not in CONTEXT_KEYS), None)
    if kind is None:
        problems.add("bad_record", f"line {line_no}: no record kind")
        return None
    meta = envelope[kind]
    if not isinstance(meta, dict):
        meta = {"value": meta}
    name = kind
    if kind == "artifact":
        name = str(meta.get("name", "artifact"))
    rank = envelope.get("rank")
    md5 = envelope.get("has_payload")
    return TraceRecord(
        kind=kind, name=name, meta=meta, envelope=envelope,
        compile_id=CompileId.from_envelope(envelope),
        rank=rank if isinstance(rank, int) else file_rank,
        timestamp=f"{prefix.group(2)} {prefix.group(3)}", pid=int(prefix.group(4)),
        line_no=line_no, payload_md5=md5 if isinstance(md5, str) else None)


def _intern(record: TraceRecord, strings: dict[int, str], problems: ReadProblems) -> None:
    value = record.meta.get("value")
    if isinstance(value, list) and len(value) == 2 and isinstance(value[1], int):
        strings[value[1]] = str(value[0])
    else:
        problems.add("bad_record", f"line {record.line_no}: malformed string-table entry")


def resolve_stack(frames, strings: dict[int, str], problems: ReadProblems | None = None) -> list[dict]:
    """Stack frames with the interned file ids replaced by paths (``<unknown file N>`` if missing)."""
    resolved = []
    for frame in frames if isinstance(frames, list) else []:
        if not isinstance(frame, dict):
            continue
        filename = frame.get("filename")
        if isinstance(filename, int):
            if filename in strings:
                filename = strings[filename]
            else:
                if problems is not None:
                    problems.add("missing_string", f"file id {filename}")
                filename = f"<unknown file {filename}>"
        resolved.append({"file": str(filename), "line": frame.get("line"),
                         "function": frame.get("name"), "code": frame.get("loc")})
    return resolved
