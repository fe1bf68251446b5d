"""What a new user sees in the Code and Graph tabs at 1280×720 and 1920×1080: kernel names get the room
the kernel table has (elided in the middle only where it is too narrow, whole in the tooltip), and a
pane with nothing in it says why and what to do, on the bundled run's log and real variants of it (cut
inside a compile, without provenance records)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QLabel, QStyle  # noqa: E402

from conftest import open_and_wait  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
LOG = BUNDLED / "trace" / "dedicated_log_torch_trace_example.log"  # the same run, without its profile


# --- what is on screen ----------------------------------------------------------------------------
def shown_text(table, row: int, column: int) -> str:
    """A cell's text as the table draws it: whole, or elided (as the style does) where it does not fit."""
    margin = table.style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, table) + 1
    room = table.columnWidth(column) - 2 * margin
    return table.fontMetrics().elidedText(table.item(row, column).text(), table.textElideMode(), room)


def hint_on_show(view) -> str:
    """The text shown over an item view's empty area ('' when none is on show)."""
    return " ".join(label.text() for label in view.viewport().findChildren(QLabel) if label.isVisible())


def lines_of_ink(widget) -> int:
    """How many lines of text the widget shows: bands of pixel rows that differ from its background."""
    image = widget.grab().toImage()
    background = image.pixelColor(image.width() - 3, image.height() - 3)
    inked = [any(image.pixelColor(x, y) != background for x in range(3, image.width() - 3))
             for y in range(3, image.height() - 3)]
    return sum(1 for above, row in zip([False, *inked], inked) if row and not above)


def click_row(qtbot, table, row: int) -> None:
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton,
                     pos=table.visualRect(table.model().index(row, 0)).center())


def code_tab(window):
    code = window.code_view
    window.tabs.setCurrentWidget(code)
    return code


def log_records(log: Path) -> list[str]:
    """The records of a TORCH_TRACE log, each its glog line and its payload lines."""
    return re.split(r"(?m)^(?=V\d{4} )", log.read_text())


# --- 1. kernel names get the room there is -----------------------------------------------------------
def columns_fill_the_table(table) -> bool:
    return sum(table.columnWidth(c) for c in range(table.columnCount())) == table.viewport().width()


def assert_only_the_name_takes_the_free_width(table) -> None:
    header = table.horizontalHeader()
    assert columns_fill_the_table(table), "no empty space beside the columns"
    for column in range(1, table.columnCount()):
        if table.isColumnHidden(column):  # a column with nothing to say for this log (Compile, on a CPU log)
            continue
        content = max(table.sizeHintForColumn(column), header.sectionSizeHint(column))
        assert table.columnWidth(column) == content, (table.horizontalHeaderItem(column).text(), content)


@pytest.mark.parametrize("size", [(1280, 720), (1920, 1080)])
def test_kernel_names_use_the_width_of_the_kernel_table(qtbot, window, no_slot_errors, size):
    window.resize(*size)
    open_and_wait(qtbot, window, BUNDLED)
    window.reset_layout()
    table = code_tab(window).outline
    qtbot.waitUntil(lambda: table.rowCount() > 0 and columns_fill_the_table(table), timeout=60_000)
    assert_only_the_name_takes_the_free_width(table)
    names = [table.item(row, 0).text() for row in range(table.rowCount())]
    assert names == ["cpp_fused_gt_relu_sum_0", "extern_kernels.addmm"]
    assert table.isColumnHidden(5), "a CPU log records no kernel compiles: no column of dashes"
    assert [shown_text(table, row, 0) for row in range(table.rowCount())] == names, "whole: there is room"
    assert all(name in table.item(row, 0).toolTip() for row, name in enumerate(names))


def test_a_kernel_name_is_elided_only_where_the_table_is_too_narrow_and_whole_in_its_tooltip(qtbot, window,
                                                                                             no_slot_errors):
    """The pane dragged narrow at 1280×720 (a log without a profile, whose time cells' tooltips say so):
    the name still takes what the other columns leave, elided at its start (the prefix every kernel of its
    kind shares; its ops and number stay), and its tooltip is the whole name."""
    window.resize(1280, 720)
    open_and_wait(qtbot, window, LOG)
    window.reset_layout()
    table = code_tab(window).outline
    split = table.parentWidget().parentWidget()  # the kernels and nodes beside the code
    qtbot.waitUntil(lambda: table.rowCount() > 0, timeout=60_000)
    split.setSizes([300, sum(split.sizes()) - 300])
    qtbot.waitUntil(lambda: table.width() == 300 and columns_fill_the_table(table), timeout=10_000)
    assert_only_the_name_takes_the_free_width(table)
    name = table.item(0, 0).text()
    shown = shown_text(table, 0, 0)
    assert name == "cpp_fused_gt_relu_sum_0" and shown != name and "…" in shown, shown
    assert shown.startswith("…") and shown.endswith("sum_0"), shown
    assert name in table.item(0, 0).toolTip()
    assert "no profile of this run" in table.item(0, 2).toolTip()


