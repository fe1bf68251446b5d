"""tritonparse traces (`dedicated_log_triton_trace_*.ndjson[.gz]`, written by
`tritonparse.structured_logging.init()`): one JSON event per line. A `compilation` event holds a
kernel's Triton IR at each stage (TTIR, TTGIR, LLIR, PTX, AMDGCN), its Python source, the compile
metadata and — once the trace has been parsed by tritonparse — `source_mappings` between the Python
lines and each IR's lines; `pt_info` ties a kernel compiled by torch.compile to its compile unit.
`launch` events (grid, stream, arguments) are counted per kernel, never kept one by one; a
`launch_diff` summarises what varies between launches of a kernel.

A trace comes from a stranger as often as from the user's own run: it is read a chunk at a time under
caps (`capped_lines`), each field it uses is type-checked where it is read, and what was cut or left
out is counted in the trace's problems; memory stays bounded by the caps, whatever the file holds."""

from __future__ import annotations

import reprlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers import json_codec
from inspector.core.readers.capped_lines import LineCaps, capped_lines
from inspector.core.readers.gpu_files import GPU_FILES_ELSEWHERE, head
from inspector.core.readers.input_kind import file_kind

SUFFIXES = (".ndjson", ".ndjson.gz")
EVENT_TYPES = ("compilation", "launch", "launch_diff")
IR_ORDER = ("ttir", "ttgir", "llir", "ptx", "amdgcn", "sass")

# Caps: far above what tritonparse writes for a real run (a compilation event of a big autotuned
# kernel is a few MB; a launch event ~5 KB), low enough that no file can take the reader past ~1 GB of
# memory or ~10 s (docs/benchmarks.md, "Hostile tritonparse traces": the gzip bomb cut at the cap).
CAPS = LineCaps(decompressed_bytes=512 << 20, line_bytes=32 << 20, lines=2_000_000)
MAX_IR_CHARS = 8 << 20  # one IR stage's text (or the Python source) kept, cut past it
MAX_KEPT_IR_CHARS = 256 << 20  # all IR of all compilations kept; later compilations keep none
MAX_COMPILATIONS = 20_000  # compilations kept; later ones counted only
MAX_MAPPING_ENTRIES = 4_000_000  # source-mapping lines kept in all
MAX_MAPPED_LINES = 1_000  # lines one mapping entry names
MAX_LINE_NUMBER = 10_000_000  # a line number past this is no line of a real IR
MAX_GRIDS = 32  # distinct grids counted per kernel; the launches of others are counted together
MAX_GRID_SIZE = 2**31 - 1  # CUDA's largest grid dimension
MAX_PENDING_HASHES = 10_000  # kernels whose launches come before their compilation
MAX_VARYING = 32  # launch fields a launch_diff describes, per kernel
MAX_UNKNOWN_KINDS = 50
MAX_SHOWN_CHARS = 200  # a metadata string, a name
MAX_STAGE_CHARS = 16  # an IR stage's name ("ttgir", "amdgcn", …)
SCALARS = (str, int, float, bool, type(None))

_short_repr = reprlib.Repr()
_short_repr.maxstring = _short_repr.maxother = 60
_short_repr.maxlevel = 3


@dataclass(kw_only=True)
class LaunchCounts:
    """A kernel's launches, as counts: how many, and how many with each grid (the first MAX_GRIDS
    distinct grids; the others, and launches with no readable grid, together)."""

    launches: int = 0
    grids: Counter = field(default_factory=Counter)  # grid (a tuple) → launches
    other_grid_launches: int = 0

    def count(self, grid: tuple[int, ...] | None, launches: int = 1) -> None:
        self.launches += launches
        if grid is not None and (grid in self.grids or len(self.grids) < MAX_GRIDS):
            self.grids[grid] += launches
        else:
            self.other_grid_launches += launches

    def add(self, other: LaunchCounts) -> None:
        """`other`'s launches counted here too (launches = grids' launches + other grids' holds for both)."""
        for grid, launches in other.grids.items():
            self.count(grid, launches)
        self.count(None, other.other_grid_launches)


