"""The two kinds that are TORCH_TRACE logs as torch wrote them: one log, or a folder holding logs
one per rank. Both are read by the same session builder; they differ in how they are found and in
what the front ends do first (a log's start is previewed; a folder's ranks are overviewed first)."""

from __future__ import annotations

from pathlib import Path

from inspector.core.model.read_problems import ReadProblems
from inspector.core.model.session import Session
from inspector.core.readers.input_kind import InputKind, Match, Progress, Source
from inspector.core.readers.session_builder import build_trace_session
from inspector.core.readers.trace_logs import find_trace_logs, looks_like_trace_log


def _match_trace_log(path: Path) -> Match | None:
    return Match(path, (path,)) if path.is_file() and looks_like_trace_log(path) else None


def _match_rank_logs(path: Path) -> Match | None:
    if not path.is_dir():
        return None
    skipped = ReadProblems()
    logs = find_trace_logs(path, root=path, problems=skipped)
    return Match(path, tuple(logs), skipped=skipped) if logs else None


def _open_logs(source: Source, progress: Progress) -> Session:
    session = build_trace_session(list(source.files), source.path, progress=progress)
    session.load_problems.merge(source.skipped)
    session.summary_reusable = True  # its summary is kept, keyed by its logs
    return session


TRACE_LOG = InputKind("trace_log", "a TORCH_TRACE log (dedicated_log_torch_trace_*.log)", _match_trace_log, _open_logs,
                      patterns=("*.log", "*.txt"), previewable=True)
RANK_LOGS = InputKind("rank_logs", "a folder holding TORCH_TRACE logs (one per rank)", _match_rank_logs, _open_logs,
                      per_rank=True)
