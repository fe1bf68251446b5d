"""A walk through the desktop app with real mouse and keyboard events (QTest on viewport coordinates
of items, never direct slot calls), on the bundled session, the GPU corpus log and the multi-rank
corpus folder. Every test runs under an exception hook: an exception raised in any slot or event
handler fails it (pytest-qt's capture replaces sys.excepthook for the duration)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QPoint, QPointF, QSettings, Qt, QTimer  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
import pyqtgraph as pg  # noqa: E402
from PySide6.QtWidgets import QAbstractScrollArea, QApplication, QToolTip, QWidget  # noqa: E402

from conftest import CUDA_LOG, MULTI_RANK, background_settled, events_delivered, open_and_wait  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
SOURCES = {"bundled": BUNDLED, "cuda_log": CUDA_LOG, "multi_rank": MULTI_RANK}


def test_the_hook_catches_an_exception_in_a_slot(qtbot):
    """The walk below can fail: an exception thrown in a slot reaches the hook."""
    def broken():
        raise RuntimeError("raised in a slot")
    with qtbot.capture_exceptions() as exceptions:
        QTimer.singleShot(0, broken)
        qtbot.waitUntil(lambda: len(exceptions) > 0, timeout=5_000)
    assert len(exceptions) == 1 and "raised in a slot" in str(exceptions[0][1])


def _settle(qtbot) -> None:
    """What the last action started has run: work off the UI thread finished, its answers delivered."""
    background_settled(qtbot)


def _sweep(qtbot, widget, steps: int = 5, click: bool = True) -> None:
    """Mouse moves over a grid of points of `widget`'s viewport, and a click in its middle."""
    target = widget.viewport() if isinstance(widget, QAbstractScrollArea) else widget
    if not target.isVisible() or target.width() < 4 or target.height() < 4:
        return
    for i in range(1, steps + 1):
        for j in range(1, steps + 1):
            QTest.mouseMove(target, QPoint(target.width() * i // (steps + 1), target.height() * j // (steps + 1)))
    proxies = _hover_proxies(widget.window())
    assert proxies, "the window's plots and lanes hand their hovers over through rate-limited proxies"
    qtbot.waitUntil(lambda: all(proxy.args is None for proxy in proxies))  # each has handed its last position over
    if click:
        QTest.mouseClick(target, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                         QPoint(target.width() // 2, target.height() // 2))


def _hover_proxies(window) -> list:
    """The rate-limited hovers (pyqtgraph's SignalProxy) of the window's plots and lanes: each view keeps
    its own as `hover_proxies`. Found through the widgets, not the collector: the objects of a loaded
    session are frozen out of it, and gc.get_objects() leaves them out."""
    return [proxy for widget in (window, *window.findChildren(QWidget))
            for proxy in getattr(widget, "hover_proxies", ()) if isinstance(proxy, pg.SignalProxy)]


def _plot_point(plot, x: float, y: float) -> QPoint:
    """Viewport pixel of data point (x, y) in a pyqtgraph PlotWidget."""
    scene = plot.getViewBox().mapViewToScene(QPointF(x, y))
    return plot.mapFromScene(scene)


def _walk_timeline(qtbot, window) -> None:
    timeline = window.timeline_view
    if timeline.timeline is None or not timeline.timeline.bars:
        return
    bars = timeline.timeline.bars
    bar = max((b for b in bars if b.depth == 0), key=lambda b: b.end_s - b.start_s)
    timeline.plot.setXRange(bar.start_s, bar.end_s, padding=0.1)
    _settle(qtbot)
    point = _plot_point(timeline.plot, (bar.start_s + bar.end_s) / 2, bar.lane * timeline.timeline.depth + 0.5)
    timeline.hover_text = ""
    QTest.mouseMove(timeline.plot.viewport(), point + QPoint(1, 0))
    QTest.mouseMove(timeline.plot.viewport(), point)
    qtbot.waitUntil(lambda: bool(timeline.hover_text), timeout=60_000)
    assert bar.name in timeline.hover_text and bar.compile_id in timeline.hover_text
    assert bar.name in QToolTip.text()
    QTest.mouseClick(timeline.plot.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point)
    qtbot.waitUntil(lambda: window.model.unit is timeline.lane_units[bar.lane], timeout=60_000)
    assert timeline.selected_lane() == bar.lane  # the clicked unit's lane is shaded
    _sweep(qtbot, timeline.plot)
    _sweep(qtbot, timeline.totals)


def _walk_kernels(qtbot, window) -> None:
    plots = window.kernels_view
    for plot in (plots.kernels, plots.families, plots.units, plots.memory):
        _sweep(qtbot, plot, click=False)
    kernels = {k.name for u in window.model.loaded.session.units for k in u.kernels}
    index = next((i for i, name in enumerate(plots.kernel_names) if name in kernels), None)
    if index is None:
        return
    point = _plot_point(plots.kernels, plots.kernel_values[index] / 2, index)
    QTest.mouseMove(plots.kernels.viewport(), point)
    qtbot.waitUntil(lambda: plots.kernel_labels[index] in plots.hover_text, timeout=60_000)
    QTest.mouseClick(plots.kernels.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point)
    code = window.code_view
    qtbot.waitUntil(lambda: window.tabs.currentWidget() is code, timeout=60_000)
    assert window.model.kernel.name == plots.kernel_names[index]
    assert plots.selected == index  # the bar is highlighted
    qtbot.waitUntil(lambda: code.outline.currentRow() >= 0, timeout=60_000)
    row = code.outline.currentRow()
    assert code.outline.item(row, 0).text() == plots.kernel_names[index]


def _click_items(qtbot, tree, limit: int = 12) -> None:
    """Clicks on the first rows of a tree or table, by their rectangles in the viewport."""
    if hasattr(tree, "topLevelItemCount"):
        items, rect_of = [], tree.visualItemRect
        iterator = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
        while iterator and len(items) < limit:
            item = iterator.pop(0)
            items.append(item)
            iterator[:0] = [item.child(i) for i in range(item.childCount())]
    else:
        items = [tree.item(r, 0) for r in range(min(limit, tree.rowCount())) if tree.item(r, 0)]
        rect_of = tree.visualItemRect
    for item in items:
        rect = rect_of(item)
        if rect.isValid() and tree.viewport().rect().contains(rect.center()):
            QTest.mouseMove(tree.viewport(), rect.center())
            QTest.mouseClick(tree.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, rect.center())
            events_delivered()


@pytest.mark.parametrize("name", list(SOURCES))
def test_walk_every_view_with_mouse_and_keys(qtbot, window, no_slot_errors, name):
    path = SOURCES[name]
    if not path.exists():
        pytest.skip(f"{path} is not present beside this checkout")
    window.resize(1280, 720)
    loaded = open_and_wait(qtbot, window, path)
    _settle(qtbot)
    bar = window.tabs.tabBar()
    for index in range(window.tabs.count()):  # Ctrl+1 … Ctrl+9 switch tabs; later ones by a click on the tab
        if index < 9:
            QTest.keyClick(window, Qt.Key(Qt.Key.Key_1 + index), Qt.KeyboardModifier.ControlModifier)
        else:
            QTest.mouseClick(bar, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier,
                             bar.tabRect(index).center())
        assert window.tabs.currentIndex() == index
        view = window.tabs.currentWidget()
        _settle(qtbot)
        for child in [view, *view.findChildren(QAbstractScrollArea)]:
            if child.isVisible():
                _sweep(qtbot, child)
    _click_items(qtbot, window.navigator)
    _click_items(qtbot, window.problems_view)
    window.tabs.setCurrentWidget(window.timeline_view)
    _walk_timeline(qtbot, window)
    window.tabs.setCurrentWidget(window.kernels_view)
    _settle(qtbot)
    _walk_kernels(qtbot, window)
    window.tabs.setCurrentWidget(window.code_view)
    _settle(qtbot)
    _click_items(qtbot, window.code_view.outline)
    # Ctrl+F puts the cursor in the Code pane's find box
    QTest.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is window.code_view.find, timeout=60_000)
    assert len(loaded.session.units) > 0


def test_ctrl_f_goes_to_the_find_box_of_the_pane_the_keyboard_is_in(qtbot, window, no_slot_errors):
    """Ctrl+F in the Log pane filters the log; on the Graph tab it searches nodes; a tab without a find
    says which have one."""
    open_and_wait(qtbot, window, BUNDLED)
    log = window.log_view
    window.log_dock.raise_()
    log.text.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is log.text, timeout=10_000)
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is log.filter, timeout=10_000)
    graph = window.graph_view
    window.tabs.setCurrentWidget(graph)
    graph.view.setFocus()
    QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is graph.search, timeout=10_000)
    window.tabs.setCurrentWidget(window.summary_view)
    window.summary_view.setFocus()
    QTest.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: window.status.text() == "Summary has no find; Graph, Code and Log do", timeout=10_000)