@dataclass
class TritonKernel(LaunchCounts):
    """One compilation of a kernel (an autotuned kernel compiles once per config: one each)."""

    name: str
    hash: str
    metadata: dict  # its scalar fields only (num_warps, arch, …): what a view shows
    python_file: str | None
    python_start_line: int | None
    python_code: str
    ir: dict[str, str]  # stage (ttir, ttgir, …) → its text
    # stage (or "python") → its line → another stage (or "python") → the lines there it maps to
    mappings: dict[str, dict[int, dict[str, tuple[int, ...]]]]
    compile_id: str | None  # "frame/compile" of the torch.compile unit that compiled it (pt_info)
    varying: dict[str, str] = field(default_factory=dict)  # launch field → how it varies (launch_diff)

    @property
    def stages(self) -> list[str]:
        return sorted(self.ir, key=lambda stage: (IR_ORDER.index(stage) if stage in IR_ORDER else len(IR_ORDER), stage))

    def lines_for(self, stage: str, line: int, other: str) -> list[int]:
        """The lines of stage `other` that `line` of `stage` ("python" for the source) became or came
        from, as the trace's source mappings say (empty when it has none)."""
        return list(self.mappings.get(stage, {}).get(line, {}).get(other, ()))


@dataclass
class TritonTrace:
    path: Path
    kernels: list[TritonKernel]
    problems: ReadProblems
    unknown_events: Counter = field(default_factory=Counter)

    @property
    def launches(self) -> int:
        return sum(kernel.launches for kernel in self.kernels)


def looks_like_tritonparse(path: Path) -> bool:
    """A file named like an ndjson trace whose first line is an event of tritonparse's."""
    if not path.is_file() or not path.name.endswith(SUFFIXES):
        return False
    first = head(path).split(b"\n", 1)[0]
    return b'"event_type"' in first and any(f'"{kind}"'.encode() in first for kind in EVENT_TYPES)


def read_tritonparse(path: Path, progress: Callable[[int, int], None] | None = None) -> TritonTrace:
    """The trace at `path`, with what could not be read counted in its problems. `progress(bytes read,
    file size)` is called between chunks of the file; what it raises (ReadCancelled) ends the read."""
    reader = _TraceReader(path)
    for line_no, line in capped_lines(path, reader.problems, CAPS, progress):
        try:
            event = json_codec.loads(line)
        except ValueError:
            reader.problems.add("bad_json", f"{path.name} line {line_no}")
            continue
        if not isinstance(event, dict):
            reader.problems.add("bad_record", f"{path.name} line {line_no}: not a JSON object")
            continue
        try:
            reader.take(event)
        except (TypeError, ValueError, AttributeError, KeyError, RecursionError, OverflowError) as error:
            reader.problems.add("bad_record", f"{path.name} line {line_no}: {type(error).__name__}: {_short(error)}")
    return reader.finish()


