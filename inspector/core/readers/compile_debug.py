"""TORCH_COMPILE_DEBUG output: the structured log it keeps under tlparse/ is the spine; the
per-graph folders under torchinductor/ add readable graphs, IR before and after fusion, the output code
and provenance."""

from __future__ import annotations

import re
from pathlib import Path

from inspector.core.model.compile_id import CompileId
from inspector.core.model.read_problems import ReadProblems
from inspector.core.model.session import CodeArtifact, CompileUnit, Frame, GraphArtifact, Rank, Session, TextArtifact
from inspector.core.readers.counted_reads import counted_json, deferred_text
from inspector.core.readers.session_builder import build_trace_session
from inspector.core.readers.trace_logs import find_trace_logs
from inspector.core.readers.input_kind import InputKind, Match

_DEBUG_GRAPH_DIR = re.compile(r"^(?P<model>.*)__(?P<graph>\d+)_(?P<kind>inference|forward|backward)"
                              r"_(?P<id>\d+)\.(?P<n>\d+)$")
# Debug-folder files shown per graph, and what a view calls them.
DEBUG_GRAPH_FILES = {"fx_graph_readable.py": "debug_readable", "fx_graph_transformed.py": "debug_transformed"}
DEBUG_TEXT_FILES = ("ir_pre_fusion.txt", "ir_post_fusion.txt", "fx_graph_runnable.py")


def debug_runs(path: Path) -> list[Path]:
    candidates = [path] if path.name.startswith("run_") else []
    candidates += sorted(path.glob("run_*")) + sorted(path.glob("torch_compile_debug/run_*"))
    return [run for run in candidates if (run / "torchinductor").is_dir() or (run / "torchdynamo").is_dir()]


def open_compile_debug(path: Path, runs: list[Path]) -> Session:
    """TORCH_COMPILE_DEBUG output: the structured log it keeps under tlparse/ is the spine; the
    per-graph folders add readable graphs, IR before and after fusion, and the output code."""
    root = path.parent if path.name.startswith("run_") else path  # tlparse/ sits beside the run folders
    skipped = ReadProblems()
    logs: list[Path] = []
    for run in runs:
        for folder in (run / "tlparse", run.parent / "tlparse"):
            logs += [log for log in find_trace_logs(folder, depth=0, root=root, problems=skipped) if log not in logs]
    session = build_trace_session(logs, path, kind="compile_debug") if logs else Session(path, "compile_debug")
    session.load_problems.merge(skipped)
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
            _attach_debug_folder(unit, folder, root, session.load_problems, with_code=unit in orphans)
    if orphans:
        if not session.ranks:
            session.ranks.append(Rank(rank=None))
        for unit in orphans:
            session.ranks[0].frames.append(Frame(unit.compile_id.frame, unit.function, None, [unit]))
    return session


def _attach_debug_folder(unit: CompileUnit, folder: Path, root: Path, problems: ReadProblems, with_code: bool) -> None:
    for name, stage in DEBUG_GRAPH_FILES.items():
        if (folder / name).is_file():
            unit.graphs.setdefault(stage, GraphArtifact(stage, deferred_text(folder / name, root, problems)))
    for name in DEBUG_TEXT_FILES:
        if (folder / name).is_file():
            unit.artifacts.append(TextArtifact(name, deferred_text(folder / name, root, problems)))
    provenance_file = folder / "inductor_provenance_tracking_node_mappings.json"
    if unit.provenance is None and provenance_file.is_file():
        provenance = counted_json(provenance_file, root, problems)
        unit.provenance = provenance if isinstance(provenance, dict) else None
    if with_code and (folder / "output_code.py").is_file():
        unit.output_code.append(CodeArtifact(str(folder / "output_code.py"),
                                             deferred_text(folder / "output_code.py", root, problems),
                                             lambda: unit.provenance))


def _match_compile_debug(path: Path) -> Match | None:
    runs = debug_runs(path) if path.is_dir() else []
    return Match(path, detail=tuple(runs)) if runs else None


COMPILE_DEBUG = InputKind("compile_debug",
                          "a TORCH_COMPILE_DEBUG folder (torch_compile_debug/ or run_*/ with torchinductor/)",
                          _match_compile_debug,
                          lambda source, progress: open_compile_debug(source.path, list(source.detail)))
