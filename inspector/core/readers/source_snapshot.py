"""The copies of the user's files a capture kept (sources/, written by capture/source_snapshot.py), and
the Source view's read of a file: the copy where the session has one, said to differ from the file on
disk when it does; else the file on disk, said to be read from disk now. Copies are read as text only."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers.counted_reads import counted_json
from inspector.core.readers.safe_files import MAX_SOURCE_BYTES, read_source, read_text
from inspector.core.readers.session_format import SOURCES_DIR

INDEX = "index.json"
_COPY_NAME = re.compile(r"^[0-9a-f]{64}\.txt$")
CAPTURED = "captured"  # the text shown is the capture's copy
ON_DISK = "disk"  # the text shown is the file on disk


def captured_sources(session_folder: Path | None, problems: ReadProblems | None = None) -> dict[str, Path]:
    """Each file the capture kept, as its stacks name it → its copy in the session folder."""
    if session_folder is None or not (session_folder / SOURCES_DIR / INDEX).is_file():
        return {}
    problems = problems if problems is not None else ReadProblems()
    index = counted_json(session_folder / SOURCES_DIR / INDEX, session_folder, problems)
    if not isinstance(index, dict):
        return {}
    copies = {}
    for name, entry in index.items():
        copy = entry.get("file") if isinstance(entry, dict) else None
        if isinstance(name, str) and isinstance(copy, str) and _COPY_NAME.match(copy):
            copies[name] = session_folder / SOURCES_DIR / copy
    return copies


@dataclass(frozen=True)
class SourceText:
    """What the Source view shows of one file: the text (None when neither copy nor file can be read),
    which of the two it is, the other one's text where both exist and differ, and a line saying so."""

    text: str | None
    shown: str  # CAPTURED | ON_DISK
    note: str
    other: str | None = None  # the file on disk when the captured copy is shown and they differ, or the reverse
    why_not: str | None = None

    @property
    def changed(self) -> bool:
        return self.other is not None


def source_text(file: str, folder: Path | None, copies: dict[str, Path], prefer: str = CAPTURED) -> SourceText:
    """`file` as the session saw it. With a copy: the copy (or the file on disk, `prefer=ON_DISK`),
    noting whether the file on disk differs. Without one: the file on disk, noting that it is read now."""
    copy = copies.get(file)
    disk, why_not = read_source(file, folder)
    if copy is None:
        note = ("Read from disk now: this session keeps no copy of the file (a capture keeps one), so the "
                "markers assume it has not changed since the run.")
        return SourceText(disk, ON_DISK, note if disk is not None else "", why_not=why_not)
    try:
        captured = read_text(copy, MAX_SOURCE_BYTES)
    except OSError as error:
        return SourceText(disk, ON_DISK, f"The captured copy cannot be read ({error}); read from disk now.",
                          why_not=why_not)
    if disk == captured:
        return SourceText(captured, CAPTURED, "As captured: the file on disk is the same.")
    gone = disk is None
    if prefer == ON_DISK and not gone:
        return SourceText(disk, ON_DISK, "The file on disk, CHANGED since the capture: the markers are for the "
                          "captured lines and may not match these.", other=captured)
    note = ("As captured: the file is not on this machine now." if gone else
            "As captured: the file on disk has CHANGED since the capture (markers are on the captured lines).")
    return SourceText(captured, CAPTURED, note, other=disk)