class _TraceReader:
    """The trace built up event by event, every kept part within its cap."""

    def __init__(self, path: Path):
        self.path = path
        self.problems = ReadProblems()
        self.kernels: list[TritonKernel] = []
        self.by_hash: dict[str, list[TritonKernel]] = {}
        self.pending: dict[str, tuple[str, LaunchCounts]] = {}  # hash → (name, launches) before its compilation
        self.unknown: Counter = Counter()
        self.ir_kept = 0
        self.mappings_kept = 0

    def take(self, event: dict) -> None:
        kind = event.get("event_type")
        if kind == "compilation":
            if len(self.kernels) >= MAX_COMPILATIONS:
                self.problems.add("kept_cap", f"compilations past the first {MAX_COMPILATIONS:,}")
                return
            kernel = self._kernel(event)
            self.kernels.append(kernel)
            self.by_hash.setdefault(kernel.hash, []).append(kernel)
            _, early = self.pending.pop(kernel.hash, ("", None))
            if early is not None:  # a launch may come before its compilation's event in a merged trace
                kernel.add(early)
        elif kind == "launch":
            self._launch(event)
        elif kind == "launch_diff":
            for kernel in self.by_hash.get(self._text(event.get("hash"), "launch_diff hash"), []):
                for name, how in _varying(event.get("diffs")).items():
                    if name in kernel.varying or len(kernel.varying) < MAX_VARYING:
                        kernel.varying[name] = how
        else:
            kind = _short(kind) if isinstance(kind, str) else f"({type(kind).__name__})"
            self.unknown[kind if kind in self.unknown or len(self.unknown) < MAX_UNKNOWN_KINDS else "(other)"] += 1

    def finish(self) -> TritonTrace:
        for name, launches in self.pending.values():
            self.problems.add("bad_record",
                              f"{launches.launches:,} launch(es) of {name!r}: no compilation with its hash")
            self.problems.counts["bad_record"] += launches.launches - 1
        return TritonTrace(self.path, self.kernels, self.problems, self.unknown)

    def _launch(self, event: dict) -> None:
        metadata = event.get("compilation_metadata")
        key = metadata.get("hash") if type(metadata) is dict else None
        if type(key) is not str:  # the checks that count a wrong type, off the path of the million good launches
            key = self._text(self._dict(metadata, "launch compilation_metadata").get("hash"), "launch hash")
        grid = self._grid(event.get("grid"))
        owners = self.by_hash.get(key)
        if owners:
            owners[0].count(grid)
            return
        if key not in self.pending and len(self.pending) >= MAX_PENDING_HASHES:
            self.problems.add("bad_record", "a launch of a kernel whose compilation is not (yet) in the trace")
            return
        name = self._text(event.get("name"), "launch name")[:MAX_SHOWN_CHARS] or "?"
        self.pending.setdefault(key, (name, LaunchCounts()))[1].count(grid)

    def _grid(self, grid) -> tuple[int, ...] | None:
        """`grid` as a tuple when it is one to three sizes (ints: a bool or float would hash like one)."""
        if (type(grid) is list and 1 <= len(grid) <= 3
                and all(type(size) is int and 0 <= size <= MAX_GRID_SIZE for size in grid)):
            return tuple(grid)
        self._bad("launch grid", grid)
        return None

    def _kernel(self, event: dict) -> TritonKernel:
        payload = self._dict(event.get("payload"), "compilation payload")
        raw_metadata = self._dict(payload.get("metadata"), "compilation metadata")
        metadata = {}
        for key, value in raw_metadata.items():
            if isinstance(value, SCALARS):
                metadata[key] = value[:MAX_SHOWN_CHARS] if isinstance(value, str) else value
        for key in ("num_warps", "num_stages", "shared"):
            if key in metadata and (type(metadata[key]) is not int or metadata[key] < 0):
                self._bad(f"metadata {key}", metadata.pop(key))
        name = self._text(raw_metadata.get("name"), "kernel name")[:MAX_SHOWN_CHARS] or "?"
        source = self._dict(payload.get("python_source"), "python_source")
        start = source.get("start_line")
        if start is not None and not (type(start) is int and 1 <= start <= MAX_LINE_NUMBER):
            self._bad("python_source start_line", start)
            start = None
        return TritonKernel(name, self._text(raw_metadata.get("hash"), "kernel hash")[:MAX_SHOWN_CHARS], metadata,
                            self._text(source.get("file_path"), "python_source file_path") or None, start,
                            self._ir_text(source.get("code"), "python source"), self._ir(payload, name),
                            self._mappings(payload.get("source_mappings")), self._compile_id(event, payload))

    def _ir(self, payload: dict, name: str) -> dict[str, str]:
        ir = {}
        for file_name, text in self._dict(payload.get("file_content"), "file_content").items():
            stage = file_name.rsplit(".", 1)[-1]
            if stage == "json" or not file_name.startswith(name):
                continue
            if len(stage) > MAX_STAGE_CHARS:
                self._bad("file_content name", file_name)
                continue
            if self.ir_kept >= MAX_KEPT_IR_CHARS:
                self.problems.add("kept_cap", f"{file_name}: IR past the first {MAX_KEPT_IR_CHARS >> 20} MiB in all")
                continue
            ir[stage] = kept = self._ir_text(text, file_name)
            self.ir_kept += len(kept)
        return ir

    def _ir_text(self, text, what: str) -> str:
        text = self._text(text, what)
        if len(text) > MAX_IR_CHARS:
            self.problems.add("cut_ir", f"{what}: {len(text):,} characters, kept the first {MAX_IR_CHARS:,}")
            return text[:MAX_IR_CHARS]
        return text

    def _mappings(self, mappings) -> dict[str, dict[int, dict[str, tuple[int, ...]]]]:
        """Each stage's mapped lines, checked: line numbers that are numbers, lists that are lists."""
        kept: dict[str, dict[int, dict[str, tuple[int, ...]]]] = {}
        for stage, lines in self._dict(mappings, "source_mappings").items():
            if not isinstance(lines, dict) or len(stage) > MAX_STAGE_CHARS:
                self._bad(f"source_mappings {_short(stage)}", lines)
                continue
            for line, entry in lines.items():
                if self.mappings_kept >= MAX_MAPPING_ENTRIES:
                    self.problems.add("kept_cap", f"source mappings past the first {MAX_MAPPING_ENTRIES:,} lines")
                    return kept
                if line == "0":  # what no Python line made: tritonparse's line 0
                    continue
                number = _line_number(line)
                targets = self._targets(entry) if number is not None and isinstance(entry, dict) else None
                if not targets:
                    if targets is None:
                        self._bad(f"source_mappings {_short(stage)} line", line)
                    continue
                kept.setdefault(stage, {})[number] = targets
                self.mappings_kept += 1
        return kept

    def _targets(self, entry: dict) -> dict[str, tuple[int, ...]] | None:
        """What one mapped line maps to ({"python": (line,), "ptx": (lines…), …}); None when it names
        a line that is no line number."""
        targets = {}
        for key, value in entry.items():
            if key == "line":
                if value == 0:  # tritonparse's word for an IR line no Python line made
                    continue
                other, values = "python", [value]
            elif key.endswith("_lines"):
                other, values = key.removesuffix("_lines"), value
            else:
                continue
            if not isinstance(values, list):
                return None
            numbers = [_line_number(value) for value in values[:MAX_MAPPED_LINES]]
            if None in numbers:
                return None
            targets[other] = tuple(sorted(set(numbers)))
        return targets

    def _compile_id(self, event: dict, payload: dict) -> str | None:
        pt_info = event.get("pt_info") or payload.get("pt_info")
        if pt_info is None:
            return None
        pt_info = self._dict(pt_info, "pt_info")
        frame, compile_ = pt_info.get("frame_id"), pt_info.get("frame_compile_id")
        if frame is None and compile_ is None:
            return None
        if all(type(value) is int and 0 <= value < 2**31 for value in (frame, compile_)):
            return f"{frame}/{compile_}"
        self._bad("pt_info frame_id/frame_compile_id", [frame, compile_])
        return None

    def _dict(self, value, what: str) -> dict:
        if isinstance(value, dict):
            return value
        if value is not None:
            self._bad(what, value)
        return {}

    def _text(self, value, what: str) -> str:
        if isinstance(value, str):
            return value
        if value is not None:
            self._bad(what, value)
        return ""

    def _bad(self, what: str, value) -> None:
        self.problems.add("bad_trace_field", f"{self.path.name}: {what} is {_short(value)} ({type(value).__name__})")


