"""The production recorder's files (inspector/capture/recorder.py): one JSON line per compile and a
periodic summary, in a size-rotated file. Opened as a Session — one unit per compile, with its
breaks, recompile reason, compile time and cache outcomes — so every view, output and the run
history take it unchanged. Bounded: lines and files past their limits are counted, not read."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.model.compile_id import CompileId
from inspector.core.model.read_problems import ReadProblems
from inspector.core.model.session import (CacheEvent, CompileUnit, FailedGuard, Frame, GraphBreak, Rank, Recompile,
                                          Session, SourceLocation)
from inspector.core.readers import json_codec
from inspector.core.readers.break_reasons import classify_break, explain_guard, parse_recompile_reasons
from inspector.core.readers.safe_files import is_readable_file, open_regular
from inspector.core.readers.input_kind import file_kind

FORMAT = "torch-compile-inspector/recorder"
KIND = "recorder"
MAX_LINE_BYTES = 64 * 1024  # the recorder writes lines of a few hundred bytes
MAX_FILE_BYTES = 256 * 1024 * 1024
MAX_ROTATED = 16  # FILE.1 … FILE.16 are read with FILE (oldest first)
MAX_COUNT = 1_000_000  # a cache count past this is not a count
HEAD_BYTES = 4096


def looks_like_recorder_file(path: Path) -> bool:
    """A file whose first line is the recorder's header."""
    try:
        if not path.is_file():
            return False
        with open_regular(path) as file:
            first = file.readline(HEAD_BYTES)
    except (OSError, ValueError):
        return False
    try:
        header = json_codec.loads(first)
    except ValueError:
        return False
    return isinstance(header, dict) and header.get("format") == FORMAT


def recorder_files(path: Path) -> list[Path]:
    """The file and its rotated predecessors, oldest first (FILE.3, FILE.2, FILE.1, FILE): regular
    files in the file's own folder only — a rotated name that is a link leading out of it, a FIFO or
    a device is not read."""
    rotated = [path.with_name(f"{path.name}.{number}") for number in range(MAX_ROTATED, 0, -1)]
    return [file for file in rotated if is_readable_file(file, path.parent) and looks_like_recorder_file(file)] + [path]


@dataclass
class _Process:
    """One process that wrote to the file, as its header says (a service restarted appends a new one)."""

    header: dict
    units: dict[str, CompileUnit] = field(default_factory=dict)


def open_recorder_log(path: Path, files: list[Path] | None = None) -> Session:
    """The file as a session: one rank per process that wrote to it when there are several (a service
    restarted, appending to the same file), each with its own compiles — compile ids start again at
    0/0 in every process, so a unit is (process, compile id)."""
    problems = ReadProblems()
    processes: dict[tuple, _Process] = {}
    current: _Process | None = None
    ran_at: float | None = None  # the latest time a line states: when the run last recorded
    for file in files or recorder_files(path):
        for line in _lines(file, problems):
            try:
                record = json_codec.loads(line)
            except ValueError:
                problems.add("bad_json", f"{file.name}: {line[:80]!r}")
                continue
            if not isinstance(record, dict):
                problems.add("bad_record", f"{file.name}: not an object")
                continue
            kind = record.get("kind")
            ran_at = max(filter(None, (ran_at, _number(record.get("t")), _number(record.get("started")))), default=None)
            if kind == "header":
                current = processes.setdefault(_process_key(record), _Process(record))
            elif kind == "compile":
                unit = _unit(record, problems)
                if unit is not None:
                    if current is None or str(unit.compile_id) in current.units:
                        # compiles before any header, or a compile id again without a header between (an
                        # older recorder appended a restart without one): another process, not a rewrite
                        current = processes.setdefault(("no header", len(processes)), _Process({}))
                    current.units[str(unit.compile_id)] = unit
            elif kind == "problem":
                problems.add("recorder_problem", _text(record.get("message")) or "")
            elif kind != "summary":
                problems.add("unknown_record", f"{file.name}: {_text(kind)!r}")
    listed = list(processes.values()) or [_Process({})]
    several = len(listed) > 1
    for number, process in enumerate(listed if several else []):
        for unit in process.units.values():  # shown as "rank N": the Nth process that wrote the file
            unit.rank = number
            for brk in unit.breaks:
                brk.rank = number
    ranks = [Rank(number if several else None, _frames(process.units), log_path=path,
                  problems=problems if number == 0 else ReadProblems())
             for number, process in enumerate(listed)]
    headers = [process.header for process in listed]
    return Session(source=path, kind=KIND, ranks=ranks, torch_version=_versions(headers, "torch"),
                   triton_version=_versions(headers, "triton"), host=_versions(headers, "host", ", "),
                   ran_at=ran_at)


def _process_key(header: dict) -> tuple:
    """A process: its host, pid and start (a rotated file repeats its header; a restart has a new one).
    A header of the first format, without a start, by its host and pid alone (its time is the time of
    the rotation that wrote it)."""
    return _text(header.get("host")), _count(header.get("pid")), _number(header.get("started"))


