"""The TORCH_TRACE line scanner: cuts a log's bytes into records (a glog prefix and one JSON envelope
on a line, then the payload's tab-prefixed lines), parses each envelope into a TraceRecord, checks or
hands over its payload's md5, and interns the log's string table. Damage is counted, never raised."""

from __future__ import annotations

import hashlib
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from inspector.core.model.compile_id import CompileId
from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers import json_codec
from inspector.core.readers.payload_digest import payload_digest
from inspector.core.readers.trace_records import EventRows, TraceRecord, count_damage, settle

if TYPE_CHECKING:
    from inspector.core.readers.digest_helper import DigestHelper

# Record kinds whose envelope carries bulk (whole configs as JSON strings, long stacks) that the
# index leaves on disk; `TraceLog.full_meta` reads it back when a view wants it.
SLIM_KINDS = frozenset({"compilation_metrics", "bwd_compilation_metrics", "compilation_metrics_runtime",
                        "aot_autograd_backward_compilation_metrics", "create_symbol", "create_unbacked_symbol",
                        "guard_added", "guard_added_fast", "expression_created", "symbolic_shape_specialization",
                        "propagate_real_tensors", "describe_storage", "describe_tensor", "describe_source"})
SLIM_STRING_CHARS = 1024
SLIM_LIST_ITEMS = 32
GLOG_PREFIX = re.compile(r"^([VIWEC])(\d{4}) (\d{2}:\d{2}:\d{2}\.\d+)\s+(\d+) ([^\]]*)\] ")
_PREFIX_BYTES = re.compile(GLOG_PREFIX.pattern.encode())
_LIMIT_SETTING = re.compile(r'"(recompile_limit|cache_size_limit)": (\d+)')
_PAYLOAD_END = re.compile(rb"\n(?!\t)")
# Envelope keys that say where a record comes from rather than what it is.
CONTEXT_KEYS = frozenset({"frame_id", "frame_compile_id", "attempt", "rank", "compiled_autograd_id",
                          "subgraph_name", "has_payload", "stack", "payload_filename"})



# Small enough that a chunk and its leftover stay in the CPU's cache: a larger one reads no faster and
# holds more (docs/benchmarks.md, "Hold less")
CHUNK_BYTES = 2 << 20
# A line longer than this is no line torch writes — the largest real envelopes (a record's JSON head)
# are a few hundred KiB, a payload's lines shorter still — and is skipped unread: a hostile log with a
# line of hundreds of MB without a newline costs one pass over it, not memory for all of it. Inside a
# payload, the record keeps the lines before it (and fails its md5); the lines after it are orphans.
MAX_ENVELOPE_BYTES = 16 << 20



def last_record_end(block: bytes, limit: int) -> int:
    """Where the last record that ends within `block[:limit]` ends: before the last envelope line
    that starts there (a payload's lines start with a tab); `limit` when no line ends there."""
    end = block.rfind(b"\n", 0, limit)
    while end >= 0 and block[end + 1:end + 2] == b"\t":
        end = block.rfind(b"\n", 0, end)
    return end + 1 if end >= 0 else limit


def read_records(read: Callable[[int], bytes], scanner: Scanner, sink, helper: DigestHelper | None,
                  progress: Callable[[int], None] | None) -> tuple[bytes, int]:
    """Feed the log to `scanner` chunk by chunk; (what is left unconsumed at the end, its offset)."""
    buffer, base, want = b"", 0, CHUNK_BYTES
    while True:
        block = read(want)
        at_eof = not block
        buffer = buffer + block if buffer else block
        consumed = scanner.feed(buffer, base, at_eof)
        if at_eof:
            break
        buffer, base = buffer[consumed:], base + consumed
        # A record longer than a chunk waits for more; reading as much again as is pending keeps
        # the rescans of a big payload linear in its size.
        want = max(CHUNK_BYTES, len(buffer))
        line_start = buffer.rfind(b"\n") + 1  # the line still being read
        if len(buffer) - line_start > MAX_ENVELOPE_BYTES:
            if line_start:  # it is a line of a payload: the record ends before it, its md5 then fails
                scanner.feed(buffer[:line_start], base, True)
            skipped, buffer = _skip_line(read, len(buffer) - line_start)
            sink.add("overlong_line", f"line {scanner.line_no}: {skipped} bytes without a line break")
            scanner.line_no += 1
            base += line_start + skipped
            want = CHUNK_BYTES
        if helper is not None:
            helper.send()
        if progress is not None:
            progress(base)
    return buffer, base


def _skip_line(read: Callable[[int], bytes], pending: int) -> tuple[int, bytes]:
    """Read past the end of a line whose first `pending` bytes are read already, keeping none of it:
    (bytes skipped, newline included; what follows the line in the last block read)."""
    skipped = pending
    while block := read(CHUNK_BYTES):
        end = block.find(b"\n")
        if end >= 0:
            return skipped + end + 1, block[end + 1:]
        skipped += len(block)
    return skipped, b""