def _line_number(value) -> int | None:
    """A line number as the trace writes one (an int, or a string of ASCII digits), None for anything else."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 9:
        value = int(value)
    return value if type(value) is int and 1 <= value <= MAX_LINE_NUMBER else None


def _varying(diffs) -> dict[str, str]:
    """What a launch_diff says varies, one line per field: its distinct values and how often."""
    described = {}
    for field_name, diff in (diffs if isinstance(diffs, dict) else {}).items():
        if not isinstance(diff, dict) or field_name == "timestamp":  # every launch has its own time
            continue
        values = diff.get("values") if isinstance(diff.get("values"), list) else []
        if field_name == "stack" and diff.get("diff_type") == "distribution":
            described["stack"] = f"launched from {len(values)} different call stacks"
        elif diff.get("diff_type") == "distribution":
            shown = ", ".join(f"{_short(value.get('count'))}× {_short(value.get('value'))}"
                              for value in values[:4] if isinstance(value, dict))
            described[_short(field_name)] = f"{len(values)} values: {shown}" + (" …" if len(values) > 4 else "")
        elif diff.get("summary_text"):
            described[_short(field_name)] = _short(diff["summary_text"], 200)
    return described


def _short(value, limit: int = 60) -> str:
    """`value` in at most `limit` characters, whatever its type or depth (reprlib never recurses deep)."""
    text = value if isinstance(value, str) else _short_repr.repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


TRITON_TRACE = file_kind("tritonparse_trace", "a tritonparse trace (dedicated_log_triton_trace_*.ndjson[.gz])",
                         looks_like_tritonparse, lambda source, progress: read_tritonparse(source.path, progress),
                         patterns=tuple(f"*{suffix}" for suffix in SUFFIXES),
                         opens_session=False, shown_in="gpu", shown_as="triton", elsewhere=GPU_FILES_ELSEWHERE)
