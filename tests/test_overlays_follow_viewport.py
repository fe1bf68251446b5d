"""What floats over a view follows the view's size: the Source view's notice about where its text comes
from stays at the top right, half the code's width (at least 360 px, never wider than the code less
4 px each side), over the text without pushing it aside, its button still taking clicks; the grey hint
over an empty table or tree covers the whole table as the window is resized, and shows and hides with
the rows. Real widgets, offscreen; the main window at 1920×1080 and 1280×720."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QRect, Qt  # noqa: E402
from PySide6.QtGui import QTextCursor  # noqa: E402
from PySide6.QtWidgets import QTableWidget, QTreeWidget, QTreeWidgetItem  # noqa: E402

from inspector.core.readers.source_snapshot import CAPTURED, source_text  # noqa: E402
from inspector.gui.views.qt_code_view import PICK_KERNEL, QtEmptyHint  # noqa: E402
from inspector.gui.views.qt_source_view import QtSourceView  # noqa: E402

SCRIPT = "import torch\n\n\ndef forward(x):\n    return torch.relu(x) + 1\n" * 20


def notice_rect(view: QtSourceView) -> QRect:
    """Where the notice belongs in the viewport: half its width, at least 360 px, at most the width
    less 4 px each side, never under 120 px; 4 px from the top and right edges."""
    width = view.viewport().width()
    shown = max(min(width - 8, max(360, width // 2)), 120)
    return QRect(width - shown - 4, 4, shown, view.notice.height())


def changed_file_notice(view: QtSourceView, tmp_path) -> None:
    """The notice of a captured file whose file on disk has changed since, with its button."""
    script, copy = tmp_path / "model.py", tmp_path / "model.captured.py"
    copy.write_text(SCRIPT)
    script.write_text("# a line added since the capture\n" + SCRIPT)
    shown = source_text(str(script), tmp_path, {str(script): copy}, CAPTURED)
    view.show_text(shown.text, None)
    view.notice.say(shown)
    assert "CHANGED since the capture" in view.notice.label.text() and view.notice.other.isVisible()


@pytest.fixture
def source_view(qtbot, window):
    view = QtSourceView(window.model)
    qtbot.addWidget(view)
    view.resize(1200, 500)
    view.show()
    qtbot.waitExposed(view)
    return view


@pytest.mark.parametrize("width, rule", [(1400, "half the code's width"), (600, "at least 360 px"),
                                         (300, "the code's width less 4 px each side"), (140, "at least 120 px")])
def test_the_source_notice_follows_the_code_as_it_is_resized(qtbot, source_view, tmp_path, no_slot_errors,
                                                             width, rule):
    view = source_view
    changed_file_notice(view, tmp_path)
    qtbot.waitUntil(lambda: view.notice.geometry() == notice_rect(view), timeout=5_000)
    before = view.viewport().width()
    view.resize(width, 420)
    qtbot.waitUntil(lambda: view.viewport().width() != before, timeout=5_000)
    assert view.notice.geometry() == notice_rect(view), rule
    assert view.notice.isVisible()


def test_the_source_notice_floats_over_the_text_and_its_button_takes_clicks(qtbot, source_view, tmp_path,
                                                                           no_slot_errors):
    """An overlay: the code keeps its margins, its scroll range and where its first line is drawn when
    the notice shows; the button is the widget under the mouse where it is drawn, and clicking it asks
    for the file's other text."""
    view = source_view
    view.show_text(SCRIPT, None)
    view.moveCursor(QTextCursor.MoveOperation.Start)
    first_line = view.cursorRect()
    laid_out = (view.viewportMargins(), view.document().documentMargin(), view.viewport().geometry(),
                view.verticalScrollBar().maximum(), view.horizontalScrollBar().maximum(), first_line)
    changed_file_notice(view, tmp_path)
    qtbot.waitUntil(lambda: view.notice.geometry() == notice_rect(view), timeout=5_000)
    assert (view.viewportMargins(), view.document().documentMargin(), view.viewport().geometry(),
            view.verticalScrollBar().maximum(), view.horizontalScrollBar().maximum(),
            view.cursorRect()) == laid_out
    button = view.notice.other
    centre = button.mapTo(view.viewport(), button.rect().center())
    assert view.viewport().childAt(centre) is button, "the button is on top where it is drawn"
    with qtbot.waitSignal(view.notice.sigShowOther, timeout=5_000):
        qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def test_the_source_notice_follows_a_resize_made_while_its_tab_was_hidden(qtbot, window, tmp_path, no_slot_errors):
    window.resize(1920, 1080)
    view = window.source_view
    window.tabs.setCurrentWidget(view)
    changed_file_notice(view, tmp_path)
    qtbot.waitUntil(lambda: view.notice.geometry() == notice_rect(view), timeout=5_000)
    wide = view.viewport().width()
    window.tabs.setCurrentWidget(window.code_view)
    window.resize(1280, 720)
    qtbot.waitUntil(lambda: window.width() == 1280, timeout=5_000)
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: view.viewport().width() < wide, timeout=5_000)
    assert view.notice.isVisible() and view.notice.geometry() == notice_rect(view)