class Scanner:
    """Cuts a byte stream into records: an envelope line plus the tab-prefixed lines after it."""

    def __init__(self, records: list[TraceRecord], strings: dict[int, str], problems: ReadProblems,
                 verify_md5: bool, file_rank: int | None, helper: DigestHelper | None = None,
                 skip_kinds: frozenset[str] = frozenset()):
        self.records, self.strings, self.problems = records, strings, problems
        self.events = EventRows()
        self.verify_md5, self.file_rank, self.helper = verify_md5, file_rank, helper
        self.skip_kinds = skip_kinds
        self.line_no = 1

    def feed(self, data: bytes, base: int, at_eof: bool) -> int:
        """Read every complete record in `data` (which starts at file offset `base`); return the
        number of bytes consumed. A record cut by the chunk's end waits for the next chunk."""
        size = len(data)
        pos = 0
        self.view = memoryview(data)  # envelope lines are sliced from it without copies
        while pos < size:
            eol = data.find(b"\n", pos)
            if eol == -1 or (eol == size - 1 and not at_eof):
                if not at_eof:
                    return pos
                eol = size if eol == -1 else eol
            tab_start = eol + 1 if data.startswith(b"\t", eol + 1) else -1
            if data.startswith(b"\t", pos):
                tab_start, eol = pos, pos - 1
            tab_end = -1
            if tab_start >= 0:
                match = _PAYLOAD_END.search(data, tab_start)
                if match is None or (match.start() == size - 1 and not at_eof):
                    if not at_eof:
                        return pos
                    tab_end = size
                else:
                    tab_end = match.start()
            self._record(data, base, pos, eol, tab_start, tab_end, at_eof)
            pos = (tab_end if tab_end >= 0 else eol) + 1
        return size

    def _record(self, data: bytes, base: int, pos: int, eol: int, tab_start: int, tab_end: int,
                at_eof: bool) -> None:
        line_no = self.line_no
        self.line_no += 1 if eol >= pos else 0
        if tab_start >= 0:
            self.line_no += data.count(b"\n", tab_start, tab_end) + 1
        record = None
        if eol >= pos:
            last_line = at_eof and eol >= len(data) - 1 and tab_start < 0
            record = parse_envelope(self.view[pos:eol], line_no, last_line, self.problems, self.file_rank)
            if record is not None:
                record.line_start, record.line_end = base + pos, base + eol
        if record is None or record.payload_md5 is None:
            if tab_start >= 0:
                self.problems.add("orphan_payload", f"line {line_no + 1 if eol >= pos else line_no}")
        elif tab_start >= 0 and record.meta is NO_META and record.kind == "chromium_event" \
                and record.kind not in self.skip_kinds:
            self._event(data, base, record, tab_start, tab_end, at_eof)
            return
        elif tab_start >= 0:
            record.payload_start, record.payload_end = base + tab_start, base + tab_end
            cut_short = _cut_short(data, tab_end, at_eof)
            if self.helper is not None:
                self.helper.check(record, data, tab_start, tab_end, cut_short)
            elif self.verify_md5:
                settle(record, payload_digest(data[tab_start:tab_end]))
            if record.payload_intact is False:
                count_damage(self.problems, cut_short, line_no, record.name)
        elif record.payload_md5 != _EMPTY_MD5:
            record.payload_intact = False
            at_end = at_eof and eol >= len(data) - 1
            self.problems.add("truncated" if at_end else "md5_mismatch",
                              f"line {line_no} ({record.name}): payload missing")
        if record is None:
            return
        if record.kind == "str":
            _intern(record, self.strings, self.problems)
        elif record.kind not in self.skip_kinds:
            self.records.append(record)

    def _event(self, data: bytes, base: int, record: TraceRecord, tab_start: int, tab_end: int,
               at_eof: bool) -> None:
        """A chromium event: a row of `events`, its payload checked here (never by the helper: a few
        hundred bytes cost less to hash than to hand over)."""
        events = self.events
        state, md5 = events.UNCHECKED, record.payload_md5
        if self.verify_md5:
            state, md5 = events.WHOLE, None
            if payload_digest(data[tab_start:tab_end]) != record.payload_md5:
                state = events.DAMAGED
                count_damage(self.problems, _cut_short(data, tab_end, at_eof), record.line_no, record.name)
        events.add(record.line_no, base + tab_start, base + tab_end, state, record.compile_id, md5)


def _cut_short(data: bytes, payload_end: int, at_eof: bool) -> bool:
    """Whether a payload ending at `payload_end` of the last block is the one the log's end cut off."""
    return at_eof and payload_end >= len(data) and not data.endswith(b"\n")


_EMPTY_MD5 = hashlib.md5(b"").hexdigest()
# The meta of every record whose kind holds nothing (every chromium_event: a third or more of a log's
# records): one dict, never written to, instead of one each.
NO_META: dict = {}


