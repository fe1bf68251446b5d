"""Reader of TORCH_TRACE structured logs (``dedicated_log_torch_trace_*.log``).

Each record is a glog prefix plus one JSON envelope on one line; an envelope with ``has_payload`` (an
md5) is followed by its payload as tab-prefixed lines. The reader indexes records and remembers where
each payload lies in the file, so opening a 100 MB log touches each byte once and keeps no payload in
memory: payloads are read back by offset when a view asks for them. Damage is counted, never raised.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
import threading
import weakref
from array import array
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from inspector.core.malloc_policy import give_back_free_memory
from inspector.core.model.compile_id import CompileId
from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers import json_codec
from inspector.core.readers.payload_digest import payload_digest
from inspector.core.readers.safe_files import open_regular

# Record kinds whose envelope carries bulk (whole configs as JSON strings, long stacks) that the
# index leaves on disk; `TraceLog.full_meta` reads it back when a view wants it.
SLIM_KINDS = frozenset({"compilation_metrics", "bwd_compilation_metrics", "compilation_metrics_runtime",
                        "aot_autograd_backward_compilation_metrics", "create_symbol", "create_unbacked_symbol",
                        "guard_added", "guard_added_fast", "expression_created", "symbolic_shape_specialization",
                        "propagate_real_tensors", "describe_storage", "describe_tensor", "describe_source"})
SLIM_STRING_CHARS = 1024
SLIM_LIST_ITEMS = 32
_PREFIX = re.compile(r"^([VIWEC])(\d{4}) (\d{2}:\d{2}:\d{2}\.\d+)\s+(\d+) ([^\]]*)\] ")
_PREFIX_BYTES = re.compile(_PREFIX.pattern.encode())
_LIMIT_SETTING = re.compile(r'"(recompile_limit|cache_size_limit)": (\d+)')
_PAYLOAD_END = re.compile(rb"\n(?!\t)")
# Envelope keys that say where a record comes from rather than what it is.
CONTEXT_KEYS = frozenset({"frame_id", "frame_compile_id", "attempt", "rank", "compiled_autograd_id",
                          "subgraph_name", "has_payload", "stack", "payload_filename"})


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
    (~80 bytes a record, and a log holds tens of thousands)."""
    record.payload_intact = intact = digest == record.payload_md5
    record.payload_md5 = None
    return intact


def _settled_whole(record: TraceRecord, digest: str) -> bool:
    """Settle `record` now if its payload is whole; a damaged one is left unsettled, for the helper's
    `finish` to count in the order the serial reader would."""
    if digest != record.payload_md5:
        return False
    settle(record, digest)
    return True


