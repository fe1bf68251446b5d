"""Issue #52, layout: at 1280×720 the room goes to what a pane holds. The stage strip folds to one
line once a run succeeds (a click opens it again); the window fills a small screen; the bottom panel
shows every problem of the example session; the graph's node details get more than four lines; long
names elide at a word or dot, whole in the tooltip. Checked in pixels on real widgets."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtGui import QGuiApplication  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QStyleOptionViewItem  # noqa: E402

from conftest import open_and_wait  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def at_size(qtbot, window, width=1280, height=720):
    window.resize(width, height)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == (width, height), timeout=10_000)


def finished_run(qtbot, window, units=("0/0", "1/0")):
    """A run as the controller reports it: started, units compiled, ended well (opening BUNDLED)."""
    from inspector.core.readers.stage_progress import StageProgress

    window.script = BUNDLED.parent / "mlp_breaks.py"
    window.capture.sigStarted.emit(str(BUNDLED))
    progress = StageProgress()
    for index, compile_id in enumerate(units):
        for ph in ("B", "E"):
            progress.apply({"event": "stage", "name": "dynamo", "ph": ph, "compile_id": compile_id, "t": 1.0 + index})
    window.capture.sigProgress.emit(progress)
    with qtbot.waitSignal(window.model.sigLoaded, timeout=120_000):
        window.capture.sigFinished.emit(str(BUNDLED), 0, None)


def test_stage_strip_folds_to_one_line_when_a_run_succeeds_and_a_click_opens_it(qtbot, window):
    from inspector.gui.views.qt_stage_strip import ROW_HEIGHT

    at_size(qtbot, window)
    strip, dock = window.stage_strip, window.stages_dock
    finished_run(qtbot, window, units=("0/0", "1/0", "2/0"))
    qtbot.waitUntil(lambda: dock.widget().height() <= ROW_HEIGHT + 8, timeout=5_000)
    assert dock.isVisible() and strip.folded
    assert strip.folded_text().startswith("▸ 3 compile units compiled")
    QTest.mouseClick(strip, Qt.MouseButton.LeftButton, pos=QPoint(40, 10))
    qtbot.waitUntil(lambda: dock.widget().height() >= strip.rows_height(), timeout=5_000)
    assert not strip.folded and strip.rows_height() >= ROW_HEIGHT * 4  # header and three units
    QTest.mouseClick(strip, Qt.MouseButton.LeftButton, pos=QPoint(40, 10))  # its header folds it again
    qtbot.waitUntil(lambda: dock.widget().height() <= ROW_HEIGHT + 8, timeout=5_000)


def test_a_failed_run_keeps_its_rows_and_reason_on_show(qtbot, window):
    strip = window.stage_strip
    window.script = BUNDLED.parent / "mlp_breaks.py"
    window.capture.sigStarted.emit("session")
    window.capture.sigFinished.emit("session", 1, {"kind": "exception", "message": "boom"})
    assert not strip.folded and strip.status_text() == "failed: boom"


def test_window_fills_a_screen_smaller_than_its_default_size(qtbot, tmp_path):
    from PySide6.QtCore import QSettings

    from inspector.gui.qt_main_window import QtMainWindow
    from inspector.gui.qt_window_layout import DEFAULT_HEIGHT, DEFAULT_WIDTH
    from inspector.gui.qt_settings import AppSettings

    area = QGuiApplication.primaryScreen().availableGeometry()
    window = QtMainWindow(AppSettings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)))
    qtbot.addWidget(window)
    if area.width() >= DEFAULT_WIDTH / 0.9 and area.height() >= DEFAULT_HEIGHT / 0.9:
        pytest.skip("this screen has room for the default size")
    assert window.fill_screen
    assert (window.width(), window.height()) == (area.width(), area.height())


def test_every_problem_of_the_example_is_on_screen_at_1280x720(qtbot, window):
    at_size(qtbot, window)
    loaded = open_and_wait(qtbot, window, BUNDLED)
    problems = window.problems_view
    qtbot.waitUntil(lambda: problems.topLevelItemCount() == len(loaded.issues), timeout=10_000)
    assert len(loaded.issues) == 6
    last = problems.visualItemRect(problems.topLevelItem(problems.topLevelItemCount() - 1))
    qtbot.waitUntil(lambda: problems.visualItemRect(problems.topLevelItem(5)).bottom()
                    <= problems.viewport().height(), timeout=5_000)
    assert last.height() > 0
    assert window.tabs.currentWidget().height() >= 720 // 2  # the tabs keep most of the height


def test_graph_node_details_get_more_than_four_lines_at_1280x720(qtbot, window):
    at_size(qtbot, window)
    open_and_wait(qtbot, window, BUNDLED)
    window.tabs.setCurrentWidget(window.graph_view)
    details = window.graph_view.details
    qtbot.waitUntil(details.isVisible, timeout=5_000)
    lines = details.viewport().height() // details.fontMetrics().lineSpacing()
    assert lines >= 7, f"{details.viewport().height()} px: {lines} lines"


def test_session_tree_elides_a_frame_name_at_a_word_with_the_whole_name_in_its_tooltip(qtbot, window):
    from inspector.gui.views.qt_elide import ELLIPSIS, elide_at_boundary

    open_and_wait(qtbot, window, BUNDLED)
    tree = window.navigator
    frame = next(tree.topLevelItem(i) for i in range(tree.topLevelItemCount())
                 if "resumed" in tree.topLevelItem(i).text(0))
    whole = frame.text(0)
    index = tree.indexFromItem(frame, 0)
    tree.header().resizeSection(0, tree.fontMetrics().horizontalAdvance(whole) // 2 + 30)
    window.session_dock.resize(tree.fontMetrics().horizontalAdvance(whole) // 2 + 150, window.session_dock.height())
    option = QStyleOptionViewItem()
    option.initFrom(tree)
    option.rect = tree.visualRect(index)
    tree.itemDelegateForColumn(0).initStyleOption(option, index)
    shown = option.text
    assert shown.endswith(ELLIPSIS) and shown != whole
    head = shown[:-1].rstrip()
    assert whole.startswith(head) and whole[len(head)] in " ._/(", (shown, whole)  # cut between words
    assert "line 19" in frame.toolTip(0) or whole in frame.toolTip(0)
    metrics = tree.fontMetrics()
    assert elide_at_boundary("transformer.h.0.attn.c_attn", metrics, metrics.horizontalAdvance("…attn.c_attn")) \
        == "…attn.c_attn"


def title_rect(plot):
    """Where a pyqtgraph plot's title text is drawn, in the plot widget's pixels."""
    label = plot.getPlotItem().titleLabel
    return plot.mapFromScene(label.item.sceneBoundingRect()).boundingRect()


def test_kernels_and_modes_chart_titles_are_whole_at_1280x720(qtbot, window, tmp_path):
    import shutil

    at_size(qtbot, window)
    open_and_wait(qtbot, window, BUNDLED)
    window.resizeDocks([window.session_dock], [320], Qt.Orientation.Horizontal)  # its default at 1280 px
    view = window.kernels_view
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(lambda: all(plot.isVisible() and plot.getAxis("left").labels for plot in view.plots),
                    timeout=30_000)  # every chart with its rows (their labels narrow the bars' column)
    qtbot.waitUntil(lambda: view.grab() is not None and all(plot.getAxis("left").width() > 40 for plot in view.plots),
                    timeout=10_000)  # drawn once: the row labels' axis has taken its width
    for plot in view.plots:
        rect = title_rect(plot)
        assert plot.rect().contains(rect), (plot.getPlotItem().titleLabel.text, rect, plot.rect())
    folder = tmp_path / "modes"
    shutil.copytree(BUNDLED, folder / "default")
    window.open_path(folder)
    modes = window.modes_view
    qtbot.waitUntil(lambda: modes.table.rowCount() == 1 and modes.steady.isVisible(), timeout=60_000)
    for plot in (modes.steady, modes.compile):
        assert plot.rect().contains(title_rect(plot)), plot.getPlotItem().titleLabel.text


def test_summary_table_shows_every_figure_without_scrolling_inside_it(qtbot, window):
    at_size(qtbot, window)
    loaded = open_and_wait(qtbot, window, BUNDLED)
    table = window.summary_view.table
    rows = len(loaded.glance.verdict)
    qtbot.waitUntil(lambda: table.rowCount() == rows and table.isVisible(), timeout=10_000)
    needed = table.horizontalHeader().height() + sum(table.rowHeight(row) for row in range(rows))
    qtbot.waitUntil(lambda: table.viewport().height() >= needed - table.horizontalHeader().height(), timeout=5_000)
    assert table.verticalScrollBar().maximum() == 0  # no row hidden inside the table
    last = table.visualRect(table.model().index(rows - 1, 0))
    assert last.bottom() <= table.viewport().height()