def _frames(units: dict[str, CompileUnit]) -> list[Frame]:
    frames: dict[int, Frame] = {}
    for unit in sorted(units.values(), key=lambda unit: unit.compile_id.unit_key):
        frame = frames.setdefault(unit.compile_id.frame, Frame(unit.compile_id.frame, unit.function, unit.location))
        frame.units.append(unit)
    return [frames[key] for key in sorted(frames)]


def _versions(headers: list[dict], key: str, joiner: str = " → ") -> str | None:
    """What the processes' headers say, in order, each change shown ("2.12.0 → 2.13.0": torch was
    upgraded between two restarts); None when none says."""
    said = [text for text in (_text(header.get(key)) for header in headers) if text]
    changes = [text for index, text in enumerate(said) if index == 0 or text != said[index - 1]]
    return joiner.join(changes) if changes else None


def _lines(file: Path, problems: ReadProblems):
    """The lines of `file`, each at most MAX_LINE_BYTES (longer ones counted and skipped), up to MAX_FILE_BYTES."""
    try:
        with open_regular(file) as handle:
            read = 0
            while read < MAX_FILE_BYTES:
                line = handle.readline(MAX_LINE_BYTES + 1)
                if not line:
                    return
                read += len(line)
                if len(line) > MAX_LINE_BYTES:
                    problems.add("line_too_long", f"{file.name}: a line over {MAX_LINE_BYTES} bytes")
                    while line and not line.endswith(b"\n"):
                        line = handle.readline(MAX_LINE_BYTES + 1)
                        read += len(line)
                    continue
                if not line.endswith(b"\n"):
                    problems.add("truncated", f"{file.name}: the last line is cut")
                    return
                yield line
            problems.add("file_too_big", f"{file.name}: read up to {MAX_FILE_BYTES} bytes")
    except (OSError, ValueError) as error:
        problems.add("unreadable_file", f"{file.name}: {error}")


def _unit(record: dict, problems: ReadProblems) -> CompileUnit | None:
    compile_id = CompileId.parse(_text(record.get("compile_id")) or "")
    if compile_id is None:
        problems.add("bad_record", f"compile line without a compile id: {_text(record.get('compile_id'))!r}")
        return None
    function, file, line = _text(record.get("frame")), _text(record.get("file")), _count(record.get("line"))
    location = SourceLocation(file, line, function, None) if file else None
    unit = CompileUnit(compile_id, function=function, location=location, started=True, finished=True)
    compile_s = _seconds(record.get("compile_s"))
    if compile_s is not None:
        unit.metrics["entire_frame_compile_time_s"] = compile_s
    backend_s = _seconds(record.get("backend_s"))
    if backend_s is not None:
        unit.metrics["backend_compile_time_s"] = backend_s
    reasons = record.get("break_reasons")
    reasons = [_text(reason) for reason in reasons if _text(reason)] if isinstance(reasons, list) else []
    breaks = _count(record.get("breaks")) or 0
    where = SourceLocation(file, None, function, None) if file else None  # the recorder knows the frame, not the line
    for index in range(min(breaks, 64)):
        reason = reasons[index] if index < len(reasons) else "graph break (reason not recorded)"
        unit.breaks.append(GraphBreak(compile_id, reason, where, kind=classify_break(reason)))
    recompile = _text(record.get("recompile_reason"))
    if recompile:
        guards = [FailedGuard(against, guard, explain_guard(guard))
                  for against, guard in parse_recompile_reasons(recompile)]
        unit.recompile = Recompile(compile_id, guards, recompile)
    cache = record.get("cache")
    if isinstance(cache, dict):
        for name in ("fx_graph", "aotautograd"):
            counts = cache.get(name)
            if isinstance(counts, dict):
                for outcome in ("hit", "miss", "bypass"):
                    for _ in range(min(_count(counts.get(outcome)) or 0, 64)):
                        unit.cache_events.append(CacheEvent(name, outcome))
    unit.fail_type, unit.fail_reason = _text(record.get("fail_type")), _text(record.get("fail_reason"))
    skip = _text(record.get("cudagraph_skip"))
    if skip:
        unit.metrics["cudagraph_skip_reason"] = skip
    for name in ("graph_ops", "guards"):
        value = _count(record.get(name))
        if value is not None:
            unit.metrics["graph_op_count" if name == "graph_ops" else "guard_count"] = value
    return unit


def _text(value) -> str | None:
    return value[:4000] if isinstance(value, str) else None


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNT else None


def _number(value) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        else None


def _seconds(value) -> float | None:
    usable = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    return float(value) if usable else None


RECORDER_LOG = file_kind("recorder_log", "a production recorder's file (inspector.capture.recorder, *.jsonl)",
                         looks_like_recorder_file, lambda source, progress: open_recorder_log(source.path),
                         patterns=("*.jsonl",))
