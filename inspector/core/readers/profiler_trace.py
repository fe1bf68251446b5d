"""torch.profiler's Chrome trace (`export_chrome_trace`, `*.pt.trace.json[.gz]`) read into its
complete events: the one reader of profiler traces, for a capture's own profile and for traces a user
brings (a GPU run's, one per rank). Of each event's arguments only those an analysis joins on are
kept, each checked for its type: the correlation that ties a GPU kernel to the runtime call that
queued it, device and stream, and the kernel file, hash and grid Inductor puts on its Triton kernels'
CPU ops. The file is read a piece at a time (`json_stream`), never whole as objects, with caps on
its inflated size and on the events read. Damaged input reads as far as it can: an event that
cannot be read, a cut-off end or bytes that are not UTF-8 are counted, not fatal."""

from __future__ import annotations

import codecs
import math
import os
import re
import reprlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from types import MappingProxyType

from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers.gpu_files import GPU_FILES_ELSEWHERE, head
from inspector.core.readers.json_stream import NotJson, StreamEnd, array_items
from inspector.core.readers.inflated import inflated_parts
from inspector.core.readers.safe_files import UnsafeFile, check_regular, is_inside, is_readable_file, open_regular
from inspector.core.readers.input_kind import InputKind, Match, file_kind

MAX_TRACE_BYTES = 1 << 30  # plain or decompressed: a GPU training run's trace can be hundreds of MB
MAX_EVENTS = 2_000_000  # events read (of every kind): a real trace of a few hundred MB holds a million or so
CAPTURED_PROFILE = "profile/compiled.json"  # where a capture session keeps its compiled run's trace (capture/runner.py)
MAX_CANDIDATES = 64  # JSON files looked into for a log's profile: a log in a crowded folder costs no more
MAX_RANK_TRACES = 4096  # JSON files looked into in a folder of rank traces
_RANK_IN_NAME = re.compile(r"(?:^|[_.-])rank[_-]?(\d+)(?=[_.-]|$)", re.IGNORECASE)  # profile_rank3.pt.trace.json
KEPT_ARGS = ("correlation", "External id", "device", "stream", "kernel_file", "kernel_hash", "grid", "bytes")


@dataclass(frozen=True, slots=True)
class TraceEvent:
    """One complete ('X') event: a span of one thread."""

    name: str
    category: str
    start_us: float
    duration_us: float
    thread: str  # "pid/tid": spans nest only within one thread
    args: Mapping = field(default_factory=dict, compare=False)  # the KEPT_ARGS it carries, each of its type

    @property
    def end_us(self) -> float:
        return self.start_us + self.duration_us


@dataclass(frozen=True)
class ProfilerTrace:
    path: Path
    events: tuple[TraceEvent, ...]  # per thread, by start time, the enclosing span before what it holds
    unreadable: int  # events that were not readable spans (no name, no time, negative duration)
    devices: dict = field(default_factory=dict)  # device id → name (deviceProperties)
    rank: int | None = None  # distributedInfo.rank of a distributed run's trace, else the rank its file name says
    problems: ReadProblems = field(default_factory=ReadProblems)  # damage to the file and to fields of events

    def by_thread(self) -> dict[str, list[TraceEvent]]:
        threads: dict[str, list[TraceEvent]] = {}
        for event in self.events:
            threads.setdefault(event.thread, []).append(event)
        return threads


def read_profiler_trace(path: str | Path, root: str | Path | None = None,
                        progress: Callable[[int, int], None] | None = None) -> ProfilerTrace:
    """The trace at `path` (gzip or plain JSON; an object with `traceEvents` or a bare list), read a
    piece at a time: only the kept part of each complete event is held. Raises OSError or ValueError
    when the file as a whole is not a trace (or is over the size cap); damage inside it — a cut-off
    end, bytes that are not UTF-8, an event that is not JSON or has a field of the wrong type, bytes
    after the gzip stream — is counted in `problems` and `unreadable`, with what was readable kept.
    `progress(bytes read, file size)` is called between parts; what it raises (the app closing) ends the read."""
    path = Path(path)
    problems = ReadProblems()
    header: dict = {}
    end = StreamEnd()
    events: list[TraceEvent] = []
    unreadable = seen = 0
    strings: dict = {}  # one copy of each name, category and thread the events repeat
    file = path.name
    with open_regular(path, root) as handle:
        try:
            for item in array_items(_text_parts(handle, path, problems, progress), "traceEvents", header,
                                    ("deviceProperties", "distributedInfo"), end):
                seen += 1
                if seen > MAX_EVENTS:
                    problems.add("kept_cap", f"{path.name}: the events after the first {MAX_EVENTS:,} (not read)")
                    break
                if not isinstance(item, dict) or item.get("ph") != "X":
                    continue
                event = _event(item, strings, problems, file)
                if event is None:
                    unreadable += 1
                else:
                    events.append(event)
        except NotJson as error:
            raise ValueError(f"{path}: not a Chrome trace ({'; '.join([str(error), *problems.describe()])})") from None
    if not end.found_array:
        raise ValueError(f"{path}: not a Chrome trace (no traceEvents list"
                         + ("; the file ends before its events)" if end.cut else ")"))
    if end.cut and not problems.counts["truncated"]:  # a gzip cut short is counted once, by its reader
        problems.add("truncated", f"{path.name}: cut off after {seen:,} event(s) (the rest was never written)")
    for example in end.bad_examples:
        problems.add("bad_json", f"{path.name}: {example}")
    if end.bad_items > len(end.bad_examples):
        problems.counts["bad_json"] += end.bad_items - len(end.bad_examples)
    if end.stopped:
        problems.add("bad_json", f"{path.name}: {end.stopped} (the rest not read)")
    if end.trailing:
        problems.add("bad_json", f"{path.name}: text after the end of the trace's JSON (not read)")
    events.sort(key=lambda event: (event.thread, event.start_us, -event.duration_us))
    devices = {device["id"]: str(device.get("name") or "") for device in header.get("deviceProperties") or []
               if isinstance(device, dict) and type(device.get("id")) is int} \
        if isinstance(header.get("deviceProperties"), list) else {}
    info = header.get("distributedInfo")
    rank = info.get("rank") if isinstance(info, dict) else None
    named = _RANK_IN_NAME.search(path.name)
    rank = rank if type(rank) is int else int(named[1]) if named else None
    return ProfilerTrace(path, tuple(events), unreadable, devices, rank, problems)


