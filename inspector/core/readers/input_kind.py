"""The type every reader module exports to say what kind of input it opens (after Netron's model
factories): how to recognise a path (`match`), how to open it (`open`), the names of the files it
opens (`patterns`, which the app's Open dialog lists), and what it offers the
front ends once detected, so that no code outside the registry (readers/sources.py) asks which kind
it holds. It lives apart from the registry so a reader module can define its kind without importing
the registry, which imports every reader."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.model.read_problems import ReadProblems

Progress = Callable[[int, int], None] | None


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
    # the names of the files it opens, as globs (the app's Open dialog lists them); a folder kind has none
    patterns: tuple[str, ...] = ()
    opens_session: bool = True  # False: another document than a torch.compile Session (an XLA dump)
    elsewhere: str = ""  # for kinds that are no Session: where the app and the CLI show them
    # What follows routes the work after detection, so no code outside the registry asks which kind
    # it holds: the app's tab that shows it ("session", "xla", "gpu" or "modes"), whether a first
    # look at its start is worth showing while the whole is read, and whether it is one log per rank
    # (indexed first for the rank overview, and read per worker by `summary --dask`). What a kind
    # that is no Session renders to (its summary document and text) is the outputs layer's half of
    # the registry: core/outputs/kind_documents.py, as readers may not import the renderers.
    shown_in: str = "session"
    shown_as: str = ""  # the page of that tab that shows it, where the tab has several: "triton", "profile", "ranks"
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

    def open(self, progress: Progress = None):
        """The Session (or, for kinds that are no Session, their document) this source holds."""
        return self.kind.open(self, progress)


def file_kind(name: str, expected: str, looks_like: Callable[[Path], bool], open_: Callable[["Source", Progress], Any],
              **offers) -> InputKind:
    """A kind that is one file, recognised by `looks_like` (its first bytes)."""
    return InputKind(name, expected, lambda path: Match(path, (path,)) if looks_like(path) else None, open_, **offers)