# --- the hint over an empty table or tree ---------------------------------------------------------
def covers_the_viewport(view) -> bool:
    return view.viewport().rect().isValid() and view.findChild(QtEmptyHint).geometry() == view.viewport().rect()


def test_the_empty_hint_covers_the_table_as_it_is_resized_and_shows_with_no_rows(qtbot, no_slot_errors):
    table = QTableWidget(0, 3)
    hint = QtEmptyHint(table)
    qtbot.addWidget(table)
    table.resize(640, 400)
    table.show()
    qtbot.waitExposed(table)
    hint.say("Nothing in this table: choose a unit.")
    assert hint.isVisible() and covers_the_viewport(table)
    for size in ((900, 600), (300, 200)):
        before = table.viewport().size()
        table.resize(*size)
        qtbot.waitUntil(lambda: table.viewport().size() != before, timeout=5_000)
        assert hint.isVisible() and covers_the_viewport(table), size
    table.insertRow(0)
    assert not hint.isVisible(), "a table with rows shows them, not the hint"
    table.resize(500, 350)  # resized while it has rows: the hint comes back at the new size
    qtbot.waitUntil(lambda: table.viewport().width() > 300, timeout=5_000)
    table.removeRow(0)
    assert hint.isVisible() and covers_the_viewport(table)


def test_the_empty_hint_leaves_the_tables_size_and_rows_as_they_were(qtbot, no_slot_errors):
    """The hint's layout holds the hint only: the view's size hints and where it draws its rows are
    those of the same view without a hint."""
    plain, hinted = QTreeWidget(), QTreeWidget()
    QtEmptyHint(hinted).say("Nothing here.")
    for tree in (plain, hinted):
        qtbot.addWidget(tree)
        tree.setHeaderLabels(["FX node", "Target"])
        tree.addTopLevelItems([QTreeWidgetItem([f"node {n}", "aten.relu"]) for n in range(5)])
        tree.resize(400, 300)
        tree.show()
        qtbot.waitExposed(tree)
    assert (hinted.sizeHint(), hinted.minimumSizeHint()) == (plain.sizeHint(), plain.minimumSizeHint())
    assert hinted.visualItemRect(hinted.topLevelItem(4)) == plain.visualItemRect(plain.topLevelItem(4))


@pytest.mark.parametrize("first, then", [((1920, 1080), (1280, 720)), ((1280, 720), (1920, 1080))])
def test_the_code_tabs_hints_cover_their_panes_after_the_window_is_resized(qtbot, window, no_slot_errors,
                                                                           first, then):
    code = window.code_view
    window.resize(*first)
    window.tabs.setCurrentWidget(code)
    outline, nodes = code.outline, code.nodes
    qtbot.waitUntil(lambda: covers_the_viewport(outline) and covers_the_viewport(nodes), timeout=5_000)
    assert code.outline_hint.isVisible() and "Session tree" in code.outline_hint.text()
    assert code.nodes_hint.isVisible() and code.nodes_hint.text() == PICK_KERNEL
    before = outline.viewport().size()
    window.resize(*then)
    qtbot.waitUntil(lambda: outline.viewport().size() != before, timeout=5_000)
    assert covers_the_viewport(outline) and covers_the_viewport(nodes)
    assert code.outline_hint.isVisible() and code.nodes_hint.isVisible()
