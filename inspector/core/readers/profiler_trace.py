"""torch.profiler's Chrome trace (`export_chrome_trace`, `*.pt.trace.json[.gz]`) read into its
complete events: the one reader of profiler traces, for a capture's own profile and for traces a user
brings (a GPU run's, one per rank). Of each event's arguments only those an analysis joins on are
kept: the correlation that ties a GPU kernel to the runtime call that queued it, device and stream,
and the kernel file, hash and grid Inductor puts on its Triton kernels' CPU ops. Damaged input reads
as far as it can: an event that cannot be read is counted, not fatal."""

from __future__ import annotations

import gzip
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from inspector.core.readers import json_codec
from inspector.core.readers.gpu_files import head
from inspector.core.readers.safe_files import UnsafeFile, read_bytes

MAX_TRACE_BYTES = 1 << 30  # plain or decompressed: a GPU training run's trace can be hundreds of MB
CAPTURED_PROFILE = "profile/compiled.json"  # where a capture session keeps its compiled run's trace (capture/runner.py)
MAX_CANDIDATES = 64  # JSON files looked into for a log's profile: a log in a crowded folder costs no more
MAX_RANK_TRACES = 4096  # JSON files looked into in a folder of rank traces
_RANK_IN_NAME = re.compile(r"(?:^|[_.-])rank[_-]?(\d+)(?=[_.-]|$)", re.IGNORECASE)  # profile_rank3.pt.trace.json
KEPT_ARGS = ("correlation", "External id", "device", "stream", "kernel_file", "kernel_hash", "grid", "bytes")


@dataclass(frozen=True)
class TraceEvent:
    """One complete ('X') event: a span of one thread."""

    name: str
    category: str
    start_us: float
    duration_us: float
    thread: str  # "pid/tid": spans nest only within one thread
    args: dict = field(default_factory=dict, compare=False)  # the KEPT_ARGS it carries

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

    def by_thread(self) -> dict[str, list[TraceEvent]]:
        threads: dict[str, list[TraceEvent]] = {}
        for event in self.events:
            threads.setdefault(event.thread, []).append(event)
        return threads


def read_profiler_trace(path: str | Path, root: str | Path | None = None) -> ProfilerTrace:
    """The trace at `path` (gzip or plain JSON; an object with `traceEvents` or a bare list). Raises
    OSError or ValueError when the file as a whole is not a trace; single bad events are counted."""
    path = Path(path)
    data = read_bytes(path, MAX_TRACE_BYTES, root)
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data, path)
    document = json_codec.loads(data)
    raw = document.get("traceEvents") if isinstance(document, dict) else document
    if not isinstance(raw, list):
        raise ValueError(f"{path}: not a Chrome trace (no traceEvents list)")
    events, unreadable = [], 0
    for item in raw:
        if not isinstance(item, dict) or item.get("ph") != "X":
            continue
        event = _event(item)
        if event is None:
            unreadable += 1
        else:
            events.append(event)
    events.sort(key=lambda event: (event.thread, event.start_us, -event.duration_us))
    info = document if isinstance(document, dict) else {}
    devices = {device["id"]: str(device.get("name") or "") for device in info.get("deviceProperties") or []
               if isinstance(device, dict) and isinstance(device.get("id"), int)}
    rank = (info.get("distributedInfo") or {}).get("rank") if isinstance(info.get("distributedInfo"), dict) else None
    named = _RANK_IN_NAME.search(path.name)
    rank = rank if type(rank) is int else int(named[1]) if named else None
    return ProfilerTrace(path, tuple(events), unreadable, devices, rank)


def _event(item: dict) -> TraceEvent | None:
    name, start, duration = item.get("name"), item.get("ts"), item.get("dur")
    if not isinstance(name, str) or not _is_number(start) or not _is_number(duration) or duration < 0:
        return None
    args = item.get("args")
    kept = {key: args[key] for key in KEPT_ARGS if key in args} if isinstance(args, dict) else {}
    return TraceEvent(name, str(item.get("cat") or ""), float(start), float(duration),
                      f"{item.get('pid', '')}/{item.get('tid', '')}", kept)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value == value


def _gunzip(data: bytes, path: Path) -> bytes:
    """Decompressed, with the same cap as a plain trace (a small .gz can inflate to gigabytes)."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(data, MAX_TRACE_BYTES + 1)
    except zlib.error as error:
        raise gzip.BadGzipFile(f"{path}: {error}") from error
    if len(out) > MAX_TRACE_BYTES:
        raise UnsafeFile(f"{path}: more than {MAX_TRACE_BYTES >> 20} MB once decompressed (not read)")
    return out


def looks_like_profiler_trace(path: Path) -> bool:
    """A `.json[.gz]` file whose first bytes open a Chrome trace object (`traceEvents`)."""
    if not path.is_file() or not path.name.endswith((".json", ".json.gz")):
        return False
    start = head(path)
    return start.lstrip().startswith(b"{") and b'"traceEvents"' in start


def traces_in(folder: Path, looked_into: int = MAX_RANK_TRACES) -> list[Path]:
    """The profiler traces directly in `folder`, by name, of its first `looked_into` JSON files."""
    candidates = islice((path for pattern in ("*.json", "*.json.gz") for path in folder.glob(pattern)), looked_into)
    return sorted(path for path in candidates if looks_like_profiler_trace(path))


@dataclass
class RankTraces:
    """A folder of a distributed run's traces, one per rank, read one at a time (`read`): a training
    run's trace can be hundreds of MB, and a comparison needs a few figures of each."""

    folder: Path
    paths: list[Path]
    unreadable: dict[str, str] = field(default_factory=dict)  # a file that could not be read → why, as read

    def read(self) -> Iterator[ProfilerTrace]:
        for path in self.paths:
            try:
                yield read_profiler_trace(path, root=self.folder)
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
        return (captured, "") if captured.is_file() else (None, "the capture holds no profile of the compiled run")
    places = [folder, folder.parent] if folder.is_dir() else [folder.parent, folder.parent.parent]
    for place in places:
        found = traces_in(place, MAX_CANDIDATES)
        if len(found) == 1:
            return found[0], ""
        if found:
            return None, f"{len(found)} profiler traces in {place}: name one with --profile"
    return None, "no profiler trace beside the log"