class EventRows:
    """The log's `chromium_event` records whose event is their payload (every one torch writes): half
    to three quarters of a real log's records, kept as columns rather than a TraceRecord each (~50
    bytes a record instead of ~270; on a log of many small records that is a fifth of the reader's
    memory). Compile-stage spans are made of them, read back by row; nothing else reads them.

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


class TraceLog:
    """The records of one log file, its chromium events, its string table and what could not be read."""

    def __init__(self, path: Path, records: list[TraceRecord], strings: dict[int, str],
                 problems: ReadProblems, rank: int | None, size: int = 0, ends_with_newline: bool = True,
                 events: EventRows | None = None):
        self.path = path
        self.records = records
        self.events = events if events is not None else EventRows()
        self.strings = strings
        self.problems = problems
        self.rank = rank
        self.size = size
        self.ends_with_newline = ends_with_newline
        self._handle = None
        self._lock = threading.Lock()
        self._window: tuple[int, bytes] | None = None  # (offset, bytes) read ahead: see `_read`

    def payload(self, record: TraceRecord) -> str:
        """The payload text of `record` with the leading tabs removed ('' when it has none).
        A payload not verified at load is verified now, and damage is counted then."""
        return self.payload_bytes(record).decode("utf-8", errors="replace")

    def payload_bytes(self, record: TraceRecord) -> bytes:
        """The payload of `record` as torch hashed it (tabs removed), verified on first read."""
        if not record.has_payload:
            return b""
        raw = self._read(record.payload_start, record.payload_end)
        if raw is None:
            return b""
        stripped = _strip_tabs(raw)
        if record.payload_intact is None:  # the bytes payload_digest hashes: stripped once for both
            self._check(record, hashlib.md5(stripped).hexdigest())
        return stripped

    def payload_json(self, record: TraceRecord):
        """The payload decoded as JSON, or None when it is not JSON."""
        if record.payload_intact is not None and record.has_payload:
            return _payload_json(self._read(record.payload_start, record.payload_end))
        return _payload_json(self.payload_bytes(record), stripped=True)

    def event_json(self, row: int):
        """Row `row` of `events` decoded as JSON (None when it is not), its md5 checked on first read."""
        events = self.events
        raw = self._read(events.starts[row], events.ends[row])
        if raw is None or events.states[row] != events.UNCHECKED:
            return _payload_json(raw)
        return _payload_json(self._check_event(row, raw), stripped=True)

    def _check_event(self, row: int, raw: bytes) -> bytes:
        """Settle row `row` of `events` with its payload `raw`, once (views on several threads may read
        it), counting it if damaged; its payload as torch hashed it."""
        events = self.events
        stripped = _strip_tabs(raw)
        with self._lock:
            md5 = events.md5s.pop(row, None)
            if md5 is None:  # another thread checked it meanwhile
                return stripped
            whole = hashlib.md5(stripped).hexdigest() == md5
            events.states[row] = events.WHOLE if whole else events.DAMAGED
        if not whole:
            self._count_damage(events.ends[row], events.line_nos[row], "chromium_event")
        return stripped

    def full_meta(self, record: TraceRecord) -> dict:
        """The record's whole meta, bulk included ({} if the line cannot be read back)."""
        meta = self._envelope(record).get(record.kind)
        return meta if isinstance(meta, dict) else {}

    def stack(self, record: TraceRecord) -> list[dict]:
        """The envelope's `stack` (where the user's code called in, for records made outside any
        compile), resolved; [] when it has none."""
        return resolve_stack(self._envelope(record).get("stack"), self.strings, self.problems)

    def _envelope(self, record: TraceRecord) -> dict:
        raw = self._read(record.line_start, record.line_end)
        try:
            line = raw.decode("utf-8", errors="replace")
            envelope = json_codec.loads(line[_PREFIX.match(line).end():])
            return envelope if isinstance(envelope, dict) else {}
        except (ValueError, AttributeError):
            return {}

    def _read(self, start: int, end: int) -> bytes | None:
        """Bytes [start, end) of the log through one handle kept open (views read thousands of
        payloads; opening the file for each cost more than reading them). Safe across threads.

        Reads come from a window of READ_AHEAD bytes read at once: an analysis reads a log's payloads
        in file order, so most reads are slices of it. Each read from the file lets go of the GIL and
        takes it back at once, and a thread waiting for the GIL waits again whenever that happens: the
        ~200,000 small reads of a 1,024-rank job's analysis kept the app's UI thread waiting up to
        ~200 ms at a time. A few logs keep a window (`_WINDOWS`), so memory stays a few MiB."""
        window = self._window
        if window is not None and window[0] <= start and end <= window[0] + len(window[1]):
            return window[1][start - window[0]:end - window[0]]
        with self._lock:
            try:
                if self._handle is None:
                    self._handle = open_regular(self.path)
                self._handle.seek(start)
                raw = self._handle.read(max(end - start, READ_AHEAD))
            except (OSError, ValueError) as error:
                self.problems.add("unreadable_file", f"{self.path}: {error}")
                return None
        if end - start < READ_AHEAD:
            self._window = (start, raw)
            _keep_window(self)
        return raw[:end - start]

    def close(self) -> None:
        self._window = None
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None:
            handle.close()

    def verify_payloads(self) -> None:
        """Check the md5 of every payload not checked yet (an index-only load skips it), in the log's
        order (damage is then counted as a read that checks everything counts it), until a read fails."""
        records = [record for record in self.records if record.has_payload and record.payload_intact is None]
        rows = sorted(self.events.md5s)
        unchecked = sorted([(record.line_no, record) for record in records]
                           + [(self.events.line_nos[row], row) for row in rows], key=lambda item: item[0])
        for _line, item in unchecked:
            is_row = isinstance(item, int)
            raw = self._read(self.events.starts[item], self.events.ends[item]) if is_row \
                else self._read(item.payload_start, item.payload_end)
            if raw is None:
                return
            if is_row:
                self._check_event(item, raw)
            else:
                self._check(item, payload_digest(raw))

    @property
    def checked(self) -> bool:
        """Whether every payload's md5 has been checked (so the log's damage is all counted)."""
        return not self.events.md5s and not any(record.payload_intact is None and record.has_payload
                                                for record in self.records)

    def _check(self, record: TraceRecord, digest: str) -> None:
        """Settle `record` with `digest`, once: views on several threads may read the same unchecked
        payload at the same moment, and the second must neither compare against the md5 the first let
        go nor count the damage again."""
        with self._lock:
            if record.payload_intact is not None:
                return
            intact = settle(record, digest)
        if not intact:
            self._count_damage(record.payload_end, record.line_no, record.name)

    def _count_damage(self, payload_end: int, line_no: int, name: str) -> None:
        count_damage(self.problems, payload_end >= self.size and not self.ends_with_newline, line_no, name)


