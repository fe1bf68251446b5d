"""The capture's record of the code Dynamo wrote (dynamo_code/, written by capture/dynamo_code.py):
each compiled frame's and resume function's original and transformed bytecode, and both as Python
where depyf was importable in the user's Python. Read as text only; each entry lands on its unit as
artifacts named the way torch names a resume function's (`<function>_MODIFIED_BYTECODE`)."""

from __future__ import annotations

from pathlib import Path

from inspector.core.model.compile_id import CompileId
from inspector.core.model.session import Session, TextArtifact
from inspector.core.readers.counted_reads import counted_json, deferred_text
from inspector.core.readers.session_format import DYNAMO_CODE_DIR

INDEX = "index.json"
KINDS = ("ORIGINAL_SOURCE", "MODIFIED_SOURCE", "ORIGINAL_BYTECODE", "MODIFIED_BYTECODE")
NOT_DECOMPILED = "NOT_DECOMPILED"  # the artifact saying why a capture has bytecode but no Python source


def attach_dynamo_code(session: Session, path: Path) -> None:
    """Each recorded code pair on the unit of its compile id; an entry of the wrong shape, or naming a
    file outside the folder, is counted and skipped."""
    folder = path / DYNAMO_CODE_DIR
    if not (folder / INDEX).is_file():
        return
    problems = session.load_problems
    index = counted_json(folder / INDEX, path, problems)
    if not isinstance(index, dict) or not isinstance(index.get("entries"), list):
        if index is not None:
            problems.add("bad_json", f"{folder / INDEX}: not a dynamo_code index")
        return
    decompiler = index.get("decompiler") if isinstance(index.get("decompiler"), dict) else {}
    why_not = str(decompiler.get("reason") or "") if decompiler.get("available") is False else ""
    units = {unit.compile_id.unit_key: unit for unit in session.units if unit.rank in (None, 0)}
    for entry in index["entries"]:
        unit = units.get(_unit_key(entry.get("compile_id"))) if isinstance(entry, dict) else None
        files = entry.get("files") if isinstance(entry, dict) else None
        function = entry.get("function") if isinstance(entry, dict) else None
        if unit is None or not isinstance(files, dict) or not isinstance(function, str):
            problems.add("bad_record", f"{folder / INDEX}: a dynamo_code entry names no known compile")
            continue
        logged = {artifact.name for artifact in unit.artifacts}
        for kind in KINDS:
            name = files.get(kind)
            if not isinstance(name, str) or not name or Path(name).name != name or name.startswith("."):
                continue
            if f"{function}_{kind}" in logged:  # torch's log has it already (a resume function's bytecode)
                continue
            unit.artifacts.append(TextArtifact(f"{function}_{kind}", deferred_text(folder / name, path, problems)))
        if why_not:
            unit.artifacts.append(TextArtifact(f"{function}_{NOT_DECOMPILED}", lambda text=why_not: text))


def _unit_key(value) -> tuple | None:
    """"0/1_2" as the capture wrote it → the key of its unit (every attempt of a compile is one unit)."""
    parsed = CompileId.parse(value) if isinstance(value, str) else None
    return parsed.unit_key if parsed is not None else None
