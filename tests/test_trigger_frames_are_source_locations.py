"""A line of code has one type, `SourceLocation`: a compile's trigger stack in the summary (`units[].compile
.trigger`) is the session's own frames, written by them and read back into them, so the compile page, the
stack trie and a break's location can never hold two shapes of one frame. Every field is written, null
where the log does not say (scripts read `function` and `code` on every frame)."""

from __future__ import annotations

import json

from conftest import ROOT
from inspector.core.analysis.compile_detail import compile_detail, trigger_stack
from inspector.core.model.source_location import SourceLocation
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_model import Summary
from inspector.core.readers.session_loader import open_path

BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def test_a_compiles_trigger_stack_is_the_sessions_own_frames_in_the_summary_and_back():
    session = open_path(BUNDLED)
    unit = next(unit for unit in session.units if trigger_stack(unit))
    page = compile_detail(unit)
    assert all(shown is frame for shown, frame in zip(page.trigger, trigger_stack(unit), strict=True))

    doc = json.loads(json.dumps(summarize(session)))  # as --json writes it
    written = [frame for row in doc["units"] for frame in row["compile"]["trigger"]]
    assert written and all(list(frame) == ["file", "line", "function", "code"] for frame in written)
    assert any(None in frame.values() for frame in written)  # an unknown field is written as null, not left out
    read_back = [frame for row in Summary.from_state(doc).units for frame in row.compile.trigger]
    assert all(type(frame) is SourceLocation for frame in read_back)
    assert [frame.get_state() for frame in read_back] == written
