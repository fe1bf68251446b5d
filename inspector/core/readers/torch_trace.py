"""Reader of TORCH_TRACE structured logs (``dedicated_log_torch_trace_*.log``).

Each record is a glog prefix plus one JSON envelope on one line; an envelope with ``has_payload`` (an
md5) is followed by its payload as tab-prefixed lines. The reader indexes records and remembers where
each payload lies in the file, so opening a 100 MB log touches each byte once and keeps no payload in
memory: payloads are read back by offset when a view asks for them. Damage is counted, never raised.
"""


import hashlib
import os
import re
import threading
import weakref
from collections import deque
from collections.abc import Callable
from pathlib import Path

from inspector.core.malloc_policy import give_back_free_memory
from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers import json_codec
from inspector.core.readers.digest_helper import DigestHelper
from inspector.core.readers.payload_digest import payload_digest, strip_tabs
from inspector.core.readers.safe_files import open_regular
from inspector.core.readers.trace_records import EventRows, TraceRecord, count_damage, settle
from inspector.core.readers.trace_scanner import GLOG_PREFIX, Scanner, last_record_end, read_records


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
        stripped = strip_tabs(raw)
        if record.payload_intact is None:  # the bytes payload_digest hashes: stripped once for both
            self._check(record, hashlib.md5(stripped).hexdigest())
        return stripped

    def payload_head(self, record: TraceRecord, chars: int) -> tuple[str, int]:
        """`payload(record)[:chars]` and `len(payload(record))`, without stripping and decoding the
        whole of a long payload where its bytes are ASCII (each character one byte, each line's tab
        one byte less) and its md5 was checked (reading it settles nothing). Every newline of a
        payload starts a line with a tab (the scanner ends a payload at the first that does not), so
        the newlines count the tabs that stripping removes."""
        if not record.has_payload or record.payload_intact is None:
            text = self.payload(record)  # unchecked: read whole, and settled
            return text[:chars], len(text)
        raw = self._read(record.payload_start, record.payload_end)
        if raw is None:  # unreadable (counted once, by `_read`)
            return "", 0
        if len(raw) <= 2 * chars + 16 or b"\r" in raw or not raw.isascii():
            text = strip_tabs(raw).decode("utf-8", errors="replace")
            return text[:chars], len(text)
        whole = raw.rstrip(b"\n")
        tabbed = whole.startswith(b"\t")
        size = len(whole) - tabbed - whole.count(b"\n")
        # a line loses at most its tab, one byte of two: 2 * chars bytes hold at least `chars` characters
        return strip_tabs(raw[:2 * chars + 16])[:chars].decode("ascii"), size

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
        stripped = strip_tabs(raw)
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
            envelope = json_codec.loads(line[GLOG_PREFIX.match(line).end():])
            return envelope if isinstance(envelope, dict) else {}
        except (ValueError, AttributeError):
            return {}

    def _read(self, start: int, end: int) -> bytes | None:
        """Bytes [start, end) of the log through one handle kept open (views read thousands of
        payloads; opening the file for each cost more than reading them). Safe across threads.

        Reads come from a window of READ_AHEAD bytes read at once: an analysis reads a log's payloads
        in file order, so most reads are slices of it. Each read from the file lets go of the GIL and
        takes it back at once, and a thread waiting for the GIL waits again whenever that happens: the
        hundreds of thousands of small reads of a big job's analysis would keep the app's UI thread
        waiting for long stretches. A few logs keep a window (`_WINDOWS`), so memory stays a few MiB.
        Reads name their offset (`pread`): a forked copy of this process (forked_parts.py) shares the
        descriptor, and a seek of one would move the other's reads."""
        window = self._window
        if window is not None and window[0] <= start and end <= window[0] + len(window[1]):
            return window[1][start - window[0]:end - window[0]]
        with self._lock:
            try:
                if self._handle is None:
                    self._handle = open_regular(self.path)
                raw = _read_at(self._handle.fileno(), start, max(end - start, READ_AHEAD))
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


def _read_at(descriptor: int, offset: int, size: int) -> bytes:
    """`size` bytes of the file from `offset` (fewer at its end), without moving its offset where the
    system can (`pread`; elsewhere, Windows, no copy is ever forked to share it: forked_parts.py)."""
    if not hasattr(os, "pread"):
        os.lseek(descriptor, offset, os.SEEK_SET)
        return os.read(descriptor, size)
    parts = []
    while size > 0:
        part = os.pread(descriptor, size, offset)
        if not part:
            break
        parts.append(part)
        offset, size = offset + len(part), size - len(part)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _payload_json(raw: bytes | None, stripped: bool = False):
    """Payload bytes decoded as JSON, or None when they are not JSON. A checked payload need not lose
    its tabs first (`stripped` False): a tab before each line is JSON whitespace (a JSON string holds no
    raw newline), and stripping the tabs copies every payload."""
    if raw is None:
        return None
    try:
        return json_codec.loads(raw)
    except ValueError:
        pass
    if not stripped:
        raw = strip_tabs(raw)
        try:
            return json_codec.loads(raw)
        except ValueError:
            pass
    try:  # bytes that are not UTF-8 are replaced, as `payload` does, before giving up
        return json_codec.loads(raw.decode("utf-8", errors="replace"))
    except ValueError:
        return None


_RANK_IN_NAME = re.compile(r"_rank_(\d+)")


def rank_from_filename(path: Path) -> int | None:
    match = _RANK_IN_NAME.search(path.name)
    return int(match.group(1)) if match else None


# What one read from the file takes: small enough that a read copies little (each read holds the GIL),
# large enough that the analysis's reads in file order are mostly slices of it (see `TraceLog._read`).
READ_AHEAD = 256 << 10
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
    helper = DigestHelper.start(handle) if verify_md5 else None
    # With a helper, problems are noted in order and counted once its digests are in, so they read
    # exactly as the serial reader counts them.
    sink = helper.events if helper is not None else problems
    scanner = Scanner(records, strings, sink, verify_md5, file_rank, helper, skip_kinds)

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
                block, left = block[:last_record_end(block, left)], 0
            else:
                left -= len(block)
        return block

    with handle:
        try:
            buffer, base = read_records(read, scanner, sink, helper, progress)
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
