"""Open whatever the user points at: a TORCH_TRACE log, a folder of logs (one per rank), a
TORCH_COMPILE_DEBUG folder, or a session folder written by our capture. The kind is detected from the
path; a path that is none of these gets a message naming what was expected."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from inspector.core.model.read_problems import ReadProblems
from inspector.core.model.session import CodeArtifact, CompileUnit, Frame, GraphArtifact, Rank, Session, TextArtifact
from inspector.core.model.compile_id import CompileId
from inspector.core.readers.session_builder import build_trace_session
from inspector.core.readers.session_bundle import BUNDLE_SUFFIX, extract_bundle

_GLOG_LINE = re.compile(rb"^[VIWEC]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [^\]]*\] \{")
_DEBUG_GRAPH_DIR = re.compile(r"^(?P<model>.*)__(?P<graph>\d+)_(?P<kind>inference|forward|backward)_(?P<id>\d+)\.(?P<n>\d+)$")
MANIFEST = "manifest.json"
EXPECTED = ("a session bundle (.tcinspect), a TORCH_TRACE log (dedicated_log_torch_trace_*.log), a folder holding such logs, "
            "a TORCH_COMPILE_DEBUG folder (torch_compile_debug/ or run_*/ with torchinductor/), "
            "or a session folder saved by compile-inspector capture (with manifest.json)")
# Debug-folder files shown per graph, and what a view calls them.
DEBUG_GRAPH_FILES = {"fx_graph_readable.py": "debug_readable", "fx_graph_transformed.py": "debug_transformed"}
DEBUG_TEXT_FILES = ("ir_pre_fusion.txt", "ir_post_fusion.txt", "fx_graph_runnable.py")


class NotCompileOutput(ValueError):
    """The path exists but holds nothing torch.compile writes."""


def open_session(path: str | Path, progress: Callable[[int, int], None] | None = None) -> Session:
    """The session at `path`; `progress(bytes_read, bytes_total)` follows the reading of its logs."""
    path = Path(path).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist. Expected {EXPECTED}.")
    if path.is_file() and path.name == MANIFEST:  # a double-clicked manifest opens its session folder
        path = path.parent
    if path.is_file() and path.suffix == BUNDLE_SUFFIX:
        session = open_session(extract_bundle(path), progress)
        session.source = path
        return session
    if path.is_file():
        if not looks_like_trace_log(path):
            raise NotCompileOutput(f"{path} is not a TORCH_TRACE log: its first line should look like "
                                   f"'V1202 11:01:22.649000 12469 file.py:123] {{...}}'. Expected {EXPECTED}.")
        return build_trace_session([path], path, progress=progress)
    if (path / MANIFEST).is_file():
        return _open_capture(path, progress)
    debug_runs = _debug_runs(path)
    if debug_runs:
        return _open_compile_debug(path, debug_runs)
    logs = find_trace_logs(path)
    if logs:
        return build_trace_session(logs, path, progress=progress)
    raise NotCompileOutput(f"{path} holds no torch.compile output. Expected {EXPECTED}.")


def looks_like_trace_log(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    if not head:
        return path.name.startswith("dedicated_log_torch_trace")  # an empty log still opens, empty
    first = head.lstrip(b"\r\n").split(b"\n", 1)[0]
    return bool(_GLOG_LINE.match(first))


def find_trace_logs(folder: Path, depth: int = 3) -> list[Path]:
    """Trace logs in `folder` and up to `depth` levels below, one per rank, oldest first."""
    found: list[Path] = []
    for level in range(depth + 1):
        pattern = "/".join(["*"] * level + ["dedicated_log_torch_trace*.log"])
        found.extend(sorted(folder.glob(pattern)))
        if found:
            break
    if not found:
        found = [p for p in sorted(folder.glob("*.log")) + sorted(folder.glob("*.txt")) if looks_like_trace_log(p)]
    return found


def _debug_runs(path: Path) -> list[Path]:
    candidates = [path] if path.name.startswith("run_") else []
    candidates += sorted(path.glob("run_*")) + sorted(path.glob("torch_compile_debug/run_*"))
    return [run for run in candidates if (run / "torchinductor").is_dir() or (run / "torchdynamo").is_dir()]


def _open_compile_debug(path: Path, runs: list[Path]) -> Session:
    """TORCH_COMPILE_DEBUG output: the structured log it keeps under tlparse/ is the spine; the
    per-graph folders add readable graphs, IR before and after fusion, and the output code."""
    logs: list[Path] = []
    for run in runs:
        for folder in (run / "tlparse", run.parent / "tlparse"):
            logs += [log for log in find_trace_logs(folder, depth=0) if log not in logs]
    session = build_trace_session(logs, path, kind="compile_debug") if logs else Session(path, "compile_debug")
    by_aot_id = {}
    for unit in session.units:
        for artifact in unit.output_code:
            aot_id = artifact.code.aot_id
            if aot_id:
                by_aot_id[aot_id] = unit
    orphans: list[CompileUnit] = []
    for run in runs:
        for folder in sorted((run / "torchinductor").glob("*")):
            match = _DEBUG_GRAPH_DIR.match(folder.name)
            if not folder.is_dir() or not match:
                continue
            aot_id = f"{match['graph']}_{match['kind']}"
            unit = by_aot_id.get(aot_id)
            if unit is None:
                unit = CompileUnit(CompileId(int(match["graph"]), 0), function=match["model"])
                unit.warnings.append("compile id unknown: read from a debug folder without a structured log")
                orphans.append(unit)
            _attach_debug_folder(unit, folder, session.load_problems, with_code=unit in orphans)
    if orphans:
        if not session.ranks:
            session.ranks.append(Rank(rank=None))
        for unit in orphans:
            session.ranks[0].frames.append(Frame(unit.compile_id.frame, unit.function, None, [unit]))
    return session


def _attach_debug_folder(unit: CompileUnit, folder: Path, problems: ReadProblems, with_code: bool) -> None:
    def reader(file: Path):
        def read() -> str:
            try:
                return file.read_text(encoding="utf-8", errors="replace")
            except OSError as error:
                problems.add("unreadable_file", f"{file}: {error}")
                return ""
        return read

    for name, stage in DEBUG_GRAPH_FILES.items():
        if (folder / name).is_file():
            unit.graphs.setdefault(stage, GraphArtifact(stage, reader(folder / name)))
    for name in DEBUG_TEXT_FILES:
        if (folder / name).is_file():
            unit.artifacts.append(TextArtifact(name, reader(folder / name)))
    provenance_file = folder / "inductor_provenance_tracking_node_mappings.json"
    if unit.provenance is None and provenance_file.is_file():
        try:
            unit.provenance = json.loads(provenance_file.read_text(encoding="utf-8", errors="replace"))
        except ValueError:
            problems.add("bad_json", str(provenance_file))
    if with_code and (folder / "output_code.py").is_file():
        unit.output_code.append(CodeArtifact(str(folder / "output_code.py"), reader(folder / "output_code.py"),
                                             lambda: unit.provenance))


def _open_capture(path: Path, progress: Callable[[int, int], None] | None = None) -> Session:
    """A session folder from `compile-inspector capture`: manifest, trace logs, measured results and
    structured graphs. Read as data only: nothing in it is imported or executed."""
    logs = find_trace_logs(path / "trace", depth=1) if (path / "trace").is_dir() else []
    session = build_trace_session(logs, path, kind="capture", progress=progress) if logs else Session(path, "capture")
    session.manifest = _read_json(path / MANIFEST, session.load_problems) or {}
    results_file = path / "results.json"
    session.results = _read_json(results_file, session.load_problems) if results_file.is_file() else None
    if session.torch_version is None and session.results:
        session.torch_version = (session.results.get("environment") or {}).get("torch")
    for unit in session.units:
        name = f"{unit.compile_id.frame}_{unit.compile_id.compile}.json"
        if unit.compile_id.autograd is None and (path / "graphs" / name).is_file():
            graph_file = path / "graphs" / name
            unit.artifacts.append(TextArtifact("structured_graph", lambda f=graph_file: f.read_text(encoding="utf-8", errors="replace"), "json"))
    return session


def _read_json(file: Path, problems: ReadProblems):
    try:
        return json.loads(file.read_text(encoding="utf-8", errors="replace"))
    except OSError as error:
        problems.add("unreadable_file", f"{file}: {error}")
    except ValueError:
        problems.add("bad_json", str(file))
    return None
