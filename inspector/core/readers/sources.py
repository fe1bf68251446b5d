"""The one way in: every kind of input registers how to recognise a path and how to open it (after
Netron's model factories). `detect(path)` decides the kind once and returns a typed `Source` — the
app, the CLI, bundles and the rank overview all take that Source — and `Source.open()` reads it. A new
input kind is one module with a `match` and an `open`, and one line in `KINDS`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.model.read_problems import ReadProblems
from inspector.core.model.session import Session
from inspector.core.readers.capture_session import open_capture
from inspector.core.readers.compile_debug import debug_runs, open_compile_debug
from inspector.core.readers.mode_folders import mode_folders
from inspector.core.readers.safe_files import check_regular
from inspector.core.readers.session_builder import build_trace_session
from inspector.core.readers.session_bundle import BUNDLE_SUFFIX, extract_bundle, remove_extracted
from inspector.core.readers.session_format import MANIFEST
from inspector.core.readers.trace_logs import find_trace_logs, looks_like_trace_log
from inspector.core.readers.profiler_trace import RankTraces, looks_like_profiler_trace, read_profiler_trace, traces_in
from inspector.core.readers.recorder_log import looks_like_recorder_file, open_recorder_log
from inspector.core.readers.tritonparse_trace import looks_like_tritonparse, read_tritonparse
from inspector.core.readers.xla_dump import looks_like_xla_dump, open_xla_dump

Progress = Callable[[int, int], None] | None


class NotCompileOutput(ValueError):
    """The path exists but holds nothing any registered kind opens."""


@dataclass(frozen=True)
class Match:
    """What a kind's `match` found at a path: the path to open (a manifest.json stands for its
    folder), the files it will read, and what it left out and why."""

    path: Path
    files: tuple[Path, ...] = ()
    detail: Any = None  # kind-specific, e.g. the debug run folders
    skipped: ReadProblems = field(default_factory=ReadProblems, compare=False)


@dataclass(frozen=True)
class InputKind:
    name: str
    expected: str  # how the message listing what can be opened names it
    match: Callable[[Path], Match | None]
    open: Callable[["Source", Progress], Any]
    opens_session: bool = True  # False: another document than a torch.compile Session (an XLA dump)
    elsewhere: str = ""  # for kinds that are no Session: where the app and the CLI show them
    # What follows routes the work after detection, so no code outside the registry asks which kind
    # it holds: the app's tab that shows it ("session", "xla", "gpu" or "modes"), whether a first
    # look at its start is worth showing while the whole is read, and whether it is one log per rank
    # (indexed first for the rank overview).
    shown_in: str = "session"
    previewable: bool = False
    per_rank: bool = False


@dataclass(frozen=True)
class Source:
    """A detected input: its kind and what the kind found there."""

    kind: InputKind
    path: Path
    files: tuple[Path, ...] = ()
    detail: Any = None
    skipped: ReadProblems = field(default_factory=ReadProblems, compare=False)

    @property
    def is_rank_logs(self) -> bool:
        """A folder of TORCH_TRACE logs, one per rank: the app indexes these first for the overview."""
        return self.kind.per_rank

    def open(self, progress: Progress = None):
        """The Session (or, for kinds that are no Session, their document) this source holds."""
        return self.kind.open(self, progress)


def _match_bundle(path: Path) -> Match | None:
    return Match(path) if path.is_file() and path.suffix == BUNDLE_SUFFIX else None


def _open_bundle(source: Source, progress: Progress) -> Session:
    folder = extract_bundle(source.path)
    try:
        session = detect(folder).open(progress)
        if not isinstance(session, Session):
            raise NotCompileOutput(f"{source.path} holds no torch.compile session")
    except BaseException:
        remove_extracted(folder)
        raise
    session.source, session.extracted_to = source.path, folder
    return session


def _match_capture(path: Path) -> Match | None:
    if path.is_file() and path.name == MANIFEST:  # a double-clicked manifest opens its session folder
        return Match(path.parent)
    return Match(path) if path.is_dir() and (path / MANIFEST).is_file() else None


def _match_trace_log(path: Path) -> Match | None:
    return Match(path, (path,)) if path.is_file() and looks_like_trace_log(path) else None


def _match_compile_debug(path: Path) -> Match | None:
    runs = debug_runs(path) if path.is_dir() else []
    return Match(path, detail=tuple(runs)) if runs else None


def _match_rank_logs(path: Path) -> Match | None:
    if not path.is_dir():
        return None
    skipped = ReadProblems()
    logs = find_trace_logs(path, root=path, problems=skipped)
    return Match(path, tuple(logs), skipped=skipped) if logs else None


def _open_logs(source: Source, progress: Progress) -> Session:
    session = build_trace_session(list(source.files), source.path, progress=progress)
    session.load_problems.merge(source.skipped)
    return session


def _match_rank_traces(path: Path) -> Match | None:
    """A folder of two or more profiler traces (a folder of TORCH_TRACE logs is matched before it)."""
    traces = traces_in(path) if path.is_dir() else []
    return Match(path, tuple(traces)) if len(traces) >= 2 else None


def _match_modes(path: Path) -> Match | None:
    found = mode_folders(path)
    return Match(path, tuple(found.cold.values()) + tuple(found.warm.values()), detail=found) if found else None


def _match_xla_dump(path: Path) -> Match | None:
    return Match(path) if looks_like_xla_dump(path) else None


BUNDLE = InputKind("bundle", "a session bundle (.tcinspect)", _match_bundle, _open_bundle)
CAPTURE = InputKind("capture", "a session folder saved by compile-inspector capture (with manifest.json)",
                    _match_capture, lambda source, progress: open_capture(source.path, progress))
TRACE_LOG = InputKind("trace_log", "a TORCH_TRACE log (dedicated_log_torch_trace_*.log)", _match_trace_log, _open_logs,
                      previewable=True)
COMPILE_DEBUG = InputKind("compile_debug", "a TORCH_COMPILE_DEBUG folder (torch_compile_debug/ or run_*/ with torchinductor/)",
                          _match_compile_debug, lambda source, progress: open_compile_debug(source.path, list(source.detail)))
RANK_LOGS = InputKind("rank_logs", "a folder holding TORCH_TRACE logs (one per rank)", _match_rank_logs, _open_logs,
                      per_rank=True)
XLA_DUMP = InputKind("xla_dump", "an XLA dump (--xla_dump_to with --xla_dump_hlo_as_text)", _match_xla_dump,
                     lambda source, progress: open_xla_dump(source.path), opens_session=False, shown_in="xla",
                     elsewhere="`compile-inspector summary` and `diff` read it, and the app opens it in the XLA tab")

GPU_FILES_ELSEWHERE = "`compile-inspector summary` reads it (text or --json), and the app opens it in the GPU tab"
TRITON_TRACE = InputKind("tritonparse_trace", "a tritonparse trace (dedicated_log_triton_trace_*.ndjson[.gz])",
                         lambda path: Match(path, (path,)) if looks_like_tritonparse(path) else None,
                         lambda source, progress: read_tritonparse(source.path, progress), opens_session=False,
                         shown_in="gpu",
                         elsewhere=GPU_FILES_ELSEWHERE)
PROFILER_TRACE = InputKind("profiler_trace", "a torch.profiler trace (*.pt.trace.json[.gz])",
                           lambda path: Match(path, (path,)) if looks_like_profiler_trace(path) else None,
                           lambda source, progress: read_profiler_trace(source.path, progress=progress),
                           opens_session=False, shown_in="gpu", elsewhere=GPU_FILES_ELSEWHERE)

PROFILER_TRACES = InputKind("profiler_traces", "a folder of torch.profiler traces (one per rank)",
                            _match_rank_traces,
                            lambda source, progress: RankTraces(source.path, list(source.files), progress=progress),
                            opens_session=False, shown_in="gpu", elsewhere=GPU_FILES_ELSEWHERE)

RECORDER_LOG = InputKind("recorder_log", "a production recorder's file (inspector.capture.recorder, *.jsonl)",
                         lambda path: Match(path, (path,)) if looks_like_recorder_file(path) else None,
                         lambda source, progress: open_recorder_log(source.path))

MODES = InputKind("modes", "a mode comparison's folder (compile-inspector modes -o DIR: one session per mode)",
                  _match_modes, lambda source, progress: source.detail, opens_session=False, shown_in="modes",
                  elsewhere="`compile-inspector summary` compares its modes, and the app opens it in the Modes tab")

# The registry, in the order a path is tried: the first kind that matches opens it (a mode comparison
# before a folder of logs: its modes' logs are no ranks).
KINDS: list[InputKind] = [BUNDLE, CAPTURE, TRACE_LOG, COMPILE_DEBUG, MODES, RANK_LOGS, XLA_DUMP, TRITON_TRACE,
                          PROFILER_TRACE, PROFILER_TRACES, RECORDER_LOG]


def expected() -> str:
    """What can be opened, for messages about a path that is none of it."""
    names = [kind.expected for kind in KINDS]
    return ", ".join(names[:-1]) + ", or " + names[-1]


def detect(path: str | Path) -> Source:
    """The kind of input at `path`, decided once. Raises FileNotFoundError or NotCompileOutput with
    a message naming what was expected."""
    try:
        path = Path(path).expanduser()
    except RuntimeError:  # `~someone/…` of a user this machine does not know
        raise FileNotFoundError(f"{path} does not exist: no home folder is known for {str(path).split('/')[0]}. "
                                f"Expected {expected()}.") from None
    if not path.exists():
        raise FileNotFoundError(f"{path} does not exist. Expected {expected()}.")
    if not path.is_dir():
        try:
            check_regular(path)
        except OSError as error:
            raise NotCompileOutput(f"{error}. Expected {expected()}.") from None
    for kind in KINDS:
        found = kind.match(path)
        if found is not None:
            return Source(kind, found.path, found.files, found.detail, found.skipped)
    raise NotCompileOutput(_nothing_found(path))


def _nothing_found(path: Path) -> str:
    if path.is_file():
        if path.stat().st_size == 0:
            return f"{path} is empty. Expected {expected()}."
        return (f"{path} is not a TORCH_TRACE log: none of its first lines looks like "
                f"'V1202 11:01:22.649000 12469 file.py:123] {{...}}'. Expected {expected()}.")
    refused = ReadProblems()
    find_trace_logs(path, root=path, problems=refused)
    left_out = "; ".join(refused.examples.get("unsafe_file", []))
    return (f"{path} holds no torch.compile output{f' (left out: {left_out})' if left_out else ''}. "
            f"Expected {expected()}.")