def test_diff_panes_are_labelled_and_an_identical_run_says_so(qtbot, window, no_slot_errors):
    open_and_wait(qtbot, window, BUNDLED)
    diff = window.diff_view
    assert diff.pages.currentWidget() is diff.guidance and "Compare With" in diff.guidance.text()
    window.compare_with(BUNDLED)
    qtbot.waitUntil(lambda: diff.differences.count() > 0, timeout=60_000)
    assert diff.labels[0].toolTip() == f"A: {BUNDLED}" and diff.labels[1].toolTip() == f"B: {BUNDLED}"
    assert diff.differences.item(0).text().startswith("No differences")
    qtbot.waitUntil(lambda: "Graph breaks" in diff.run.toPlainText(), timeout=60_000)
    shown = diff.run.toPlainText()
    assert not any(line.startswith(("moved:", "new:", "fixed:")) for line in shown.splitlines()), shown
    assert "Recompiles: 3 → 3" in shown and "+0 −0, renamed 0, 0 with changed code" in shown
    for view in diff.views:
        _sweep(qtbot, view)
    QTest.keyClick(diff, Qt.Key.Key_F3)  # nothing to step through: no error


def test_empty_modes_tab_guides_and_source_elsewhere_is_a_message(qtbot, window, no_slot_errors, tmp_path):
    modes = window.modes_view
    assert modes.pages.currentWidget() is modes.guidance and "Compare Modes" in modes.guidance.text()
    source = window.source_view
    source.show_location("/nowhere/model.py", 3)
    qtbot.waitUntil(lambda: "not on this machine" in source.placeholderText(), timeout=60_000)
    assert source.toPlainText() == ""


