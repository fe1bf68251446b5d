"""The Problems pane and dashboard with explained breaks, grouped recompiles and call-time shares:
real sessions in the real window, hovered and clicked (pytest-qt fails the test on any exception in
a slot)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from conftest import MULTI_RANK, events_delivered, open_and_wait  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def top_items(tree):
    return [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]


def open_row(qtbot, tree, item) -> None:
    """Open a top-level row by a click on its arrow, as a person does (its rows are made then)."""
    from PySide6.QtCore import QPoint, Qt

    tree.scrollToItem(item)
    rect = tree.visualItemRect(item)
    qtbot.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton,
                     pos=QPoint(rect.left() - tree.indentation() // 2, rect.center().y()))
    qtbot.waitUntil(item.isExpanded, timeout=60_000)


def hover_every_row(qtbot, tree):
    from PySide6.QtCore import QEvent, QPoint
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QApplication

    for item in top_items(tree):
        tree.expandItem(item)
        for row in [item] + [item.child(i) for i in range(item.childCount())]:
            rect = tree.visualItemRect(row)
            if rect.isValid():
                point = rect.center()
                QApplication.sendEvent(tree.viewport(), QHelpEvent(QEvent.Type.ToolTip, point,
                                                                  tree.viewport().mapToGlobal(point)))
                tree.itemClicked.emit(row, 0)
    events_delivered()


def shown_text(tooltip: str) -> str:
    """The text a tooltip displays, rendered the way Qt renders it (rich text when it looks like it)."""
    from PySide6.QtGui import QTextDocument, Qt

    document = QTextDocument()
    document.setHtml(tooltip) if Qt.mightBeRichText(tooltip) else document.setPlainText(tooltip)
    return document.toPlainText()


def test_breaks_show_their_gb_type_and_link_and_look_unlike_recompiles(qtbot, window):
    from inspector.gui.views.qt_problems import PROBLEM_ROLE

    open_and_wait(qtbot, window, BUNDLED)
    problems = window.problems_view
    rows = {item.data(0, PROBLEM_ROLE).kind: item for item in top_items(problems) if item.data(0, PROBLEM_ROLE)}
    brk = next(item for item in top_items(problems) if "GB0170" in item.text(0))
    assert brk.text(0) == "Graph break ×2: GB0170 Data-dependent branching" and brk.text(1) == "2"
    tip = shown_text(brk.toolTip(0))  # what the tooltip displays
    assert "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html" in tip
    assert "Hint: Use `torch.cond` to express dynamic control flow." in tip
    open_row(qtbot, problems, brk)
    details = [brk.child(i).text(0) for i in range(brk.childCount())]
    assert "Documentation: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html" in details
    icon = {kind: rows[kind].icon(0).pixmap(16, 16).toImage() for kind in ("graph_break", "recompile")}
    assert icon["graph_break"] != icon["recompile"]
    hover_every_row(qtbot, problems)
    assert "call time" not in window.summary_view.slowness.text()
    assert "guard checks (Dynamo cache lookup) 14%" in window.summary_view.slowness.text()


def test_recompiles_are_one_row_per_cause_that_expands_to_each_recompile(qtbot, window, corpus):
    from inspector.gui.views.qt_problems import UNIT_ROLE

    open_and_wait(qtbot, window, MULTI_RANK)
    problems = window.problems_view
    recompiles = [item for item in top_items(problems) if item.text(0).startswith("Recompile ×")]
    assert sorted(item.text(1) for item in recompiles) == ["14", "6"]
    group = next(item for item in recompiles if item.text(1) == "14")
    assert group.text(0).startswith("Recompile ×14 rank 1 kernel: x size dim 0 (2 → 3 → 4")
    assert "torch._dynamo.mark_dynamic(x, 0)" in group.toolTip(0)
    open_row(qtbot, problems, group)
    units = [group.child(i) for i in range(group.childCount()) if group.child(i).data(0, UNIT_ROLE) is not None]
    assert len(units) == 14
    problems.itemActivated.emit(units[4], 0)
    assert str(window.model.unit.compile_id) == "[0/5]" and window.model.unit.rank == 1
    hover_every_row(qtbot, problems)
