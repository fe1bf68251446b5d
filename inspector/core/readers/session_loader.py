"""Open whatever the user points at: a TORCH_TRACE log, a folder of logs (one per rank), a
TORCH_COMPILE_DEBUG folder, or a session folder written by our capture. The kind is detected from the
path; a path that is none of these gets a message naming what was expected."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from inspector.core.model.read_problems import ReadProblems
from inspector.core.model.session import CodeArtifact, CompileUnit, Frame, GraphArtifact, Rank, Session, TextArtifact
from inspector.core.model.compile_id import CompileId
from inspector.core.readers.session_builder import build_trace_session
from inspector.core.readers.safe_files import MAX_JSON_BYTES, UnsafeFile, check_regular, open_regular, read_json, read_text
from inspector.core.readers.session_bundle import BUNDLE_SUFFIX, extract_bundle, remove_extracted
from inspector.core.readers.session_format import GRAPHS_DIR, MANIFEST, RESULTS, TRACE_DIR, upgrade
from inspector.core.readers.session_schema import MANIFEST as MANIFEST_SHAPE, RESULTS as RESULTS_SHAPE, validated
from inspector.core.readers.xla_dump import looks_like_xla_dump

_GLOG_LINE = re.compile(rb"^[VIWEC]\d{4} \d{2}:\d{2}:\d{2}\.\d+\s+\d+ [^\]]*\] \{")
# How far into a file the first record is looked for: a BOM, leading NULs or a damaged first line
# (counted by the reader) must not hide a log; a file with no record this early is not a log.
HEAD_BYTES = 64 << 10
HEAD_LINES = 8
_DEBUG_GRAPH_DIR = re.compile(r"^(?P<model>.*)__(?P<graph>\d+)_(?P<kind>inference|forward|backward)_(?P<id>\d+)\.(?P<n>\d+)$")
TRACE_LOG_PREFIX = "dedicated_log_torch_trace"  # what torch names its per-rank logs
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
    if not path.is_dir():
        try:
            check_regular(path)
        except OSError as error:
            raise NotCompileOutput(f"{error}. Expected {EXPECTED}.") from None
    if path.is_file() and path.name == MANIFEST:  # a double-clicked manifest opens its session folder
        path = path.parent
    if path.is_file() and path.suffix == BUNDLE_SUFFIX:
        folder = extract_bundle(path)
        try:
            session = open_session(folder, progress)
        except BaseException:
            remove_extracted(folder)
            raise
        session.source, session.extracted_to = path, folder
        return session
    if path.is_file():
        if path.stat().st_size == 0 and not path.name.startswith(TRACE_LOG_PREFIX):
            raise NotCompileOutput(f"{path} is empty. Expected {EXPECTED}.")  # a named log opens empty, counted
        if not looks_like_trace_log(path):
            raise NotCompileOutput(f"{path} is not a TORCH_TRACE log: none of its first lines looks like "
                                   f"'V1202 11:01:22.649000 12469 file.py:123] {{...}}'. Expected {EXPECTED}.")
        return build_trace_session([path], path, progress=progress)
    if (path / MANIFEST).is_file():
        return _open_capture(path, progress)
    debug_runs = _debug_runs(path)
    if debug_runs:
        return _open_compile_debug(path, debug_runs)
    skipped = ReadProblems()
    logs = find_trace_logs(path, root=path, problems=skipped)
    if logs:
        session = build_trace_session(logs, path, progress=progress)
        session.load_problems.merge(skipped)
        return session
    if looks_like_xla_dump(path):
        raise NotCompileOutput(f"{path} is an XLA dump, not torch.compile output: `compile-inspector summary` and "
                               f"`diff` read it, and the app opens it in the XLA tab.")
    refused = "; ".join(skipped.examples.get("unsafe_file", []))
    raise NotCompileOutput(f"{path} holds no torch.compile output{f' (left out: {refused})' if refused else ''}. "
                           f"Expected {EXPECTED}.")


def close_session(session: Session) -> None:
    """Let go of what opening `session` made: the folder a bundle was extracted into."""
    if session.extracted_to is not None:
        remove_extracted(session.extracted_to)
        session.extracted_to = None


def rank_logs(path: str | Path) -> list[Path]:
    """The logs of `path` when `open_session` reads it as a folder of TORCH_TRACE logs, one per rank
    (what a distributed job leaves); [] for anything else. The app indexes these first, to show the
    per-rank overview before it has read the whole job."""
    path = Path(path).expanduser()
    if not path.is_dir() or (path / MANIFEST).is_file() or _debug_runs(path):
        return []
    return find_trace_logs(path, root=path)


def looks_like_trace_log(path: Path, root: Path | None = None) -> bool:
    """Whether one of the first lines of `path` is a TORCH_TRACE record. A BOM, NULs or a damaged
    line before it are let through (the reader counts them); prose, code or binary data are not."""
    try:
        with open_regular(path, root) as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return False
    if not head:
        return path.name.startswith(TRACE_LOG_PREFIX)  # an empty log still opens, empty
    lines = [line for line in head.split(b"\n") if not line.startswith(b"\t")][:HEAD_LINES]  # not payload lines
    return any(_GLOG_LINE.match(line.lstrip(b"\xef\xbb\xbf\x00\r ")) for line in lines)


def find_trace_logs(folder: Path, depth: int = 3, root: Path | None = None,
                    problems: ReadProblems | None = None) -> list[Path]:
    """Trace logs in `folder` and up to `depth` levels below, one per rank, oldest first. Names that
    are not regular files inside `root` (FIFOs, devices, links out of the opened folder) are left out
    and counted in `problems`."""
    root = folder if root is None else root
    problems = ReadProblems() if problems is None else problems
    found: list[Path] = []
    for level in range(depth + 1):
        pattern = "/".join(["*"] * level + [f"{TRACE_LOG_PREFIX}*.log"])
        found.extend(path for path in sorted(folder.glob(pattern)) if _may_read(path, root, problems))
        if found:
            break
    if not found:
        found = [p for p in sorted(folder.glob("*.log")) + sorted(folder.glob("*.txt"))
                 if _may_read(p, root, problems) and looks_like_trace_log(p, root)]
    return found


def _may_read(path: Path, root: Path, problems: ReadProblems) -> bool:
    try:
        check_regular(path, root)
    except OSError as error:
        if path.is_dir() and not path.is_symlink():
            return False
        problems.add("unsafe_file", str(error))
        return False
    return True


def _debug_runs(path: Path) -> list[Path]:
    candidates = [path] if path.name.startswith("run_") else []
    candidates += sorted(path.glob("run_*")) + sorted(path.glob("torch_compile_debug/run_*"))
    return [run for run in candidates if (run / "torchinductor").is_dir() or (run / "torchdynamo").is_dir()]


def _open_compile_debug(path: Path, runs: list[Path]) -> Session:
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


def _reader(file: Path, root: Path, problems: ReadProblems):
    """A deferred read of a text file of the opened folder ('' and counted when it may not be read)."""
    def read() -> str:
        try:
            return read_text(file, root=root)
        except OSError as error:
            problems.add("unsafe_file" if isinstance(error, UnsafeFile) else "unreadable_file", str(error))
            return ""
    return read


def _attach_debug_folder(unit: CompileUnit, folder: Path, root: Path, problems: ReadProblems, with_code: bool) -> None:
    for name, stage in DEBUG_GRAPH_FILES.items():
        if (folder / name).is_file():
            unit.graphs.setdefault(stage, GraphArtifact(stage, _reader(folder / name, root, problems)))
    for name in DEBUG_TEXT_FILES:
        if (folder / name).is_file():
            unit.artifacts.append(TextArtifact(name, _reader(folder / name, root, problems)))
    provenance_file = folder / "inductor_provenance_tracking_node_mappings.json"
    if unit.provenance is None and provenance_file.is_file():
        provenance = _read_json(provenance_file, root, problems)
        unit.provenance = provenance if isinstance(provenance, dict) else None
    if with_code and (folder / "output_code.py").is_file():
        unit.output_code.append(CodeArtifact(str(folder / "output_code.py"), _reader(folder / "output_code.py", root, problems),
                                             lambda: unit.provenance))


def _open_capture(path: Path, progress: Callable[[int, int], None] | None = None) -> Session:
    """A session folder from `compile-inspector capture`: manifest, trace logs, measured results and
    structured graphs. Read as data only: nothing in it is imported or executed; a field of the
    wrong type is counted and left out; a newer format is refused."""
    problems = ReadProblems()
    results_file = path / RESULTS
    manifest = _read_json(path / MANIFEST, path, problems)
    results = _read_json(results_file, path, problems) if results_file.is_file() else None
    manifest = validated(manifest or {}, MANIFEST_SHAPE, MANIFEST, problems) or {}
    results = validated(results, RESULTS_SHAPE, RESULTS, problems) if results is not None else None
    manifest, results = upgrade(manifest, results)
    trace = path / TRACE_DIR
    logs = find_trace_logs(trace, depth=1, root=path, problems=problems) if trace.is_dir() else []
    session = build_trace_session(logs, path, kind="capture", progress=progress) if logs else Session(path, "capture")
    session.manifest, session.results = manifest, results
    session.load_problems.merge(problems)
    if session.torch_version is None and session.results:
        session.torch_version = (session.results.get("environment") or {}).get("torch")
    for unit in session.units:
        name = f"{unit.compile_id.frame}_{unit.compile_id.compile}.json"
        if unit.compile_id.autograd is None and (path / GRAPHS_DIR / name).is_file():
            unit.artifacts.append(TextArtifact("structured_graph", _reader(path / GRAPHS_DIR / name, path, session.load_problems), "json"))
    return session


def _read_json(file: Path, root: Path, problems: ReadProblems):
    try:
        return read_json(file, MAX_JSON_BYTES, root)
    except OSError as error:
        problems.add("unsafe_file" if isinstance(error, UnsafeFile) else "unreadable_file", str(error))
    except ValueError as error:
        problems.add("bad_json", f"{file}: {error}")
    return None
