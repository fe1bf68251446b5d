"""tritonparse traces (`dedicated_log_triton_trace_*.ndjson[.gz]`, written by
`tritonparse.structured_logging.init()`): one JSON event per line. A `compilation` event holds a
kernel's Triton IR at each stage (TTIR, TTGIR, LLIR, PTX, AMDGCN), its Python source, the compile
metadata and — once the trace has been parsed by tritonparse — `source_mappings` between the Python
lines and each IR's lines; `pt_info` ties a kernel compiled by torch.compile to its compile unit.
`launch` events (grid, stream, arguments) are counted per kernel, never kept one by one; a
`launch_diff` summarises what varies between launches of a kernel."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers.gpu_files import head, json_lines

SUFFIXES = (".ndjson", ".ndjson.gz")
EVENT_TYPES = ("compilation", "launch", "launch_diff")
IR_ORDER = ("ttir", "ttgir", "llir", "ptx", "amdgcn", "sass")


@dataclass
class TritonKernel:
    """One compilation of a kernel (an autotuned kernel compiles once per config: one each)."""

    name: str
    hash: str
    metadata: dict
    python_file: str | None
    python_start_line: int | None
    python_code: str
    ir: dict[str, str]  # stage (ttir, ttgir, …) → its text
    mappings: dict[str, dict[str, dict]]  # stage (or "python") → its line → the lines of the other stages
    compile_id: str | None  # "frame/compile" of the torch.compile unit that compiled it (pt_info)
    launches: int = 0
    grids: Counter = field(default_factory=Counter)  # grid (a tuple) → launches
    varying: dict[str, str] = field(default_factory=dict)  # launch field → how it varies (launch_diff)

    @property
    def stages(self) -> list[str]:
        return sorted(self.ir, key=lambda stage: (IR_ORDER.index(stage) if stage in IR_ORDER else len(IR_ORDER), stage))

    def lines_for(self, stage: str, line: int, other: str) -> list[int]:
        """The lines of stage `other` that `line` of `stage` ("python" for the source) became or came
        from, as the trace's source mappings say (empty when it has none)."""
        entry = self.mappings.get(stage, {}).get(str(line))
        if not isinstance(entry, dict):
            return []
        lines = ([entry["line"]] if "line" in entry else []) if other == "python" else entry.get(f"{other}_lines") or []
        return sorted({int(value) for value in lines if str(value).isdigit()})


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


def read_tritonparse(path: Path) -> TritonTrace:
    problems = ReadProblems()
    kernels: list[TritonKernel] = []
    by_hash: dict[str, list[TritonKernel]] = {}
    unknown: Counter = Counter()
    pending_launches: list[dict] = []
    for event in json_lines(path, problems):
        kind = event.get("event_type")
        try:
            if kind == "compilation":
                kernel = _kernel(event)
                kernels.append(kernel)
                by_hash.setdefault(kernel.hash, []).append(kernel)
            elif kind == "launch":
                pending_launches.append(event)
            elif kind == "launch_diff":
                for kernel in by_hash.get(str(event.get("hash")), []):
                    kernel.varying.update(_varying(event.get("diffs")))
            else:
                unknown[str(kind)] += 1
        except (TypeError, ValueError, AttributeError, KeyError) as error:
            problems.add("bad_record", f"{kind}: {type(error).__name__}: {error}")
    for event in pending_launches:  # a launch may come before its compilation's event in a merged trace
        metadata = event.get("compilation_metadata") if isinstance(event.get("compilation_metadata"), dict) else {}
        owners = by_hash.get(str(metadata.get("hash")), [])
        if not owners:
            problems.add("bad_record", f"launch of {event.get('name')!r}: no compilation with its hash")
            continue
        owners[0].launches += 1
        grid = event.get("grid")
        owners[0].grids[tuple(grid) if isinstance(grid, list) else str(grid)] += 1
    return TritonTrace(path, kernels, problems, unknown)


def _kernel(event: dict) -> TritonKernel:
    payload = event["payload"]
    metadata = payload.get("metadata") or {}
    name = str(metadata.get("name") or "?")
    ir = {}
    for file_name, text in (payload.get("file_content") or {}).items():
        stage = file_name.rsplit(".", 1)[-1]
        if isinstance(text, str) and stage != "json" and file_name.startswith(name):
            ir[stage] = text
    source = payload.get("python_source") or {}
    pt_info = event.get("pt_info") or payload.get("pt_info") or {}
    compile_id = None
    if isinstance(pt_info.get("frame_id"), int) and isinstance(pt_info.get("frame_compile_id"), int):
        compile_id = f"{pt_info['frame_id']}/{pt_info['frame_compile_id']}"
    mappings = {stage: lines for stage, lines in (payload.get("source_mappings") or {}).items() if isinstance(lines, dict)}
    start = source.get("start_line")
    return TritonKernel(name, str(metadata.get("hash") or ""), metadata, source.get("file_path"),
                        start if isinstance(start, int) else None, str(source.get("code") or ""), ir, mappings,
                        compile_id)


def _varying(diffs) -> dict[str, str]:
    """What a launch_diff says varies, one line per field: its distinct values and how often."""
    described = {}
    for field_name, diff in (diffs or {}).items():
        if not isinstance(diff, dict) or field_name == "timestamp":  # every launch has its own time
            continue
        if field_name == "stack" and diff.get("diff_type") == "distribution":
            described["stack"] = f"launched from {len(diff.get('values') or [])} different call stacks"
        elif diff.get("diff_type") == "distribution":
            values = diff.get("values") or []
            shown = ", ".join(f"{value.get('count')}× {_short(value.get('value'))}" for value in values[:4])
            described[field_name] = f"{len(values)} values: {shown}" + (" …" if len(values) > 4 else "")
        elif diff.get("summary_text"):
            described[field_name] = str(diff["summary_text"])
    return described


def _short(value, limit: int = 60) -> str:
    text = str(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"