def parse_envelope(raw_line: bytes | memoryview, line_no: int, at_eof: bool, problems: ReadProblems,
                    file_rank: int | None) -> TraceRecord | None:
    envelope = _decode_fast(raw_line)
    if envelope is None:
        raw_line = bytes(raw_line)
        if not raw_line.strip():
            return None
        envelope = _decode_checked(raw_line, line_no, at_eof, problems)
        if envelope is None:
            return None
    kind = None
    for key in envelope:
        if key not in CONTEXT_KEYS:
            kind = key
            break
    if kind is None:
        problems.add("bad_record", f"line {line_no}: no record kind")
        return None
    meta = envelope[kind]
    if not isinstance(meta, dict):
        meta = {"value": meta}
    elif not meta:
        meta = NO_META
    elif kind in SLIM_KINDS:
        meta = {**{key: value for key, value in meta.items() if is_small_value(value)}, **_recompile_limits(meta)}
    kind = sys.intern(kind)  # tens of thousands of records share a handful of kinds and names
    name = kind
    if kind == "artifact":
        name = sys.intern(str(meta.get("name", "artifact")))
    rank = envelope.get("rank")
    md5 = envelope.get("has_payload")
    # Positional: this runs once per record, tens of thousands of times per log.
    return TraceRecord(kind, name, meta, _compile_id(envelope), rank if isinstance(rank, int) else file_rank,
                       line_no, -1, -1, -1, -1, md5 if isinstance(md5, str) else None)


_COMPILE_IDS: dict[tuple, CompileId] = {}
_INT_OR_NONE = (int, type(None))


def _compile_id(envelope: dict) -> CompileId | None:
    """`CompileId.from_envelope`, with one shared object per distinct id (a log holds thousands of
    records of each compilation)."""
    frame, compile_ = envelope.get("frame_id"), envelope.get("frame_compile_id")
    attempt, autograd = envelope.get("attempt"), envelope.get("compiled_autograd_id")
    if not (type(frame) is int and type(compile_) is int and type(attempt) in _INT_OR_NONE
            and type(autograd) in _INT_OR_NONE):  # odd ids (bools, floats) keep the model's reading
        return CompileId.from_envelope(envelope)
    key = (frame, compile_, attempt, autograd)
    compile_id = _COMPILE_IDS.get(key)
    if compile_id is None:
        compile_id = CompileId.from_envelope(envelope)
        if len(_COMPILE_IDS) < 100_000:
            _COMPILE_IDS[key] = compile_id
    return compile_id


def _decode_fast(raw_line: bytes | memoryview) -> dict | None:
    """The envelope of a well-formed line, decoded straight from bytes (None for anything unusual,
    which `_decode_checked` then reads and reports)."""
    prefix = _PREFIX_BYTES.match(raw_line)
    if prefix is None:
        return None
    try:
        envelope = json_codec.loads(raw_line[prefix.end():])
        prefix.group(5).decode("utf-8")  # a non-UTF-8 file name is reported by the checked path
    except ValueError:
        return None
    return envelope if isinstance(envelope, dict) else None


def _decode_checked(raw_line: bytes, line_no: int, at_eof: bool, problems: ReadProblems) -> dict | None:
    """The slow path: decode as text (replacing bad bytes), saying what is wrong with the line."""
    try:
        line = raw_line.decode("utf-8")
    except UnicodeDecodeError:
        problems.add("non_utf8", f"line {line_no}")
        line = raw_line.decode("utf-8", errors="replace")
    prefix = GLOG_PREFIX.match(line)
    if not prefix:
        problems.add("truncated" if at_eof else "bad_prefix", f"line {line_no}: {line[:80]!r}")
        return None
    try:
        envelope = json_codec.loads(line[prefix.end():])
    except ValueError:
        problems.add("truncated" if at_eof else "bad_json", f"line {line_no}")
        return None
    if not isinstance(envelope, dict):
        problems.add("bad_json", f"line {line_no}: not an object")
        return None
    return envelope


_SCALARS = (int, float, bool, type(None))


def _recompile_limits(meta: dict) -> dict:
    """The recompile limit settings from the bulky ``dynamo_config`` string the index drops."""
    config = meta.get("dynamo_config")
    if not isinstance(config, str):
        return {}
    return {match[1]: int(match[2]) for match in _LIMIT_SETTING.finditer(config)}


def is_small_value(value) -> bool:
    """Scalars, short strings and short lists of them: what an index keeps of a slimmed record."""
    kind = type(value)
    if kind is str:
        return len(value) <= SLIM_STRING_CHARS
    if kind is list:
        return len(value) <= SLIM_LIST_ITEMS and all(
            type(item) in _SCALARS or (type(item) is str and len(item) <= SLIM_STRING_CHARS) for item in value)
    return kind in _SCALARS or isinstance(value, (int, float))


def _intern(record: TraceRecord, strings: dict[int, str], problems: ReadProblems) -> None:
    value = record.meta.get("value")
    if isinstance(value, list) and len(value) == 2 and isinstance(value[1], int):
        strings[value[1]] = str(value[0])
    else:
        problems.add("bad_record", f"line {record.line_no}: malformed string-table entry")