def _event(item: dict, strings: dict, problems: ReadProblems, file: str) -> TraceEvent | None:
    """The complete event `item` as kept, or None when it is no readable span (no name, a time that
    is not a finite number, a negative duration); an argument of the wrong type is left out, counted.
    (Run for each of up to millions of events: type checks by `type`, names kept once in `strings`.)"""
    name, start, duration = item.get("name"), item.get("ts"), item.get("dur")
    if type(name) is not str or type(start) not in _NUMBERS or type(duration) not in _NUMBERS or duration < 0 \
            or not math.isfinite(start + duration):
        return None
    args, kept = item.get("args"), _NO_ARGS
    if type(args) is dict and (found := _KEPT.intersection(args)):
        kept = {}
        for key in found:
            value, wanted = args[key], _ARG_TYPES[key]
            if type(value) is not wanted:  # (the common case, a plain int or str, without a call)
                value = None if type(wanted) is type else wanted(value)
            if value is None:
                problems.add("bad_trace_field", f"{file}: {name[:80]}: {key} = {reprlib.repr(args[key])}")
            else:
                kept[key] = value
    category, pid, tid = item.get("cat"), item.get("pid"), item.get("tid")
    category = strings.setdefault(category, category) if type(category) is str else ""
    where = (pid, tid) if type(pid) in _IDS and type(tid) in _IDS else (_scalar(pid), _scalar(tid))
    thread = strings.get(where)
    if thread is None:
        thread = strings[where] = f"{where[0]}/{where[1]}"
    return TraceEvent(strings.setdefault(name, name), category, float(start), float(duration), thread, kept or _NO_ARGS)


