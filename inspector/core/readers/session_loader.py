"""Open whatever the user points at — a TORCH_TRACE log, a folder of logs (one per rank), a
TORCH_COMPILE_DEBUG folder, a capture's session folder or bundle — as a Session, through the source
registry (readers/sources.py), and let go of what opening it made."""

from __future__ import annotations

from pathlib import Path

from inspector.core.model.session import Session
from inspector.core.readers.mode_folders import ModeSession
from inspector.core.readers.session_bundle import remove_extracted
from inspector.core.readers.sources import NotCompileOutput, Progress, Source, detect


def open_session(source: Source, progress: Progress = None) -> Session:
    """The torch.compile Session a detected `source` holds (detected once, at the edge: the CLI's
    arguments, the app's open); `progress(bytes_read, bytes_total)` follows the reading of its logs.
    NotCompileOutput when its kind opens as no Session, saying where it is shown instead."""
    if not source.kind.opens_session:
        raise NotCompileOutput(f"{source.path} is {source.kind.expected}, not torch.compile output: "
                               f"{source.kind.elsewhere}.")
    return source.open(progress)


def open_path(path: str | Path, progress: Progress = None) -> Session:
    """The Session at `path`, detected here: for a script or test that holds a path and wants its
    session, where detecting it first would only be ceremony."""
    return open_session(detect(path), progress)


def detect_modes(folders: dict[str, Path]) -> dict[str, ModeSession]:
    """Each mode's session folder detected, where the folders come in (the CLI's `modes` and
    `summary`, the app's Compare Modes and its open), so the comparison detects nothing; a folder
    where nothing opens keeps why."""
    detected = {}
    for mode, folder in folders.items():
        try:
            detected[mode] = ModeSession(folder, detect(folder))
        except (OSError, ValueError) as error:
            detected[mode] = ModeSession(folder, None, str(error))
    return detected


def close_session(session: Session) -> None:
    """Let go of what opening `session` made: the folder a bundle was extracted into."""
    if session.extracted_to is not None:
        remove_extracted(session.extracted_to)
        session.extracted_to = None
