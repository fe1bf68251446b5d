"""What new-user walks through every tab found, each as the user now sees it: the
Ranks heading counts only findings and says who agrees, a one-process run's findings box says why it is empty,
a symbol torch logged twice is one symbol, the Code tab tells repeated records apart and its columns
say what they measure, and opening a trace says so in the status bar."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from conftest import CORPUS, open_and_wait  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
TRITONPARSE = CORPUS.parent / "tritonparse-traces" / "complex_kernels_mapped.ndjson.gz"


def _unit(window, title: str):
    unit = next(u for u in window.model.loaded.session.units if str(u.compile_id) == title)
    window.model.select_unit(unit)
    return unit


def test_the_ranks_heading_counts_findings_and_a_single_process_box_says_why_it_is_empty(qtbot, window, no_slot_errors):
    if not (CORPUS / "multi_rank_logs").is_dir():
        pytest.skip("the public multi-rank corpus is not here")
    open_and_wait(qtbot, window, CORPUS / "multi_rank_logs")
    view = window.ranks_view
    rows = [view.findings.item(i).text() for i in range(view.findings.count())]
    assert view.heading.text() == f"4 ranks; {len(rows)} divergence finding(s); ranks 0, 2 agree."
    assert all(row.endswith("]") for row in rows), rows  # each row is a finding with its kind
    tree = window.session_dock.widget()
    ranks = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    assert len(ranks) == 4 and all(item.text(0) in item.toolTip(0) for item in ranks)  # whole where it is cut
    open_and_wait(qtbot, window, BUNDLED)
    assert view.heading.text() == "A single-process run: nothing to compare across ranks."
    assert [view.findings.item(i).text() for i in range(view.findings.count())] == [
        "One process wrote this run: there is no other rank to compare with."]


def test_a_symbol_logged_twice_is_one_and_the_code_tab_tells_repeated_records_apart(qtbot, window, no_slot_errors):
    open_and_wait(qtbot, window, BUNDLED)
    _unit(window, "[1/1]")  # torch logged create_symbol for h.shape[0] twice here
    shapes = window.shapes_view
    qtbot.waitUntil(lambda: "[1/1]" in shapes.note.text(), timeout=10_000)
    assert ": 1 symbol(s)," in shapes.note.text()
    code = window.code_view
    names = [code.texts.itemText(i) for i in range(code.texts.count())]
    assert "create_symbol" in names and "create_symbol #2" in names
    header = code.outline.horizontalHeaderItem
    assert "Time per launch" in header(2).toolTip() and "this unit's launches" in header(2).toolTip()
    assert "Share of this unit's profiled time" in header(3).toolTip() and "at most 100%" in header(3).toolTip()


def test_opening_a_trace_says_so_in_the_status_bar(qtbot, window, no_slot_errors):
    if not TRITONPARSE.is_file():
        pytest.skip("the tritonparse corpus is not here")
    open_and_wait(qtbot, window, BUNDLED)
    window.open_path(TRITONPARSE)
    qtbot.waitUntil(lambda: window.status.text().startswith(f"Opened {TRITONPARSE} in "), timeout=60_000)
    assert window.status.text().endswith("(the GPU tab)") and window.tabs.currentWidget() is window.gpu_view


def test_the_break_maps_tooltip_says_why_a_unit_shows_its_compile_time(qtbot, window, no_slot_errors):
    """[0/0] was replaced by its recompile before the profiled calls: its box is sized by compile time
    because it did not run then (the tip said 'run time not measured' beside a measured run); a
    resumed function is named once, with Dynamo's name in brackets."""
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QToolTip

    open_and_wait(qtbot, window, BUNDLED)
    graph = window.graph_view
    window.tabs.setCurrentWidget(graph)
    window.resize(1280, 720)
    break_map = graph.break_map
    qtbot.waitUntil(lambda: bool(break_map.hit_boxes), timeout=10_000)

    def tip_of(compile_id: str) -> str:
        break_map.repaint()
        rect = next(rect for rect, part in break_map.hit_boxes
                    if hasattr(part, "unit") and str(part.unit.compile_id) == compile_id)
        QToolTip.hideText()
        QTest.mouseMove(break_map, rect.center().toPoint())
        qtbot.waitUntil(lambda: compile_id in QToolTip.text(), timeout=10_000)
        return QToolTip.text()

    assert "compile time (it did not run in the profiled calls)" in tip_of("[0/0]")
    resumed = tip_of("[2/0]")
    assert "forward (resumed at line 21) (Dynamo: torch_dynamo_resume_in_forward_at_21)" in resumed
    assert resumed.count("[2/0]") == 1 and "run time per call" in tip_of("[2/1]")


def test_a_fourth_walks_findings_each_as_the_user_now_sees_it(qtbot, window, no_slot_errors):
    """Before anything opens Problems says why it is empty; hints name the File menu's real item; a
    kernel whose profiled time is shared by several units is marked Σ in the Code tab; Shapes names
    a resumed unit as the session tree does; in a distributed run the compile-time bars name ranks."""
    from inspector.core.analysis.kernel_plots import compile_time_per_unit
    from inspector.core.readers.session_loader import open_path
    from inspector.gui.views.qt_gpu_view import EMPTY
    from inspector.gui.views.qt_problems import NOTHING_OPEN

    problems = window.problems_view
    assert problems.topLevelItem(0).text(0) == NOTHING_OPEN
    menu_items = [action.text().replace("&", "") for action in window.menuBar().actions()[0].menu().actions()]
    assert "Open Log, Bundle or Folder…" in menu_items
    assert ("File ▸ Open Log, Bundle or Folder…" in EMPTY
            and "File ▸ Open Log, Bundle or Folder…" in window.xla_view.header.text())
    open_and_wait(qtbot, window, BUNDLED)
    assert problems.topLevelItem(0).text(0) != NOTHING_OPEN
    _unit(window, "[0/0]")
    code = window.code_view
    qtbot.waitUntil(lambda: code.outline.rowCount() > 0, timeout=10_000)
    addmm = next(row for row in range(code.outline.rowCount())
                 if code.outline.item(row, 0).text() == "extern_kernels.addmm")
    # [0/0] never ran in the profile: its addmm is not given [0/1]'s and [2/1]'s addmm time (kernel time by launch)
    assert code.outline.item(addmm, 2).text() == "not run"
    assert "not profiled" in code.outline.item(addmm, 2).toolTip()
    _unit(window, "[2/1]")
    shapes = window.shapes_view
    qtbot.waitUntil(lambda: shapes.note.text().startswith("[2/1] forward (resumed at line 21)"), timeout=10_000)
    if (CORPUS / "multi_rank_logs").is_dir():
        labels = [label for label, _seconds in compile_time_per_unit(open_path(CORPUS / "multi_rank_logs"))]
        assert labels and all(label.startswith("rank ") for label in labels)
