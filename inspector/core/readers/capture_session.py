"""A session folder written by `compile-inspector capture`: manifest, trace logs, measured results
and structured graphs, read as data only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from inspector.core.model.read_problems import ReadProblems
from inspector.core.model.run_results import Manifest, RunResults, TorchRecord
from inspector.core.model.session import Session, TextArtifact
from inspector.core.readers.counted_reads import counted_json, deferred_text
from inspector.core.readers.dynamo_code import attach_dynamo_code
from inspector.core.readers.session_builder import build_trace_session
from inspector.core.readers.session_format import (FORMAT_VERSION, GRAPHS_DIR, MANIFEST, RESULTS, TORCH_RECORD,
                                                    TRACE_DIR, upgrade)
from inspector.core.readers.session_schema import MANIFEST as MANIFEST_SHAPE, RESULTS as RESULTS_SHAPE, validated
from inspector.core.readers.session_schema import TORCH_RECORD as TORCH_RECORD_SHAPE
from inspector.core.readers.trace_logs import find_trace_logs
from inspector.core.readers.input_kind import InputKind, Match


def open_capture(path: Path, progress: Callable[[int, int], None] | None = None) -> Session:
    """A session folder from `compile-inspector capture`: manifest, trace logs, measured results and
    structured graphs. Read as data only: nothing in it is imported or executed; a field of the
    wrong type is counted and left out; a newer format is refused."""
    problems = ReadProblems()
    manifest, results = read_run(path, problems)
    trace = path / TRACE_DIR
    logs = find_trace_logs(trace, depth=1, root=path, problems=problems) if trace.is_dir() else []
    session = build_trace_session(logs, path, kind="capture", progress=progress) if logs else Session(path, "capture")
    session.manifest, session.results = manifest, results
    session.summary_reusable = session.settled_by_manifest = True
    session.torch_record = read_torch_record(path, problems)
    session.load_problems.merge(problems)
    if session.torch_version is None and results is not None and results.environment is not None:
        session.torch_version = results.environment.torch
    for unit in session.units:
        name = f"{unit.compile_id.frame}_{unit.compile_id.compile}.json"
        if unit.compile_id.autograd is None and (path / GRAPHS_DIR / name).is_file():
            unit.artifacts.append(TextArtifact("structured_graph",
                                               deferred_text(path / GRAPHS_DIR / name, path, session.load_problems),
                                               "json"))
    attach_dynamo_code(session, path)
    return session


def read_run(path: Path, problems: ReadProblems) -> tuple[Manifest, RunResults | None]:
    """The session folder's manifest and results (None when it has none yet), the one way they are
    read: upgraded from the version that wrote them (its migrations see the documents as written),
    then each field checked against today's shape (one that does not fit is counted in `problems`
    and left out), then decoded into typed records."""
    results_file = path / RESULTS
    manifest = counted_json(path / MANIFEST, path, problems)
    results = counted_json(results_file, path, problems) if results_file.is_file() else None
    manifest, results = upgrade(manifest, results)
    manifest = validated(manifest or {}, MANIFEST_SHAPE, MANIFEST, problems) or {}
    results = validated(results, RESULTS_SHAPE, RESULTS, problems) if results is not None else None
    return (Manifest.from_state({**manifest, "format_version": FORMAT_VERSION}),
            RunResults.from_state(results) if results is not None else None)


def read_torch_record(path: Path, problems: ReadProblems) -> TorchRecord | None:
    """Torch's own record of the run (None when the capture wrote none: an older capture, or a run
    killed before its end), each field held to its shape like the results."""
    file = path / TORCH_RECORD
    if not file.is_file():
        return None
    document = validated(counted_json(file, path, problems), TORCH_RECORD_SHAPE, TORCH_RECORD, problems)
    return TorchRecord.from_state(document) if document is not None else None


def _match_capture(path: Path) -> Match | None:
    if path.is_file() and path.name == MANIFEST:  # a double-clicked manifest opens its session folder
        return Match(path.parent)
    return Match(path) if path.is_dir() and (path / MANIFEST).is_file() else None


CAPTURE = InputKind("capture", "a session folder saved by compile-inspector capture (with manifest.json)",
                    _match_capture, lambda source, progress: open_capture(source.path, progress),
                    patterns=(MANIFEST,))