def test_stage_strip_hides_when_idle_and_shows_every_unit_while_running(qtbot, window, no_slot_errors):
    from inspector.core.readers.stage_progress import StageProgress

    dock = window.stages_dock
    assert not dock.isVisible()  # idle: no room taken
    window.script = Path("model.py")
    window.capture.sigStarted.emit("session")
    assert dock.isVisible()
    progress = StageProgress()  # the controller hands the same object on, updated, each time
    for unit in range(6):
        progress.apply({"event": "stage", "name": "dynamo", "ph": "B", "compile_id": f"{unit}/0", "t": 1.0})
        progress.apply({"event": "stage", "name": "dynamo", "ph": "E", "compile_id": f"{unit}/0", "t": 2.0})
        window.capture.sigProgress.emit(progress)
    progress.apply({"event": "phase", "phase": "benchmark", "state": "start", "t": 2.0})
    progress.apply({"event": "phase", "phase": "benchmark", "state": "end", "t": 2.5})
    window.capture.sigProgress.emit(progress)
    strip = window.stage_strip
    assert strip.minimumHeight() >= strip.rows_height() and strip.rows_height() > 6 * 20  # all six rows drawn
    assert progress.benchmark_elapsed(3.0) == pytest.approx(0.5)  # benchmark has a time
    nav = window.navigator
    assert [nav.topLevelItem(i).text(0).split()[0] for i in range(1, nav.topLevelItemCount())] == \
        [f"[{u}/0]" for u in range(6)]  # the tree lists units during the run


def test_layout_is_remembered(qtbot, tmp_path):
    from inspector.gui.qt_main_window import QtMainWindow
    from inspector.gui.qt_settings import AppSettings

    store = QSettings(str(tmp_path / "layout.ini"), QSettings.Format.IniFormat)
    first = QtMainWindow(AppSettings(store))
    qtbot.addWidget(first)
    first.show()
    first.activateWindow()
    qtbot.waitUntil(first.isActiveWindow)
    QTest.keyClick(first, Qt.Key.Key_J, Qt.KeyboardModifier.ControlModifier)  # collapse the bottom panel
    assert not first.problems_dock.isVisible()
    first.close()
    second = QtMainWindow(AppSettings(store))
    qtbot.addWidget(second)
    second.show()
    assert not second.problems_dock.isVisible()
    assert second.session_dock.isVisible()


def test_open_dialog_takes_a_file_or_a_folder(qtbot, tmp_path):
    from inspector.gui.qt_open_dialog import QtOpenDialog

    log = tmp_path / "trace.log"
    log.write_text("x")
    dialog = QtOpenDialog(None, "Open")
    qtbot.addWidget(dialog)
    dialog.setDirectory(str(tmp_path))
    dialog.show()
    QTest.mouseClick(dialog.folder_button, Qt.MouseButton.LeftButton)
    assert dialog.chosen == tmp_path
    dialog = QtOpenDialog(None, "Open")
    qtbot.addWidget(dialog)
    dialog.setDirectory(str(tmp_path))
    dialog.selectFile(str(log))
    dialog.show()
    dialog.accept()
    assert dialog.chosen == log


def test_errors_are_plain_words(qtbot, window, no_slot_errors, tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_text("")
    window.open_path(empty)
    qtbot.waitUntil(lambda: hasattr(window, "last_message"), timeout=60_000)
    assert "is empty" in window.last_message and "first line" not in window.last_message
    assert "Error" not in window.last_message.split(":")[0]
    del window.last_message
    window.open_path(tmp_path / "missing")
    qtbot.waitUntil(lambda: hasattr(window, "last_message"), timeout=60_000)
    assert not window.last_message.startswith("FileNotFoundError")