# The helper's command: the script half of payload_digest.py, told the log's descriptor it inherits.
HELPER_COMMAND = [sys.executable, "-I", "-S", str(Path(__file__).with_name("payload_digest.py"))]


# Below this size the helper's start (~20 ms of the other core) buys little; set TCI_SERIAL=1 to
# read every log on one core.
HELPER_MIN_BYTES = 16 << 20
# The most work the helper may have outstanding; past it the reader checks payloads itself. The
# count also keeps its answers within what a pipe holds, so neither side ever waits on the other.
HELPER_LAG_BYTES = 8 << 20
HELPER_LAG_RANGES = 1000


class _DigestHelper:
    """The payload md5s of a big log, worked out by a child interpreter on the second core while the
    reader parses envelopes (the copy that strips the tabs holds the GIL, so a thread would not
    help). Work is shared, never waited for: what the child has not answered when the reader gets
    ahead of it, or at the end, the reader computes itself (the last ranges first, while the child
    works on the first ones), so a busy or missing second core costs next to nothing and the
    results never depend on the child."""

    def __init__(self, handle, process: subprocess.Popen):
        self.handle, self.process = handle, process
        # Problems noted in order, and where the ranges sent meanwhile go among them: a run of n ranges
        # is one int n (the md5 of nearly every payload matches; a tuple for each would be ~10 MB of a
        # 100 MB log of small records).
        self.events = _NotedProblems()
        self.sent = array("q")  # the start and end of each range given to the child, in order
        self.sent_records: list[TraceRecord] = []  # the record of each
        self.cut_short = -1  # the range of the payload the log's end cut off, if it was sent
        self.answered = 0  # how many ranges the child answered; a record whose md5 matched is settled then
        self.mismatched: dict[int, str] = {}  # its digests that did not match, by range
        self.answered_bytes = 0
        self.sent_bytes = 0
        self.unsent = b""  # range lines the pipe did not take yet
        self.partial = b""  # the start of an answer line
        self.closed = False  # the child answers no more (done, dead, or its input closed)
        self.ins, self.outs = process.stdin.fileno(), process.stdout.fileno()
        os.set_blocking(self.ins, False)
        os.set_blocking(self.outs, False)

    @classmethod
    def start(cls, handle) -> _DigestHelper | None:
        if not _helper_allowed():
            return None
        try:
            fd = handle.fileno()
            if os.fstat(fd).st_size < HELPER_MIN_BYTES:
                return None
            process = subprocess.Popen([*HELPER_COMMAND, str(fd)], pass_fds=(fd,),
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        except (OSError, ValueError):
            return None
        try:
            return cls(handle, process)
        except (OSError, ValueError):
            process.kill()
            process.communicate()
            return None

    def check(self, record: TraceRecord, data: bytes, start: int, end: int, cut_short: bool) -> None:
        """Note `record`'s payload (`data[start:end]`) for checking: by the child when it keeps up."""
        if self.closed or len(self.sent_records) - self.answered >= HELPER_LAG_RANGES \
                or self.sent_bytes - self.answered_bytes >= HELPER_LAG_BYTES:
            digest = payload_digest(data[start:end])
            if not _settled_whole(record, digest):  # counted in order, at the end
                self.events.items.append((record, cut_short, digest))
            return
        items = self.events.items
        if items and type(items[-1]) is int:
            items[-1] += 1
        else:
            items.append(1)
        if cut_short:
            self.cut_short = len(self.sent_records)
        self.sent_records.append(record)
        self.sent.extend((record.payload_start, record.payload_end))
        self.sent_bytes += end - start
        self.unsent += b"%d %d\n" % (record.payload_start, record.payload_end)

    def send(self) -> None:
        """Hand over the ranges found in the last chunk and take the answers in, without waiting."""
        self._receive()
        if self.unsent and not self.closed:
            try:
                written = os.write(self.ins, self.unsent)
                self.unsent = self.unsent[written:]
            except BlockingIOError:
                pass
            except OSError:
                self.closed = True

    def _receive(self) -> None:
        if self.closed and self.partial is None:
            return
        while True:
            try:
                block = os.read(self.outs, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                block = b""
            if not block:
                self.closed, self.partial = True, None
                return
            lines = (self.partial + block).split(b"\n")
            self.partial = lines.pop()
            for line in lines[:len(self.sent_records) - self.answered]:
                index = self.answered
                digest = line.decode("ascii", errors="replace")
                if not _settled_whole(self.sent_records[index], digest):  # counted in order, at the end
                    self.mismatched[index] = digest
                self.answered += 1
                self.answered_bytes += self.sent[2 * index + 1] - self.sent[2 * index]

    def finish(self, problems: ReadProblems) -> None:
        """Take the child's answers, computing the rest from the last range down until the two meet,
        then count every problem noted, in the order it was met."""
        self.send()
        try:
            self.process.stdin.close()
        except OSError:
            pass
        mine: dict[int, str] = {}
        low = len(self.sent_records)
        while low > self.answered:
            if self.closed:
                mine.update((index, self._digest(index)) for index in range(self.answered, low))
                break
            low -= 1
            mine[low] = self._digest(low)
            self._receive()
        self.stop()
        sent = 0
        for item in self.events.items:
            if type(item) is int:  # a run of sent ranges: those not settled by the child's answer
                for index in range(sent, sent + item):
                    record = self.sent_records[index]
                    if record.payload_intact is None and not settle(record, mine.get(index) or self.mismatched[index]):
                        count_damage(problems, index == self.cut_short, record.line_no, record.name)
                sent += item
            elif len(item) == 3:
                record, cut_short, digest = item
                if not settle(record, digest):
                    count_damage(problems, cut_short, record.line_no, record.name)
            else:
                problems.add(*item)

    def stop(self) -> None:
        """End the child (also when the read is interrupted: a Ctrl+C, a bug), leaving no process behind."""
        self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout, self.process.stderr):
            try:
                pipe.close()  # stderr is a pipe rather than /dev/null: opening that would be a write to count
            except OSError:
                pass

    def _digest(self, index: int) -> str:
        """The digest of the range sent as `index`, worked out here."""
        start, end = self.sent[2 * index], self.sent[2 * index + 1]
        try:
            raw = os.pread(self.handle.fileno(), end - start, start)
        except (OSError, ValueError):
            return "-"
        return payload_digest(raw) if len(raw) == end - start else "-"


class _NotedProblems:
    """`ReadProblems.add` calls kept in order, to be counted once the helper's digests are in, among the
    payloads whose damage is counted then: (category, example) for a problem, (record, cut_short,
    digest) for a payload checked here that did not match, and an int n for the next n ranges sent."""

    def __init__(self):
        self.items: list[tuple | int] = []

    def add(self, category: str, example: str = "") -> None:
        self.items.append((category, example))


def _helper_allowed() -> bool:
    """A second core to run on, an interpreter to run there (a frozen app has none) and a descriptor
    to hand over."""
    if os.environ.get("TCI_SERIAL") or getattr(sys, "frozen", False) or os.name != "posix" or not sys.executable:
        return False
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except (AttributeError, OSError):
        return (os.cpu_count() or 1) >= 2


def _payload_json(raw: bytes | None, stripped: bool = False):
    """Payload bytes decoded as JSON, or None when they are not JSON. A checked payload need not lose
    its tabs first (`stripped` False): a tab before each line is JSON whitespace (a JSON string holds no
    raw newline), and stripping 100 MB of payloads costs seconds."""
    if raw is None:
        return None
    try:
        return json_codec.loads(raw)
    except ValueError:
        pass
    if not stripped:
        raw = _strip_tabs(raw)
        try:
            return json_codec.loads(raw)
        except ValueError:
            pass
    try:  # bytes that are not UTF-8 are replaced, as `payload` does, before giving up
        return json_codec.loads(raw.decode("utf-8", errors="replace"))
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


# 2 MiB: as fast as 4 MiB on the real ~100 MB logs (a chunk and its leftover stay in the CPU's cache)
# with 5–14 MB less peak RSS (bench/bench_trace_reader.py, 2026-12-06)
CHUNK_BYTES = 2 << 20
# A line longer than this is no line torch writes — the largest real envelopes (a record's JSON head)
# are a few hundred KiB, a payload's lines shorter still — and is skipped unread: a hostile log with a
# line of hundreds of MB without a newline costs one pass over it, not memory for all of it. Inside a
# payload, the record keeps the lines before it (and fails its md5); the lines after it are orphans.
MAX_ENVELOPE_BYTES = 16 << 20


READ_AHEAD = 256 << 10  # 64 KiB left the UI waiting up to ~40 ms at times, 256 KiB and 1 MiB ~6 ms; 1 MiB copies 4× more
WINDOWS_KEPT = 4  # logs whose read-ahead window is kept; an older one's is let go
_WINDOWS: deque = deque()  # weak references to the logs holding a window, oldest first
_WINDOWS_LOCK = threading.Lock()


def _keep_window(log: TraceLog) -> None:
    """Count `log` among the logs holding a window, letting go of the oldest's past WINDOWS_KEPT."""
    with _WINDOWS_LOCK:
        if not any(ref() is log for ref in _WINDOWS):
            _WINDOWS.append(weakref.ref(log))
        while len(_WINDOWS) > WINDOWS_KEPT:
            oldest = _WINDOWS.popleft()()
            if oldest is not None:
                oldest._window = None


def read_trace_log(path: str | os.PathLike, verify_md5: bool = True,
                   progress: Callable[[int], None] | None = None, limit: int | None = None,
                   skip_kinds: frozenset[str] = frozenset()) -> TraceLog:
    """Index every record of the log at `path`; never raises on damaged content.

    The file is read in chunks, so memory holds one chunk and the index, not the whole log. With
    `verify_md5` False the payloads are checked later, when read or by `TraceLog.verify_payloads`.
    `progress(bytes_read)` is called after each chunk. With `limit`, only the whole records within
    the log's first `limit` bytes are read (a preview of a big log; its `size` is what was read).
    Records of `skip_kinds` are read, checked and counted, but not kept (nothing reads them at load;
    on a real log they are a third of the records)."""
    path = Path(path)
    problems = ReadProblems()
    records: list[TraceRecord] = []
    strings: dict[int, str] = {}
    file_rank = rank_from_filename(path)
    try:
        handle = open_regular(path)
    except OSError as error:
        problems.add("unreadable_file", f"{path}: {error.strerror or error}")
        return TraceLog(path, records, strings, problems, file_rank)
    helper = _DigestHelper.start(handle) if verify_md5 else None
    # With a helper, problems are noted in order and counted once its digests are in, so they read
    # exactly as the serial reader counts them.
    sink = helper.events if helper is not None else problems
    scanner = _Scanner(records, strings, sink, verify_md5, file_rank, helper, skip_kinds)

    left = limit  # bytes still to read, with a limit

    def read(size: int) -> bytes:
        nonlocal left
        if left is not None and left <= 0:
            return b""
        try:
            block = handle.read(size)
        except OSError as error:
            sink.add("unreadable_file", f"{path}: {error.strerror or error}")
            return b""
        if left is not None:
            if len(block) >= left:
                block, left = block[:_last_record_end(block, left)], 0
            else:
                left -= len(block)
        return block

    with handle:
        try:
            buffer, base = _read_records(read, scanner, sink, helper, progress)
        except BaseException:
            if helper is not None:
                helper.stop()
            raise
        if helper is not None:
            helper.finish(problems)
    size = base + len(buffer)
    give_back_free_memory(size)
    if size == 0:
        problems.add("empty_file", str(path))
    return TraceLog(path, records, strings, problems, file_rank, size, not buffer or buffer.endswith(b"\n"),
                    scanner.events)


def _last_record_end(block: bytes, limit: int) -> int:
    """Where the last record that ends within `block[:limit]` ends: before the last envelope line
    that starts there (a payload's lines start with a tab); `limit` when no line ends there."""
    end = block.rfind(b"\n", 0, limit)
    while end >= 0 and block[end + 1:end + 2] == b"\t":
        end = block.rfind(b"\n", 0, end)
    return end + 1 if end >= 0 else limit


def _read_records(read: Callable[[int], bytes], scanner: _Scanner, sink, helper: _DigestHelper | None,
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


class _Scanner:
    """Cuts a byte stream into records: an envelope line plus the tab-prefixed lines after it."""

    def __init__(self, records: list[TraceRecord], strings: dict[int, str], problems: ReadProblems,
                 verify_md5: bool, file_rank: int | None, helper: _DigestHelper | None = None,
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
            record = _parse_envelope(self.view[pos:eol], line_no, last_line, self.problems, self.file_rank)
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
            self.problems.add("truncated" if at_end else "md5_mismatch", f"line {line_no} ({record.name}): payload missing")
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


def count_damage(problems, cut_short: bool, line_no: int, name: str) -> None:
    """A payload whose md5 failed: cut off by the log's end (`truncated`), or changed (`md5_mismatch`)."""
    problems.add("truncated" if cut_short else "md5_mismatch", f"line {line_no} ({name})")


def _cut_short(data: bytes, payload_end: int, at_eof: bool) -> bool:
    """Whether a payload ending at `payload_end` of the last block is the one the log's end cut off."""
    return at_eof and payload_end >= len(data) and not data.endswith(b"\n")


_EMPTY_MD5 = hashlib.md5(b"").hexdigest()
# The meta of every record whose kind holds nothing (every chromium_event: a third or more of a log's
# records): one dict, never written to, instead of one each.
NO_META: dict = {}


def _parse_envelope(raw_line: bytes | memoryview, line_no: int, at_eof: bool, problems: ReadProblems,
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
    prefix = _PREFIX.match(line)
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
