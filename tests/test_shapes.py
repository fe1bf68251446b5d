"""Dynamic shapes per compile unit against torch's own TORCH_LOGS=dynamic account of the same run:
each symbol with the input it stands for, each guard added, each dim specialised to a constant — at
the user's line — and a recompile explained by the line that made its dim static."""

from __future__ import annotations

import re

import pytest

from conftest import SCENARIOS, open_and_wait, run_traced
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers.session_loader import open_path

_SYMBOL = re.compile(r"\[(?P<id>\d+/\d+)\] create_symbol (?P<symbol>\w+) = (?P<value>\S+) for (?P<source>\S+) "
                     r".*# \S*?(?P<line>:\d+) in")
_GUARD = re.compile(r"\[(?P<id>\d+/\d+)\] eval (?P<expr>.+?) \[guard added\]")
_SPECIAL = re.compile(r"\[(?P<id>\d+/\d+)\] set_replacement (?P<symbol>\w+) = (?P<value>\S+) "
                      r"\(range_refined_to_singleton\)")


@pytest.fixture(scope="module")
def shapes_run(tmp_path_factory, inductor_cache):
    return run_traced(SCENARIOS / "shape_specialisation.py", tmp_path_factory.mktemp("shapes"), inductor_cache,
                      extra_env={"TORCH_LOGS": "recompiles,dynamic"})


def test_symbols_guards_and_specialisations_match_torchs_log(shapes_run):
    analysis = SessionAnalysis(open_path(shapes_run.trace_dir))
    ours = {str(unit.compile_id): events for unit, events in analysis.shapes}
    logs = shapes_run.torch_logs
    symbols = {(f"[{m['id']}]", m["symbol"], m["value"], m["source"], m["line"]) for m in _SYMBOL.finditer(logs)}
    assert symbols and symbols == {(cid, e.symbol, e.value, e.source, f":{e.user_line.line}")
                                   for cid, events in ours.items() for e in events if e.kind == "symbol"}
    guards = {(f"[{m['id']}]", m["expr"]) for m in _GUARD.finditer(logs)}
    assert guards and guards == {(cid, e.detail.split("  (")[0]) for cid, events in ours.items()
                                 for e in events if e.kind == "guard"}
    special = {(f"[{m['id']}]", m["symbol"], m["value"]) for m in _SPECIAL.finditer(logs)}
    found = [(cid, e) for cid, events in ours.items() for e in events if e.kind == "specialization"]
    assert special == {(cid, e.symbol, e.value) for cid, e in found} and len(found) == 1
    cid, event = found[0]
    assert event.shown_source == "x.shape[0]" and "if x.shape[0] == 4" in event.user_line.code


def test_the_recompile_is_explained_by_the_line_that_made_its_dim_static(shapes_run):
    analysis = SessionAnalysis(open_path(shapes_run.trace_dir))
    (group,) = analysis.recompile_groups
    assert group.specialised is not None and "if x.shape[0] == 4" in group.diagnosis
    assert "mark_dynamic" not in group.fix.split(":")[0] and "compares `x.shape[0]` with a constant" in group.fix
    text = render_text(summarize(analysis))
    assert "SPECIALISED x.shape[0]: s77 specialised to 4" in text


def test_the_shapes_tab_follows_the_selected_unit(shapes_run, qtbot, window):
    loaded = open_and_wait(qtbot, window, shapes_run.trace_dir)
    view = window.shapes_view
    first, second = loaded.session.units
    window.model.select_unit(first)
    kinds = [view.table.item(row, 0).text() for row in range(view.table.rowCount())]
    assert kinds[0] == "specialised" and kinds.count("guard") == 2 and "1 specialisation(s)" in view.note.text()
    window.model.select_unit(second)  # fresh content: [0/1] specialised nothing
    kinds = [view.table.item(row, 0).text() for row in range(view.table.rowCount())]
    assert "specialised" not in kinds and kinds.count("symbol") == 3 and view.note.text().startswith("[0/1]")
    located = []
    window.model.sigLocationRequested.connect(lambda file, line: located.append((file, line)))
    view.table.itemDoubleClicked.emit(view.table.item(0, 3))
    assert located and located[0][0].endswith("shape_specialisation.py")
