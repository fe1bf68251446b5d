"""Reads of the files inside an opened folder that count what they could not read instead of
raising: a session opens with what is readable and a count of what was not."""

from __future__ import annotations

from pathlib import Path

from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers.safe_files import MAX_JSON_BYTES, UnsafeFile, read_json, read_text


def deferred_text(file: Path, root: Path, problems: ReadProblems):
    """A deferred read of a text file of the opened folder ('' and counted when it may not be read)."""
    def read() -> str:
        try:
            return read_text(file, root=root)
        except OSError as error:
            problems.add("unsafe_file" if isinstance(error, UnsafeFile) else "unreadable_file", str(error))
            return ""
    return read


def counted_json(file: Path, root: Path, problems: ReadProblems):
    """The JSON document at `file`, or None with the reason counted in `problems`."""
    try:
        return read_json(file, MAX_JSON_BYTES, root)
    except OSError as error:
        problems.add("unsafe_file" if isinstance(error, UnsafeFile) else "unreadable_file", str(error))
    except ValueError as error:
        problems.add("bad_json", f"{file}: {error}")
    return None
