"""The one way in: the registry of input kinds (after Netron's model factories). Each reader module
exports its kind (`InputKind`, readers/input_kind.py: how to recognise a path, how to open it, and
what it offers: the tab that shows it, whether it is previewed, whether it is one log per rank);
`KINDS` lists them in the order a path is tried. `detect(path)` decides the kind once, at the edge
(the app's open, the CLI's arguments), and returns a typed `Source` that everything after takes;
`Source.open()` reads it. A new input kind is one module exporting its kind and one entry in
`KINDS` (and, for a kind that is no Session, one in core/outputs/kind_documents.py)."""

from __future__ import annotations

from pathlib import Path

from inspector.core.model.read_problems import ReadProblems
from inspector.core.model.session import Session
from inspector.core.readers.capture_session import CAPTURE
from inspector.core.readers.compile_debug import COMPILE_DEBUG
from inspector.core.readers.input_kind import InputKind, Match, Progress, Source
from inspector.core.readers.mode_folders import MODES
from inspector.core.readers.profiler_trace import PROFILER_TRACE, PROFILER_TRACES
from inspector.core.readers.recorder_log import RECORDER_LOG
from inspector.core.readers.safe_files import check_regular
from inspector.core.readers.session_bundle import BUNDLE_SUFFIX, extract_bundle, remove_extracted
from inspector.core.readers.trace_log_kinds import RANK_LOGS, TRACE_LOG
from inspector.core.readers.trace_logs import find_trace_logs
from inspector.core.readers.tritonparse_trace import TRITON_TRACE
from inspector.core.readers.xla_dump import XLA_DUMP

__all__ = ["BUNDLE", "CAPTURE", "COMPILE_DEBUG", "KINDS", "MODES", "PROFILER_TRACE", "PROFILER_TRACES", "RANK_LOGS",
           "RECORDER_LOG", "TRACE_LOG", "TRITON_TRACE", "XLA_DUMP", "InputKind", "Match", "NotCompileOutput",
           "Progress", "Source", "detect", "detect_as", "expected"]


class NotCompileOutput(ValueError):
    """The path exists but holds nothing any registered kind opens."""


def _match_bundle(path: Path) -> Match | None:
    return Match(path) if path.is_file() and path.suffix == BUNDLE_SUFFIX else None


def _open_bundle(source: Source, progress: Progress) -> Session:
    """A bundle holds a session folder: it opens as whatever the registry detects in it (so its kind
    is the registry's own, defined here)."""
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


BUNDLE = InputKind("bundle", "a session bundle (.tcinspect)", _match_bundle, _open_bundle,
                   patterns=(f"*{BUNDLE_SUFFIX}",))

# The registry, in the order a path is tried: the first kind that matches opens it (a mode comparison
# before a folder of logs: its modes' logs are no ranks; a folder of logs before one of profiler traces).
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


def detect_as(path: str | Path, kind: InputKind) -> Source:
    """The input at `path` as the one kind an option takes (`summary --triton TRACE`), decided by that
    kind's own `match`; NotCompileOutput naming the kind when it is not one."""
    path = Path(path)
    found = kind.match(path)
    if found is None:
        raise NotCompileOutput(f"{path} is not {kind.expected}")
    return Source(kind, found.path, found.files, found.detail, found.skipped)


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