_NUMBERS = (int, float)
_IDS = (int, str)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _scalar(value) -> str:
    """A pid or tid as written (a number, or a name like "Spans"); anything else as nothing."""
    return str(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else ""


def _device(value) -> int | None:
    """A device id: a number, or the same number written as a string ("0" and 0 are one device)."""
    if type(value) is int:
        return value
    return int(value) if isinstance(value, str) and value.isascii() and value.strip().isdecimal() and len(value) < 10 \
        else None


def _grid(value) -> str | tuple | None:
    """Inductor's launch grid as it names it ("grid(100,)"), or a kernel's grid of numbers ([1, 1, 1])."""
    if isinstance(value, str):
        return value
    if type(value) is list and len(value) <= 3 and list(map(type, value)).count(int) == len(value):
        return tuple(value)
    return None


def _number(value) -> float | int | None:
    return value if _is_number(value) else None


_ARG_TYPES = {"correlation": int, "External id": int, "device": _device, "stream": int, "kernel_file": str,
              "kernel_hash": str, "grid": _grid, "bytes": _number}  # a type: that exact type, else a check
_NO_ARGS = MappingProxyType({})
_KEPT = frozenset(KEPT_ARGS)


def _text_parts(handle, path: Path, problems: ReadProblems, progress=None) -> Iterator[str]:
    """The file's text, a part at a time: decompressed when it is gzip, bytes that are not UTF-8
    replaced (and counted). Raises UnsafeFile when it is, or inflates to, more than MAX_TRACE_BYTES."""
    decoder, read = codecs.getincrementaldecoder("utf-8")("replace"), 0
    for part in chain(_byte_parts(handle, path, problems, progress), [b""]):
        text = decoder.decode(part, final=not part)
        if "\ufffd" in text:  # a replacement character torch wrote itself is not damage
            replaced = text.count("\ufffd") - part.count(b"\xef\xbf\xbd")
            if replaced > 0:
                problems.add("non_utf8", f"{path.name}: bytes that are not UTF-8 near byte {read:,} (replaced)")
                problems.counts["non_utf8"] += replaced - 1
        read += len(part)
        yield text


def _byte_parts(handle, path: Path, problems: ReadProblems, progress=None) -> Iterator[bytes]:
    """The file's bytes (inflated.py: gzip inflated a part at a time, members, damage and trailing bytes
    counted), refused as UnsafeFile once they pass MAX_TRACE_BYTES: a gzip bomb is refused at the cap
    having held one part."""
    if os.fstat(handle.fileno()).st_size > MAX_TRACE_BYTES:
        raise UnsafeFile(f"{path}: larger than {MAX_TRACE_BYTES >> 20} MiB (not read)")
    total = 0
    for part in inflated_parts(handle, path, problems, progress):
        total += len(part)
        if total > MAX_TRACE_BYTES:
            raise UnsafeFile(f"{path}: more than {MAX_TRACE_BYTES >> 20} MiB once decompressed (not read)")
        yield part


def looks_like_profiler_trace(path: Path) -> bool:
    """A `.json[.gz]` file whose first bytes open a Chrome trace object (`traceEvents`)."""
    if not path.is_file() or not path.name.endswith((".json", ".json.gz")):
        return False
    start = head(path)
    return start.lstrip().startswith(b"{") and b'"traceEvents"' in start


def _json_files(folder: Path, looked_into: int) -> Iterator[Path]:
    return islice((path for pattern in ("*.json", "*.json.gz") for path in folder.glob(pattern)), looked_into)


def traces_in(folder: Path, looked_into: int = MAX_RANK_TRACES) -> list[Path]:
    """The profiler traces directly in `folder`, by name, of its first `looked_into` JSON files: regular
    files inside it only (a link leading out of the folder is not followed)."""
    return sorted(path for path in _json_files(folder, looked_into)
                  if is_inside(path, folder) and looks_like_profiler_trace(path))


def unsafe_files_in(folder: Path, looked_into: int = MAX_RANK_TRACES) -> dict[str, str]:
    """The JSON files directly in `folder` that no reader opens — a FIFO, device or socket, or a link
    leading out of the folder — each with why, so a folder read for its traces says what it left out."""
    left_out = {}
    for path in _json_files(folder, looked_into):
        try:
            check_regular(path, folder)
        except UnsafeFile as error:
            left_out[path.name] = str(error).removeprefix(f"{path}: ")
        except OSError:
            continue
    return left_out


@dataclass
class RankTraces:
    """A folder of a distributed run's traces, one per rank, read one at a time (`read`): a training
    run's trace can be hundreds of MB, and a comparison needs a few figures of each."""

    folder: Path
    paths: list[Path]
    unreadable: dict[str, str] = field(default_factory=dict)  # a file that could not be read → why, as read
    progress: Callable[[int, int], None] | None = None  # passed to each trace's read (it may stop it)

    def read(self) -> Iterator[ProfilerTrace]:
        self.unreadable.update(unsafe_files_in(self.folder))
        for path in self.paths:
            try:
                yield read_profiler_trace(path, root=self.folder, progress=self.progress)
            except (OSError, ValueError) as error:
                self.unreadable[path.name] = str(error)


def paired_profile(session) -> tuple[Path | None, str]:
    """The profiler trace of the same run as `session`, or None with why: a capture's own profile of
    the compiled run; for a TORCH_TRACE log (or a folder of them), the one profiler trace in its
    folder or the folder above (where a script that set TORCH_TRACE=./trace exports its profile).
    Several candidates pair with none: which one to read is then the user's to say (`--profile`)."""
    folder = Path(session.extracted_to or session.source)
    if session.results is not None:  # a capture session
        captured = folder / CAPTURED_PROFILE
        return (captured, "") if is_readable_file(captured, folder) else \
            (None, "the capture holds no profile of the compiled run")
    places = [folder, folder.parent] if folder.is_dir() else [folder.parent, folder.parent.parent]
    for place in places:
        found = traces_in(place, MAX_CANDIDATES)
        if len(found) == 1:
            return found[0], ""
        if found:
            return None, f"{len(found)} profiler traces in {place}: name one with --profile"
    return None, "no profiler trace beside the log"


def _match_rank_traces(path: Path) -> Match | None:
    """A folder of two or more profiler traces (a folder of TORCH_TRACE logs is matched before it)."""
    traces = traces_in(path) if path.is_dir() else []
    return Match(path, tuple(traces)) if len(traces) >= 2 else None


PROFILER_TRACE = file_kind("profiler_trace", "a torch.profiler trace (*.pt.trace.json[.gz])", looks_like_profiler_trace,
                           lambda source, progress: read_profiler_trace(source.path, progress=progress),
                           patterns=("*.json", "*.json.gz"),
                           opens_session=False, shown_in="gpu", shown_as="profile", elsewhere=GPU_FILES_ELSEWHERE)
PROFILER_TRACES = InputKind("profiler_traces", "a folder of torch.profiler traces (one per rank)", _match_rank_traces,
                            lambda source, progress: RankTraces(source.path, list(source.files), progress=progress),
                            opens_session=False, shown_in="gpu", shown_as="ranks", elsewhere=GPU_FILES_ELSEWHERE)