# --- 2. the Code tab's empty panes say why -----------------------------------------------------------
def test_code_panes_say_why_they_are_empty_and_what_to_do(qtbot, window, no_slot_errors):
    code = code_tab(window)
    assert "Session tree" in hint_on_show(code.outline)  # before any session
    assert code.editor.toPlainText() == "" and "Session tree" in code.editor.placeholderText()

    open_and_wait(qtbot, window, LOG)
    code_tab(window)  # the Summary comes first on opening
    qtbot.waitUntil(lambda: code.outline.rowCount() > 0, timeout=60_000)
    assert hint_on_show(code.outline) == ""
    assert hint_on_show(code.nodes).startswith("Select a kernel above to see the FX nodes")
    click_row(qtbot, code.outline, 0)
    qtbot.waitUntil(lambda: code.nodes.topLevelItemCount() > 0, timeout=60_000)
    assert hint_on_show(code.nodes) == ""

    code.texts.setCurrentIndex(code.texts.findText("guards"))
    qtbot.waitUntil(lambda: "TENSOR_MATCH" in code.editor.toPlainText(), timeout=60_000)
    assert code.outline.rowCount() == 0 and "choose an “output code” entry" in hint_on_show(code.outline)
    assert hint_on_show(code.nodes).startswith("Select a kernel above")

    window.model.select_unit(None)
    assert "Session tree" in hint_on_show(code.outline)
    assert code.texts.currentText() == "(no compile unit selected)"
    assert code.editor.toPlainText() == "" and "Session tree" in code.editor.placeholderText()


def test_a_unit_the_run_ended_inside_says_why_it_has_no_kernels(qtbot, window, no_slot_errors, tmp_path):
    """The log cut right after the last unit's Dynamo graph: that unit has its graph, no code."""
    records = log_records(LOG)
    last_graph = max(i for i, record in enumerate(records) if '{"dynamo_output_graph"' in record.split("\n", 1)[0])
    cut = tmp_path / "cut.log"
    cut.write_text("".join(records[:last_graph + 1]))
    loaded = open_and_wait(qtbot, window, cut)
    unit = loaded.session.units[-1]
    assert str(unit.compile_id) == "[2/1]" and not unit.output_code
    code = code_tab(window)
    tree = window.navigator
    tree.setCurrentItem(tree._items[unit])
    qtbot.waitUntil(lambda: code.texts.currentText() == "graph: dynamo" and code.editor.toPlainText() != "",
                    timeout=60_000)
    assert "the run ended inside this unit's compile" in hint_on_show(code.outline)


def test_a_kernel_without_provenance_says_how_to_get_its_nodes(qtbot, window, no_slot_errors, tmp_path):
    """The log without its provenance records: the C++ kernel's nodes are named nowhere, the library
    call's come from Inductor's comment."""
    bare = tmp_path / "no_provenance.log"
    bare.write_text("".join(record for record in log_records(LOG)
                            if "inductor_provenance_tracking_node_mappings" not in record))
    open_and_wait(qtbot, window, bare)
    code = code_tab(window)
    qtbot.waitUntil(lambda: code.outline.rowCount() == 2, timeout=60_000)
    click_row(qtbot, code.outline, 0)
    qtbot.waitUntil(lambda: "INDUCTOR_PROVENANCE=1" in hint_on_show(code.nodes), timeout=60_000)
    assert hint_on_show(code.nodes).startswith("Nothing in the log links cpp_fused_gt_relu_sum_0 to FX nodes")
    assert [code.outline.item(row, 4).text() for row in range(2)] == ["—", "comments"]  # how the nodes are known
    click_row(qtbot, code.outline, 1)
    qtbot.waitUntil(lambda: code.nodes.topLevelItemCount() > 0, timeout=60_000)
    assert hint_on_show(code.nodes) == ""


# --- 3. the Graph tab's node details say what a click shows -----------------------------------------
def test_node_details_say_what_a_click_shows_until_one_and_again_for_another_unit(qtbot, window, no_slot_errors):
    window.resize(1280, 720)
    loaded = open_and_wait(qtbot, window, BUNDLED)
    window.reset_layout()
    graph = window.graph_view
    window.tabs.setCurrentWidget(graph)
    qtbot.waitUntil(lambda: graph.layer is not None, timeout=60_000)
    details = graph.details
    qtbot.waitUntil(lambda: lines_of_ink(details) >= 3, timeout=10_000)  # the hint, wrapped, not cut to a line
    assert details.toPlainText() == ""

    view = graph.view
    point = view.mapFromScene(graph.layer.rect_of("sum_1").center())
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=point)
    assert details.toPlainText().startswith("sum_1")

    tree = window.navigator
    tree.setCurrentItem(tree._items[loaded.session.units[2]])
    qtbot.waitUntil(lambda: graph.unit is loaded.session.units[2] and details.toPlainText() == "", timeout=60_000)
    qtbot.waitUntil(lambda: lines_of_ink(details) >= 3, timeout=10_000)

