"""The desktop window: Open Recent holds only inputs that opened (absolute, once, still there);
the default window fits the screen; a Graph search follows the selected unit; the stage strip says how
a capture that did not succeed ended."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QEvent, QPoint, QSettings, Qt  # noqa: E402
from PySide6.QtGui import QColor, QGuiApplication, QHelpEvent  # noqa: E402
from PySide6.QtWidgets import QApplication, QToolTip  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from conftest import open_and_wait  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
SCRIPT = ROOT / "resources" / "examples" / "mlp_breaks.py"


def recent_menu_entries(window) -> list[str]:
    """What File ▸ Open Recent lists when the user opens it."""
    window.recent_menu.aboutToShow.emit()
    return [action.text() for action in window.recent_menu.actions() if action.isEnabled()]


# --- 1. Open Recent ----------------------------------------------------------------------------
def test_open_recent_lists_only_opened_inputs_absolute_once_and_still_there(qtbot, window, tmp_path, monkeypatch):
    # inputs that fail to open are not listed: a missing path, and a file that is no compile output
    window.open_path(tmp_path / "missing.log")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01 not a log")
    window.open_path(junk)
    qtbot.waitUntil(lambda: window.status.text() == f"Could not open {junk}", timeout=60_000)
    assert recent_menu_entries(window) == []

    # a relative path is listed absolute and resolved, after it opened
    monkeypatch.chdir(BUNDLED.parent)
    open_and_wait(qtbot, window, Path("mlp_breaks"))
    qtbot.waitUntil(lambda: recent_menu_entries(window) == [str(BUNDLED.resolve())], timeout=60_000)

    # the same folder again (absolute, and by a path with "..") is still one entry
    open_and_wait(qtbot, window, BUNDLED)
    open_and_wait(qtbot, window, Path("../sessions/mlp_breaks"))
    script = tmp_path / "model.py"
    shutil.copy(SCRIPT, script)
    window.open_path(script)
    qtbot.waitUntil(lambda: recent_menu_entries(window) == [str(script.resolve()), str(BUNDLED.resolve())],
                    timeout=60_000)  # most recent first

    # an entry whose file is gone since is dropped when the menu is shown
    script.unlink()
    assert recent_menu_entries(window) == [str(BUNDLED.resolve())]
    assert window.settings.recent == [str(BUNDLED.resolve())]


def test_relative_and_duplicate_recent_entries_of_an_older_version_are_not_listed(qtbot, window):
    store = window.settings.store
    store.setValue("recent", ["sessions/mlp_breaks", str(BUNDLED), str(BUNDLED / ".." / "mlp_breaks"),
                              "/nowhere/at/all.log"])
    assert recent_menu_entries(window) == [str(BUNDLED.resolve())]


# --- 2. The default window fits the screen -------------------------------------------------------
def test_default_window_fits_the_screen_it_opens_on(qtbot, window):
    area = window.screen().availableGeometry()
    assert area == QGuiApplication.primaryScreen().availableGeometry()
    assert window.width() <= area.width() and window.height() <= area.height()
    assert window.width() <= 1400 and window.height() <= 900
    assert area.contains(window.geometry())  # on the screen, not only as small as it


def test_a_saved_size_wins_where_it_fits_and_not_where_it_does_not(qtbot, tmp_path):
    from inspector.gui.qt_main_window import QtMainWindow
    from inspector.gui.qt_settings import AppSettings

    area = QGuiApplication.primaryScreen().availableGeometry()

    def start(name: str, size=None) -> QtMainWindow:
        win = QtMainWindow(AppSettings(QSettings(str(tmp_path / name), QSettings.Format.IniFormat)))
        qtbot.addWidget(win)
        win.show()
        if size is not None:
            win.resize(*size)
            qtbot.waitUntil(lambda: (win.width(), win.height()) == size)
            win.close()
        return win

    least = start("probe.ini").minimumSizeHint()
    fitting = (max(least.width(), area.width() - 20), max(least.height(), area.height() - 30))
    start("fits.ini", fitting)
    assert (start("fits.ini").width(), start("fits.ini").height()) == fitting
    start("big.ini", (area.width() + 600, area.height() + 400))
    again = start("big.ini")
    assert again.width() <= area.width() and again.height() <= area.height()


# --- 3. Graph search follows the selected unit ---------------------------------------------------
def result_names(graph) -> list[str]:
    return [graph.results.item(i).text().split("  ")[0] for i in range(graph.results.count())
            if not graph.results.isHidden()]


def wait_graph_of(qtbot, graph, unit) -> None:
    qtbot.waitUntil(lambda: graph.unit is unit and graph.layer is not None and graph.graph is not None
                    and graph.graph is unit.graphs[graph.stage.currentText()].graph, timeout=60_000)


def test_graph_search_and_details_follow_the_unit_selected_in_the_session_tree(qtbot, window):
    open_and_wait(qtbot, window, BUNDLED)
    graph, nav = window.graph_view, window.navigator
    window.tabs.setCurrentWidget(graph)
    units = window.model.loaded.session.units
    a = units[0]
    wait_graph_of(qtbot, graph, a)
    graph.search.setText("sum|gt")
    QTest.keyClick(graph.search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: result_names(graph) == ["sum_1", "gt"] and "sum_1" in graph.details.toPlainText(),
                    timeout=60_000)

    # unit B (no sum, no gt in its graph), picked in the Session tree
    b = next(unit for unit in units
             if not any(re.search("sum|gt", node.name) for node in unit.graphs["post_grad"].graph.nodes))
    nav.setCurrentItem(nav._items[b])
    wait_graph_of(qtbot, graph, b)
    names_b = {node.name for node in graph.graph.nodes}
    qtbot.waitUntil(lambda: graph.status.text() == "0 node(s) match", timeout=60_000)  # searched again, on B
    assert result_names(graph) == [] and graph.results.isHidden()
    assert "sum_1" not in graph.details.toPlainText() and "gt" not in graph.details.toPlainText().split()

    # a search that matches in B lists B's nodes; back on A, it lists A's (and details name one of A's)
    graph.search.setText(".")
    QTest.keyClick(graph.search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: set(result_names(graph)) == names_b, timeout=60_000)
    nav.setCurrentItem(nav._items[a])
    wait_graph_of(qtbot, graph, a)
    names_a = {node.name for node in graph.graph.nodes}
    qtbot.waitUntil(lambda: set(result_names(graph)) == names_a, timeout=60_000)
    qtbot.waitUntil(lambda: graph.details.toPlainText().split(" ")[0] in names_a, timeout=60_000)


def test_a_unit_without_the_old_graph_clears_results_and_details(qtbot, window):
    open_and_wait(qtbot, window, BUNDLED)
    graph = window.graph_view
    window.tabs.setCurrentWidget(graph)
    wait_graph_of(qtbot, graph, window.model.unit)
    graph.search.setText("^sum_1$")
    QTest.keyClick(graph.search, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: result_names(graph) == ["sum_1"] and bool(graph.details.toPlainText()), timeout=60_000)
    window.model.select_unit(None)  # nothing selected: nothing of the old graph stays on show
    assert result_names(graph) == [] and graph.details.toPlainText() == ""


# --- 4. The stage strip shows how a capture ended -------------------------------------------------
@pytest.fixture
def strip(qtbot):
    from inspector.gui.qt_capture_controller import QtCaptureController
    from inspector.gui.views.qt_stage_strip import QtStageStrip

    controller = QtCaptureController()
    widget = QtStageStrip(controller)
    qtbot.addWidget(widget)
    widget.show()
    return controller, widget


def test_stage_strip_says_a_cancelled_capture_was_cancelled(qtbot, strip):
    controller, widget = strip
    controller.sigStarted.emit("session")
    assert widget.status_text() == "starting: importing torch…"
    controller.sigFinished.emit("session", 143, {"kind": "cancelled", "message": "stopped by the user"})
    qtbot.waitUntil(lambda: widget.status_text().startswith("cancelled"))
    assert "importing torch" not in widget.status_text()
    controller.sigStarted.emit("session")  # a new run starts afresh; one that compiled nothing says so
    assert widget.status_text() == "starting: importing torch…"
    controller.sigFinished.emit("session", 0, None)
    qtbot.waitUntil(lambda: widget.status_text() == "finished: nothing was compiled")


def test_stage_strip_says_why_a_capture_failed_even_after_units_ran(qtbot, strip):
    from inspector.core.readers.stage_progress import StageProgress

    controller, widget = strip
    controller.sigStarted.emit("session")
    progress = StageProgress()
    progress.apply({"event": "stage", "name": "dynamo", "ph": "B", "compile_id": "0/0", "t": 1.0})
    controller.sigProgress.emit(progress)
    assert widget.status_text() == "" and widget.cell_states()["0/0"]["graph capture"] == "running"
    rows = widget.rows_height()
    controller.sigFinished.emit("session", 1, {"kind": "exception", "message": "ZeroDivisionError: division by zero"})
    qtbot.waitUntil(lambda: widget.status_text() == "failed: ZeroDivisionError: division by zero")
    assert widget.cell_states()["0/0"]["graph capture"] == "failed"  # no stage left running
    assert widget.rows_height() > rows and widget.minimumHeight() >= widget.rows_height()  # a line to say so
    widget.grab()  # paints the line


def test_stage_strip_shows_the_benchmark_once_for_the_run_not_per_unit(qtbot, strip):
    """Three units compiled, then the run measured: one benchmark cell beside all three rows (no gap
    between rows in its column, unlike a unit's own steps), and its tooltip says it is the run's."""
    from PySide6.QtCore import QPoint

    from inspector.core.model.pipeline import PIPELINE
    from inspector.core.readers.stage_progress import StageProgress
    from inspector.gui.views.qt_stage_strip import LABEL_WIDTH, ROW_HEIGHT, STATE_COLOURS

    controller, widget = strip
    widget.resize(900, widget.rows_height() + 3 * ROW_HEIGHT)
    controller.sigStarted.emit("session")
    progress = StageProgress()
    for index, compile_id in enumerate(("0/0", "1/0", "2/0")):
        for ph in ("B", "E"):
            progress.apply({"event": "stage", "name": "dynamo", "ph": ph, "compile_id": compile_id, "t": 1.0 + index})
    for state in ("start", "end"):
        progress.apply({"event": "phase", "phase": "benchmark", "state": state, "t": 10.0})
    controller.sigProgress.emit(progress)
    controller.sigFinished.emit("session", 0, None)
    qtbot.waitUntil(lambda: widget.finished)
    widget.set_folded(False)  # a run that succeeded folds the strip to one line (#52): open its rows
    image = widget.grab().toImage()
    width = (widget.width() - LABEL_WIDTH - 8) / len(PIPELINE)
    between_rows = ROW_HEIGHT * 2 + 4  # where the first row's cells end and the second's begin
    done = QColor(STATE_COLOURS["done"]).name()
    benchmark_x = int(LABEL_WIDTH + (PIPELINE.index("benchmark") + 0.5) * width)
    capture_x = int(LABEL_WIDTH + 0.5 * width)
    assert image.pixelColor(benchmark_x, between_rows).name() == done, "one cell across the rows"
    assert image.pixelColor(capture_x, between_rows).name() != done, "a unit's own step is its row's alone"
    tips = []
    for row in (1, 3):
        QTest.mouseMove(widget, QPoint(benchmark_x, ROW_HEIGHT * row + 14))
        widget.event(QHelpEvent(QEvent.Type.ToolTip, QPoint(benchmark_x, ROW_HEIGHT * row + 14),
                                widget.mapToGlobal(QPoint(benchmark_x, ROW_HEIGHT * row + 14))))
        qtbot.waitUntil(lambda: QToolTip.isVisible() and QToolTip.text().startswith("benchmark"), timeout=5_000)
        tips.append(QToolTip.text())
    assert tips[0] == tips[1] and "one phase of the whole run" in tips[0], tips


def test_stage_strip_of_a_script_that_raises_at_once(qtbot, window, tmp_path, monkeypatch):
    from inspector.gui import qt_main_window

    monkeypatch.setattr(qt_main_window, "SESSIONS_DIR", tmp_path / "sessions")
    script = tmp_path / "raises.py"
    script.write_text("raise RuntimeError('broken before torch')\n")
    window.open_path(script)
    with qtbot.waitSignal(window.capture.sigFinished, timeout=120_000):
        window.run_capture()
    strip = window.stage_strip
    qtbot.waitUntil(lambda: strip.status_text().startswith("failed"), timeout=60_000)
    assert "importing torch" not in strip.status_text()
    assert "broken before torch" in strip.status_text() or "exit status" in strip.status_text()


# --- 5. a failed capture leaves the session on screen ------------------------------------------

def test_a_failed_capture_keeps_the_session_on_screen_until_the_user_opens_what_it_captured(
        qtbot, window, tmp_path, monkeypatch):
    """The bundled session is on screen; a script that raises is run: the session stays (title, summary,
    tree), a message offers what the run captured, and opening it shows its problem at the script's
    line (activating it opens that line in Source)."""
    from inspector.gui import qt_main_window

    monkeypatch.setattr(qt_main_window, "SESSIONS_DIR", tmp_path / "sessions")
    open_and_wait(qtbot, window, BUNDLED)
    title, summary = window.windowTitle(), window.summary_view.title.text()
    script = tmp_path / "raises.py"
    script.write_text("import os\n\n\ndef helper():\n    return 1 / 0\n\n\nhelper()\n")
    window.script = script
    with qtbot.waitSignal(window.capture.sigFinished, timeout=120_000):
        window.run_capture()
    qtbot.waitUntil(lambda: window.partial_offer is not None and window.partial_offer.isVisible(), timeout=10_000)
    assert window.windowTitle() == title and window.summary_view.title.text() == summary
    assert window.model.loaded.session.source == BUNDLED or Path(window.model.loaded.session.source) == BUNDLED
    assert "ZeroDivisionError" in window.partial_offer.text() or "exit status" in window.partial_offer.text()
    opener = next(button for button in window.partial_offer.buttons() if button.text() == "Open what was captured")
    with qtbot.waitSignal(window.model.sigLoaded, timeout=120_000) as loaded:
        qtbot.mouseClick(opener, Qt.MouseButton.LeftButton)
    assert window.windowTitle().startswith("raises-")
    [failed] = [problem for problem in loaded.args[0].issues if problem.title.startswith("Capture failed")]
    assert (Path(failed.file).name, failed.line) == ("raises.py", 5), "the script's line that raised"
    problems = window.problems_view
    item = next(problems.topLevelItem(i) for i in range(problems.topLevelItemCount())
                if problems.topLevelItem(i).text(0).startswith("Capture failed"))
    assert "raises.py:5" in item.text(2)
    problems.itemActivated.emit(item, 0)
    qtbot.waitUntil(lambda: window.tabs.currentWidget() is window.source_view, timeout=10_000)


# --- 6. two counts of caches, each labelled ----------------------------------------------------

def test_the_ranks_cache_columns_and_the_summarys_cache_rate_say_which_caches(qtbot, window, corpus):
    """The Ranks table counts every cache (FX graph and AOTAutograd), the Summary's hit rate the FX
    graph cache alone: each says so, so their numbers do not read as a contradiction."""
    open_and_wait(qtbot, window, corpus / "multi_rank_logs")
    rows, horizontal = window.ranks_view.rows, Qt.Orientation.Horizontal
    headers = {rows.headerData(c, horizontal): rows.headerData(c, horizontal, Qt.ItemDataRole.ToolTipRole) or ""
               for c in range(rows.columnCount())}
    assert "Cache hits (all)" in headers and "Cache misses (all)" in headers
    assert "AOTAutograd" in headers["Cache hits (all)"] and "FX graph cache" in headers["Cache hits (all)"]
    assert "not sites" in headers["Breaks"]
    window.tabs.setCurrentWidget(window.ranks_view)  # and the tooltip shows where the mouse rests on the header
    header = window.ranks_view.table.horizontalHeader()
    column = next(c for c in range(rows.columnCount()) if rows.headerData(c, horizontal) == "Cache hits (all)")
    point = QPoint(header.sectionViewportPosition(column) + header.sectionSize(column) // 2, header.height() // 2)
    QApplication.sendEvent(header.viewport(),
                           QHelpEvent(QEvent.Type.ToolTip, point, header.viewport().mapToGlobal(point)))
    qtbot.waitUntil(lambda: QToolTip.isVisible() and "AOTAutograd" in QToolTip.text(), timeout=5_000)
    dashboard = window.summary_view.table
    rows = {dashboard.item(r, 0).text(): dashboard.item(r, 2).text() for r in range(dashboard.rowCount())}
    assert "FX graph cache" in rows["cache hit rate"], rows["cache hit rate"]


def test_the_session_tree_names_resume_functions_by_the_users_function_and_line(qtbot, window):
    """Dynamo's `torch_dynamo_resume_in_forward_at_19` was elided to `t…d_at_19` in the tree: its frame
    is listed as `forward (resumed at line 19)`, whole in the default layout at 1280×720, its units by
    their ids, with Dynamo's name in the tooltip."""
    window.resize(1280, 720)
    open_and_wait(qtbot, window, BUNDLED)
    window.reset_layout()
    tree = window.navigator
    frames = [tree.topLevelItem(i) for i in range(tree.topLevelItemCount())]
    titles = [frame.text(0) for frame in frames]
    assert titles == ["forward", "forward (resumed at line 19)", "forward (resumed at line 21)"]
    assert "frame 1: forward (resumed at line 19)" in frames[1].toolTip(0)

    def fits() -> bool:  # once the docks are laid out at their default sizes
        room = tree.columnWidth(0) - tree.indentation()
        return all(tree.fontMetrics().horizontalAdvance(title) <= room for title in titles)
    qtbot.waitUntil(fits, timeout=10_000)
    unit = frames[1].child(0)
    assert unit.text(0) == "[1/0]"
    assert "Dynamo's name: torch_dynamo_resume_in_forward_at_19" in __import__("html").unescape(unit.toolTip(0))


def test_the_source_tab_goes_to_each_selected_units_line_in_the_same_file(qtbot, window):
    """Every unit of the bundled run is in one file: choosing another unit scrolls the Source tab to its
    line (it stayed where the file had first opened)."""
    open_and_wait(qtbot, window, BUNDLED)
    source = window.source_view
    window.tabs.setCurrentWidget(source)
    units = {str(unit.compile_id): unit for unit in window.model.loaded.session.units}
    for compile_id in ("[2/0]", "[1/0]", "[0/1]"):
        unit = units[compile_id]
        window.model.select_unit(unit)
        qtbot.waitUntil(lambda: source.textCursor().blockNumber() + 1 == unit.location.line, timeout=10_000)


def test_problem_titles_get_the_width_and_fallbacks_name_their_rank(qtbot, window, corpus):
    """At 1920×1080 the Problems list shows each title whole (the Problem column had 560 px beside a
    near-empty Unit column), and a fallback seen on two ranks is two notices, each naming its rank."""
    window.resize(1920, 1080)
    loaded = open_and_wait(qtbot, window, corpus / "multi_rank_logs")
    problems = window.problems_view
    qtbot.waitUntil(lambda: problems.width() > 1500, timeout=10_000)
    metrics = problems.fontMetrics()
    titles = [problems.topLevelItem(i).text(0) for i in range(problems.topLevelItemCount())]
    room = problems.columnWidth(0) - 40  # the icon and the indent
    cut = [title for title in titles if metrics.horizontalAdvance(title) > room]
    assert not cut, (room, cut[:3])
    fallbacks = [notice.text for notice in loaded.analysis.notices if notice.key == "fallback"]
    assert len(fallbacks) == len(set(fallbacks)) >= 2 and all(text.startswith("rank ") for text in fallbacks)


def test_the_summarys_cache_figure_also_gives_every_caches_count_the_ranks_tab_shows(qtbot, window, corpus):
    loaded = open_and_wait(qtbot, window, corpus / "multi_rank_logs")
    dashboard = window.summary_view.table
    row = next(r for r in range(dashboard.rowCount()) if dashboard.item(r, 0).text() == "cache hit rate")
    where = dashboard.item(row, 3).text()  # "where it comes from"
    figures = loaded.analysis.ranks.figures
    hits, misses = sum(f.cache_hits for f in figures), sum(f.cache_misses for f in figures)
    assert f"every cache together (fx_graph, aotautograd): {hits} hit, {misses} miss" in where, where


def test_the_session_trees_status_dots_have_a_legend(qtbot, window):
    """Every colour a unit's dot can take is named in the tree's first column header tooltip."""
    from inspector.core.model.session import UnitStatus
    from inspector.gui.views.qt_status_icons import COLOURS

    open_and_wait(qtbot, window, BUNDLED)
    legend = window.navigator.headerItem().toolTip(0)
    assert all(COLOURS[status.value] in legend for status in UnitStatus)
    assert "graph break" in legend and "FX graph cache" in legend and "runs eagerly" in legend


def test_a_units_shown_name_reads_its_graph_once_however_often_it_is_painted(monkeypatch):
    """The tree and the break map name a unit on every paint; a library-located unit's name comes from
    its Dynamo graph's text, read from the log once, not at each paint."""
    from inspector.core.analysis.user_names import unit_title
    from inspector.core.model.source_location import SourceLocation
    from inspector.core.readers.session_loader import open_path

    unit = open_path(BUNDLED).units[0]
    unit.location = SourceLocation("/usr/lib/python3.11/site-packages/lib/wrappers.py", 10, "wrapper", None)
    unit.function = "wrapper"
    graph = unit.graphs["dynamo"]
    reads = []
    load = graph.load_text
    monkeypatch.setattr(graph, "load_text", lambda: reads.append(1) or load())
    titles = {unit_title(unit) for _ in range(20)}
    assert titles == {f"{unit.compile_id} forward (via wrapper)"} and len(reads) == 1
