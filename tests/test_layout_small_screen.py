"""Issue #29, desktop round 2, the layout at 1280×720 (and 1920×1080): the Kernels charts' row labels
never overlap, are elided only when the plot has no more room (whole in the tooltip), their legends
cover no bar and a bar's tooltip stays when Qt asks for the plot's own; the Diff's A/B titles fit
their panes; the break map's labels are elided, never cut; the timeline's legend names every colour
and mark it draws. What is checked is what the user sees: drawn text and its rectangles, tooltips."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QEvent, QObject, QPoint, QPointF, QRect, QRectF  # noqa: E402
from PySide6.QtGui import QImage, QPainter  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QPushButton, QToolTip  # noqa: E402

from conftest import open_and_wait  # noqa: E402
from inspector.core.analysis.user_names import unit_title  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
SIZES = [(1280, 720), (1920, 1080)]
ELLIPSIS = "…"


def sized(qtbot, window, size: tuple[int, int], tab: str):
    window.resize(*size)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == size, timeout=10_000)
    view = window.views[tab]
    window.tabs.setCurrentWidget(view)
    qtbot.waitUntil(view.isVisible, timeout=10_000)
    return view


def elided_from(shown: str, whole: str) -> bool:
    """`shown` is `whole`, or `whole` elided (its start and its end kept around one ellipsis)."""
    if shown == whole:
        return True
    head, mark, tail = shown.partition(ELLIPSIS)
    return bool(mark) and whole.startswith(head) and whole.endswith(tail) and len(head) + len(tail) < len(whole)


# --- Kernels ----------------------------------------------------------------------------------
def axis_texts(plot) -> list[tuple[QRect, str]]:
    """The left axis's tick labels as pyqtgraph draws them, in the plot widget's pixels."""
    axis = plot.getAxis("left")
    image = QImage(4, 4, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    try:
        _axis, _ticks, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [(plot.mapFromScene(axis.mapRectToScene(rect)).boundingRect(), text) for rect, _flags, text in texts]


def plot_rows(window) -> dict:
    """Each plot and the whole labels of its rows, from the session (not from the view)."""
    from inspector.core.analysis.kernel_plots import kernel_bars, memory_bars, op_family_bars

    plots, session = window.kernels_view, window.model.loaded.session
    results = session.results  # the bundled capture has them
    return {plots.kernels: [row.label for row in kernel_bars(window.model.loaded.kernel_time, 15)],
            plots.families: [row[0] for row in op_family_bars(results)],
            plots.units: [unit_title(unit) for unit in session.units if unit.compile_s is not None],
            plots.memory: [row[0] for row in memory_bars(results)]}


def hover(qtbot, widget, point: QPoint) -> None:
    QTest.mouseMove(widget, point + QPoint(1, 1))
    QTest.mouseMove(widget, point)


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_kernel_chart_labels_are_all_there_never_overlap_and_are_elided_only_when_out_of_room(
        qtbot, window, no_slot_errors, size):
    open_and_wait(qtbot, window, BUNDLED)
    plots = sized(qtbot, window, size, "Kernels")
    rows = plot_rows(window)
    assert rows[plots.kernels] and rows[plots.families] and rows[plots.units]
    for plot, labels in rows.items():
        qtbot.waitUntil(lambda: len(axis_texts(plot)) == len(labels), timeout=10_000)  # every row labelled
        texts = axis_texts(plot)
        for (rect, text), whole in zip(texts, labels):
            assert plot.rect().contains(rect), f"{text!r} drawn outside its plot"
            assert elided_from(text, whole), f"{text!r} is not {whole!r} nor its elision"
            if text != whole:  # elided: only because the labels already take a fair share of the plot
                assert plot.getAxis("left").width() >= 0.4 * plot.width(), f"{whole!r} elided beside empty space"
        for index, (rect, text) in enumerate(texts):
            for other, other_text in texts[index + 1:]:
                assert not rect.intersects(other), f"{text!r} overlaps {other_text!r}"
        labelled = [rect for rect, _ in texts]
        assert sorted(labelled, key=lambda r: r.top()) == labelled  # in the order of the bars, top down
    if size == (1920, 1080):  # half of a 1920 window's plot holds every kernel's name whole
        assert [text for _, text in axis_texts(plots.kernels)] == rows[plots.kernels]


def test_a_kernel_bars_label_keeps_the_kernels_name_whole_at_1280(qtbot, window, no_slot_errors):
    """At 1280×720 `extern_kernels.addmm line 103 (54% of [0/1])` was shown as `extern_kernels.ad...03 (54% of
    [0/1])`: cut inside the name and the line number. A label that does not fit is cut between words."""
    open_and_wait(qtbot, window, BUNDLED)
    plots = sized(qtbot, window, (1280, 720), "Kernels")
    labels = plot_rows(window)[plots.kernels]
    qtbot.waitUntil(lambda: len(axis_texts(plots.kernels)) == len(labels), timeout=10_000)
    shown = [text for _, text in axis_texts(plots.kernels)]
    assert shown != labels, "at 1280 the bundled session's kernel labels do not all fit: the case this test is for"
    for text, whole in zip(shown, labels):
        head = text.removesuffix(ELLIPSIS).rstrip()
        assert text == whole or (whole.startswith(head) and whole[len(head)] == " "), (text, whole)
        assert whole.split()[0] in text, f"{text!r} lost the kernel's name"


def test_an_elided_label_shows_the_whole_name_on_hover(qtbot, window, no_slot_errors):
    from PySide6.QtCore import Qt

    open_and_wait(qtbot, window, BUNDLED)
    plots = sized(qtbot, window, (1280, 720), "Kernels")
    window.resizeDocks([window.session_dock], [560], Qt.Orientation.Horizontal)  # a wide tree: narrow plots
    rows = plot_rows(window)
    plot = plots.units
    def elided():  # beside a wide tree a resumed function's unit name does not fit
        return [(rect, text, whole) for (rect, text), whole in zip(axis_texts(plot), rows[plot]) if text != whole]

    qtbot.waitUntil(lambda: len(axis_texts(plot)) == len(rows[plot]) and bool(elided()), timeout=10_000)
    rect, text, whole = elided()[0]
    hover(qtbot, plot.viewport(), rect.center())
    qtbot.waitUntil(lambda: whole in QToolTip.text(), timeout=10_000)


def test_eager_vs_compiled_legends_name_both_and_cover_no_bar(qtbot, window, no_slot_errors):
    import pyqtgraph as pg

    open_and_wait(qtbot, window, BUNDLED)
    plots = sized(qtbot, window, (1280, 720), "Kernels")
    for plot in (plots.families, plots.memory):
        item = plot.getPlotItem()
        view = item.getViewBox()
        bars = [view.mapViewToScene(QRectF(0, y - bar.opts["height"] / 2, width, bar.opts["height"])).boundingRect()
                for bar in item.items if isinstance(bar, pg.BarGraphItem)
                for y, width in zip(bar.opts["y"], bar.opts["width"])]
        assert len(bars) >= 2
        legends = [item.titleLabel] + ([item.legend] if item.legend is not None else [])
        words = item.titleLabel.text + " ".join(
            label.text for _sample, label in (item.legend.items if item.legend else []))
        assert "eager" in words and "compiled" in words
        for legend in legends:
            area = legend.sceneBoundingRect()
            assert QRectF(plot.rect()).contains(QRectF(plot.mapFromScene(area).boundingRect()))
            for bar in bars:
                assert not area.intersects(bar), f"the legend of {plot.getPlotItem().titleLabel.text!r} covers a bar"


class ToolTipSpy(QObject):
    """Counts the tooltip requests Qt sends a widget (after the mouse rests on it)."""

    def __init__(self, widget):
        super().__init__(widget)
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, _watched, event) -> bool:  # noqa: N802
        if event.type() == QEvent.Type.ToolTip:
            self.count += 1
        return False


def test_a_kernel_bar_tooltip_stays_when_qt_asks_for_the_plots_own(qtbot, window, no_slot_errors):
    open_and_wait(qtbot, window, BUNDLED)
    plots = sized(qtbot, window, (1280, 720), "Kernels")
    plot = plots.kernels
    index = 0  # the longest bar
    scene = plot.getViewBox().mapViewToScene(QPointF(plots.kernel_values[index] / 2, index))
    point = plot.mapFromScene(scene)
    QToolTip.hideText()
    hover(qtbot, plot.viewport(), point)
    qtbot.waitUntil(lambda: QToolTip.isVisible() and plots.kernel_labels[index] in QToolTip.text(), timeout=10_000)
    spy = ToolTipSpy(plot.viewport())  # the mouse rests: Qt asks the widget under it for its tooltip
    qtbot.waitUntil(lambda: spy.count > 0, timeout=10_000)
    assert QToolTip.isVisible()
    assert plots.kernel_labels[index] in QToolTip.text() and "µs per call" in QToolTip.text()
    assert plot.toolTip() not in QToolTip.text()  # not the plot's generic "Time per kernel or op (…)"


# --- Diff ------------------------------------------------------------------------------------
def test_diff_titles_fit_their_panes_and_keep_the_whole_path_in_the_tooltip(qtbot, window, no_slot_errors, tmp_path):
    deep = tmp_path / ("a-folder-with-a-long-name-as-runs-on-a-cluster-have-" * 2).rstrip("-")
    run_a, run_b = deep / "mlp_breaks_run_a", deep / "mlp_breaks_run_b_after_the_fix"
    for target in (run_a, run_b):
        shutil.copytree(BUNDLED, target)
    open_and_wait(qtbot, window, run_a)
    sized(qtbot, window, SIZES[1], "Summary")  # compared from another tab, then the window is made smaller
    diff = window.diff_view
    window.compare_with(run_b)
    qtbot.waitUntil(lambda: diff.labels[1].toolTip().endswith("mlp_breaks_run_b_after_the_fix"), timeout=60_000)
    qtbot.waitUntil(lambda: diff.differences.count() > 0, timeout=60_000)
    for size in reversed(SIZES):
        sized(qtbot, window, size, "Diff")
        texts = []
        for label, side, run in zip(diff.labels, "AB", (run_a, run_b)):
            assert label.toolTip() == f"{side}: {run}"
            width = label.fontMetrics().horizontalAdvance(label.text())
            assert width <= label.contentsRect().width(), f"{label.text()!r} is cut by its pane"
            assert elided_from(label.text(), label.toolTip())
            assert label.text().startswith(f"{side}: ")
            left = label.mapTo(diff, label.contentsRect().topLeft())
            texts.append(QRect(left, label.fontMetrics().boundingRect(label.text()).size()).adjusted(0, 0, 4, 0))
        assert not texts[0].intersects(texts[1]), "the A and B titles run into each other"


# --- Break map --------------------------------------------------------------------------------
def test_break_map_labels_are_elided_never_cut_with_the_whole_label_on_hover(qtbot, window, no_slot_errors):
    open_and_wait(qtbot, window, BUNDLED)
    graph = sized(qtbot, window, (1280, 720), "Graph")
    break_map = graph.break_map
    qtbot.waitUntil(break_map.isVisible, timeout=10_000)
    break_map.repaint()
    labels = break_map.drawn_labels
    assert labels
    metrics = break_map.fontMetrics()
    for rect, shown, whole in labels:
        assert metrics.horizontalAdvance(shown) <= rect.width() + 0.5, f"{shown!r} is cut"
        assert shown == whole or (shown.endswith(ELLIPSIS) and whole.startswith(shown[:-1])), shown
    rect, shown, whole = next(label for label in labels if label[1] != label[2])  # "[1/0] torc…" at 1280
    hover(qtbot, break_map, rect.center().toPoint())
    qtbot.waitUntil(lambda: whole in QToolTip.text(), timeout=10_000)


# --- Timeline ---------------------------------------------------------------------------------
def test_timeline_legend_names_every_colour_and_marker_it_draws(qtbot, window, no_slot_errors):
    from inspector.gui.views.qt_timeline import STEP_COLOURS

    open_and_wait(qtbot, window, BUNDLED)
    timeline = sized(qtbot, window, (1280, 720), "Timeline")
    drawn = {STEP_COLOURS[bar.step] for bar in timeline.timeline.bars}
    assert STEP_COLOURS[None] in drawn and timeline.timeline.markers  # grey stages and green markers here
    drawn.add(timeline.markers.opts["brush"].color().name())
    drawn.add(timeline.gantt and "#d64545")  # the outline of a stage that never ended
    explained = {colour for _entry, colour in timeline.legend}
    assert drawn <= explained
    entries = [entry for entry, _colour in timeline.legend]
    rects = [QRect(entry.mapTo(timeline, QPoint(0, 0)), entry.size()) for entry in entries]
    for entry, rect in zip(entries, rects):
        assert entry.isVisible() and entry.text() and entry.toolTip()
        assert timeline.rect().contains(rect), f"{entry.text()!r} is cut"
        assert entry.fontMetrics().horizontalAdvance(entry.text().split(">")[-1]) <= entry.contentsRect().width()
    header = timeline.totals.horizontalHeader()  # the stage-times table beside the chart: headers whole
    qtbot.waitUntil(lambda: header.sectionSize(0) > 0, timeout=10_000)
    for column in range(timeline.totals.columnCount()):
        text = timeline.totals.horizontalHeaderItem(column).text()
        assert header.fontMetrics().horizontalAdvance(text) + 8 <= header.sectionSize(column), f"header {text!r} is cut"
    for index, rect in enumerate(rects):
        assert not any(rect.intersects(other) for other in rects[index + 1:])

    # a marker tells its name on hover
    lane, t, name = timeline.timeline.markers[0]
    timeline.plot.setXRange(max(0.0, t - 0.5), t + 0.5, padding=0)
    qtbot.waitUntil(lambda: timeline.plot.getViewBox().viewRange()[0][0] <= t, timeout=10_000)
    scene = timeline.plot.getViewBox().mapViewToScene(QPointF(t, lane * timeline.timeline.depth + 0.5))
    hover(qtbot, timeline.plot.viewport(), timeline.plot.mapFromScene(scene))
    qtbot.waitUntil(lambda: name in timeline.hover_text, timeout=10_000)


# --- Graph --------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_graph_toolbar_fits_beside_the_session_column_with_room_to_search(qtbot, window, no_slot_errors, size):
    """In the default layout every control of the Graph's toolbar is whole, none over another, and the
    search box keeps room for a regex (it was squeezed to ~150 px, touching the overlay box, at 1280)."""
    from inspector.gui.views.graph.qt_graph_view import SEARCH_MIN_PX

    open_and_wait(qtbot, window, BUNDLED)
    graph = sized(qtbot, window, size, "Graph")
    window.reset_layout()
    controls = [graph.stage, graph.search, graph.overlay, *graph.findChildren(QPushButton)]
    controls = [control for control in controls if control.isVisible() and control.parent() is graph]

    def laid_out() -> bool:
        boxes = sorted((control.mapTo(graph, control.rect().topLeft()).x(), control) for control in controls)
        apart = all(left + control.width() <= next_left for (left, control), (next_left, _) in zip(boxes, boxes[1:]))
        last_left, last = boxes[-1]
        return apart and last_left + last.width() <= graph.width() and graph.search.width() >= SEARCH_MIN_PX
    qtbot.waitUntil(laid_out, timeout=10_000)
    assert all(control.width() >= control.minimumSizeHint().width() for control in controls)
    export = next(control for control in controls if isinstance(control, QPushButton) and control.text() == "Export")
    assert [action.text() for action in export.menu().actions()] == ["SVG (vector)…", "PNG (image)…"]


# --- Code ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
def test_code_bar_shows_where_kernel_nodes_come_from_uncut(qtbot, window, no_slot_errors, size):
    """The Code tab's bar ends with where the kernels' nodes come from ("nodes: exact (provenance)"):
    shown whole, inside the bar, however long an entry of the texts list is."""
    open_and_wait(qtbot, window, BUNDLED)
    code = sized(qtbot, window, size, "Code")
    code.texts.setCurrentIndex(0)  # output code: its kernels' origin is shown
    qtbot.waitUntil(lambda: code.origin.text().startswith(("nodes:", "no kernels")), timeout=10_000)
    entries = code.texts.count()
    code.texts.addItem("artifact " + "named_by_the_log_" * 8)  # an artifact's name is the log's to choose
    for index in range(entries):
        code.texts.setCurrentIndex(index)
        qtbot.waitUntil(lambda: code.origin.isVisible(), timeout=10_000)
        label = code.origin
        whole = label.fontMetrics().horizontalAdvance(label.text())
        qtbot.waitUntil(lambda: label.width() >= whole, timeout=5_000)  # once the bar is laid out again
        right = label.mapTo(code, label.rect().topRight()).x()
        assert right <= code.width(), f"{label.text()!r} ends at {right} of {code.width()}"


def test_a_kernel_bar_is_one_call_site_of_one_unit_and_clicking_it_keeps_the_profile_warning(qtbot, window,
                                                                                              no_slot_errors):
    """Each bar is a call site of one unit (labelled with its unit and share of that unit), and clicking
    it selects that unit's kernel, not another unit's of the same name; the eager profile's warning stays."""
    from PySide6.QtCore import Qt

    open_and_wait(qtbot, window, BUNDLED)
    plots = sized(qtbot, window, (1280, 720), "Kernels")
    warning = plots.note.text()
    assert "EAGER PROFILE INCONSISTENT" in warning
    tips = [tip for tip, _value in plots.rows[plots.kernels]]
    sites = plots.kernel_sites
    assert sites and all(site is not None and f"of [{site.unit}]" in label
                         for site, label in zip(sites, plots.kernel_labels))
    assert all(tip.endswith("click: show its code") and "per launch ×" in tip for tip in tips)
    index = next(at for at, site in enumerate(sites) if site.unit == "2/1")
    point = plots.kernels.mapFromScene(plots.kernels.getViewBox().mapViewToScene(
        QPointF(plots.kernel_values[index] / 2, index)))
    QTest.mouseClick(plots.kernels.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, point)
    qtbot.waitUntil(lambda: window.model.kernel is sites[index].kernel, timeout=10_000)
    assert window.model.unit is sites[index].compile_unit and str(window.model.unit.compile_id) == "[2/1]"
    assert warning in plots.note.text()
