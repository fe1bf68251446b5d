"""The History tab: the runs of the open run's script over time (compile time, recompiles, breaks,
cache hit rate, S with its interval), a marker where torch or the git commit changed; a click on a
point opens that run, Ctrl+click on two opens their diff. The runs come from the run history
(core/history), recorded and read on a worker as each session opens."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontMetricsF
from PySide6.QtWidgets import QApplication, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from inspector.core.history.history_text import changes, first_seen, speedup_text
from inspector.core.history.recording import record_and_read
from inspector.core.history.run_record import RunRecord
from inspector.core.numbers import seconds
from inspector.gui.qt_background import LatestRequest
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel


@dataclass(frozen=True)
class Trend:
    """One plot of the tab: its title, unit, the figure of a run it draws (None: not measured), and
    which first-seen events (`history_text.first_seen`) it marks."""

    title: str
    unit: str
    value: Callable[[RunRecord], float | None]
    events: str = ""
    counts: bool = False  # whole numbers: its axis is never labelled 2.8 recompiles


TRENDS = (Trend("Compile time", "s", lambda run: run.compile_s),
          Trend("Recompiles", "", lambda run: run.recompiles, "recompiles", counts=True),
          Trend("Graph breaks", "", lambda run: run.breaks, "breaks", counts=True),
          Trend("Cache hit rate", "%", lambda run: None if run.cache_hit_rate is None else 100 * run.cache_hit_rate),
          Trend("Speedup S", "×", lambda run: (run.speedup or {}).get("value")))
COLUMNS = ("run", "when", "torch", "commit", "compile", "breaks", "recompiles", "cache hit", "S", "source")


class TrendAxis(pg.AxisItem):
    """A trend's value axis, its labels half a line of text apart at least: at 1280×720 a plot is a few lines
    tall, and pyqtgraph's spacing (from the plot's height alone) stacked 23.0, 23.2, 23.4 and 23.6 on top
    of each other. A count is labelled in whole numbers only."""

    def __init__(self, counts: bool):
        super().__init__("left")
        self.counts = counts

    def tickSpacing(self, minVal: float, maxVal: float, size: float):  # noqa: N802, N803 (pyqtgraph's names)
        span = abs(maxVal - minVal)
        if not (math.isfinite(span) and span > 0 and size > 0):
            return super().tickSpacing(minVal, maxVal, size)
        line = QFontMetricsF(self.style["tickFont"] or self.font()).height()
        labels = max(1, int(size // (1.5 * line)))  # each label with half a line of space to the next
        raw = span / labels
        power = 10 ** math.floor(math.log10(raw))
        step = next(power * factor for factor in (1, 2, 5, 10) if power * factor >= raw)
        return [(max(step, 1) if self.counts else step, 0)]


class QtHistoryView(QWidget):
    sigOpenRun = Signal(str)  # the stored path of a run to open
    sigCompareRuns = Signal(str, str)  # two runs' paths: A, B

    def __init__(self, model: QtSessionModel, store: Callable[[], str | None] = lambda: None,
                 recording: Callable[[], bool] = lambda: True):
        super().__init__()
        self.model = model
        self._store, self._recording = store, recording
        self._reads = LatestRequest(self)
        self.runs: list[RunRecord] = []
        self.selected: list[int] = []  # the indexes Ctrl+clicked, at most two
        self.note = QLabel("Open a run: the runs of its script are shown here over time.")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        # the window's colours, as every other plot of the app (pyqtgraph's own black would be the one dark pane)
        self.plots = pg.GraphicsLayoutWidget()
        self.plots.setBackground(self.palette().base().color())
        self.plot_items: dict[str, pg.PlotItem] = {}
        self.points: dict[str, pg.ScatterPlotItem] = {}
        self.marker_labels: list[str] = []  # torch or commit changes, as the Compile time plot labels them
        self.event_labels: dict[str, list[str]] = {}  # plot title → the first-seen events it marks
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.cellDoubleClicked.connect(lambda row, _column: self._open(row))
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.plots, 3)
        layout.addWidget(self.table, 1)
        first = None
        for index, trend in enumerate(TRENDS):
            # two plots a row: five stacked in a 720-pixel window leave no room for an axis's values
            plot = self.plots.addPlot(row=index // 2, col=index % 2, title=trend.title,
                                      axisItems={"left": TrendAxis(trend.counts)})
            text = self.palette().text().color()
            for side in ("left", "bottom"):
                plot.getAxis(side).setTextPen(text)
            plot.setTitle(trend.title, color=text.name())
            plot.setLabel("left", trend.unit, color=text.name())
            plot.getAxis("left").enableAutoSIPrefix(False)  # a flat 0 % is "%", not "% (x0.001)"
            plot.showGrid(y=True, alpha=0.3)
            if first is None:
                first = plot
            else:
                plot.setXLink(first)
            points = pg.ScatterPlotItem(size=9, brush=pg.mkBrush("#3b78c4"), hoverable=True)
            points.sigClicked.connect(self._on_point_clicked)
            plot.addItem(points)
            self.plot_items[trend.title], self.points[trend.title] = plot, points
        # after every view shows the session (not while they take it): the whole summary the history keeps
        # is made on a worker, from the index cache when this version of the run was summarised before
        model.sigLoaded.connect(self._take)

    # --- the model's sessions ------------------------------------------------------------------
    def _take(self, loaded: LoadedSession) -> None:
        session = loaded.session
        if session.preview is not None:
            return
        store, record = self._store(), self._recording()
        self._reads.run(lambda: record_and_read(session, store, record), self._on_read,
                        lambda message, _tb: self.note.setText(f"The run history could not be read: {message}"))

    def _on_read(self, result) -> None:
        recorded, script, runs = result
        said = f" ({recorded.said})" if recorded.failed else ""
        self.show_runs(script, runs, said)

    # --- drawing -------------------------------------------------------------------------------
    def show_runs(self, script: str | None, runs: list[RunRecord], note: str = "") -> None:
        # a run picked for a comparison stays picked when the runs are read again (each opened run does that)
        picked = [self.runs[index].run_id for index in self.selected if index < len(self.runs)]
        self.runs = list(runs)
        place = {run.run_id: index for index, run in enumerate(self.runs) if run.run_id is not None}
        self.selected = [place[run_id] for run_id in picked if run_id in place]
        if script is None:
            self.note.setText("This run names no script: there is no history to show." + note)
        else:
            self.note.setText(f"{len(runs)} run(s) of {script}, oldest first. Click a point to open that run; "
                              f"Ctrl+click two to compare them.{note}")
        self.marker_labels, self.event_labels = [], {}
        marks, events = changes(self.runs), first_seen(self.runs)
        for trend in TRENDS:
            plot, points = self.plot_items[trend.title], self.points[trend.title]
            for item in list(plot.items):
                if item is not points:
                    plot.removeItem(item)
            spots = [{"pos": (index + 1, value), "data": index} for index, run in enumerate(self.runs)
                     if (value := trend.value(run)) is not None]
            points.setData(spots)
            if trend.title == "Speedup S":
                self._interval_bars(plot)
            for index, words in marks:
                line = pg.InfiniteLine(pos=index + 0.5, angle=90, pen=pg.mkPen("#c0392b", style=Qt.PenStyle.DashLine),
                                       label=words if trend is TRENDS[0] else None,
                                       labelOpts={"position": 0.9, "color": "#c0392b"})
                plot.addItem(line)
                if trend is TRENDS[0]:
                    self.marker_labels.append(words)
            for index, words in events.get(trend.events, []):
                plot.addItem(pg.InfiniteLine(pos=index + 1, angle=90, pen=pg.mkPen("#d68910", width=1),
                                             label=words, labelOpts={"position": 0.8, "color": "#d68910"}))
                self.event_labels.setdefault(trend.title, []).append(words)
            plot.getAxis("bottom").setTicks([[(index + 1, f"#{run.run_id}") for index, run in enumerate(self.runs)]])
        if self.runs:
            self.plot_items[TRENDS[0].title].setXRange(0.5, len(self.runs) + 0.5)
        self._fill_table()

    def _interval_bars(self, plot: pg.PlotItem) -> None:
        rows = [(index + 1, speedup) for index, run in enumerate(self.runs)
                if (speedup := run.speedup_estimate) is not None and speedup.has_interval]
        if rows:
            x = [index for index, _ in rows]
            y = [speedup.value for _, speedup in rows]
            plot.addItem(pg.ErrorBarItem(x=numpy.array(x, dtype=float), y=numpy.array(y, dtype=float),
                                         top=numpy.array([s.high - s.value for _, s in rows]),
                                         bottom=numpy.array([s.value - s.low for _, s in rows]), beam=0.2))
        plot.addItem(pg.InfiniteLine(pos=1.0, angle=0, pen=pg.mkPen("#888", style=Qt.PenStyle.DotLine)))

    def _fill_table(self) -> None:
        self.table.setRowCount(len(self.runs))
        for row, run in enumerate(self.runs):
            rate = run.cache_hit_rate
            cells = (f"#{run.run_id}", time.strftime("%Y-%m-%d %H:%M", time.localtime(run.run_at)),
                     run.torch_version or "?", (run.git_commit or "-")[:10], seconds(run.compile_s),
                     f"{run.breaks} at {run.break_sites} site(s)", str(run.recompiles),
                     f"{rate:.0%}" if rate is not None else "-", speedup_text(run), run.source)
            for column, text in enumerate(cells):
                self.table.setItem(row, column, QTableWidgetItem(text))
        self.table.resizeColumnsToContents()

    # --- clicks --------------------------------------------------------------------------------
    def _on_point_clicked(self, _item, spots, event=None) -> None:
        if not len(spots):
            return
        index = spots[0].data()
        modifiers = QApplication.keyboardModifiers() if event is None else event.modifiers()
        if modifiers & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier):
            self.select(index)
        else:
            self._open(index)

    def select(self, index: int) -> None:
        """Add a run to the pair to compare; the second opens the diff (first A, second B)."""
        if index in self.selected:
            self.selected.remove(index)
            return
        self.selected.append(index)
        if len(self.selected) == 2:
            a, b = (self.runs[i].source for i in self.selected)
            self.selected = []
            self.sigCompareRuns.emit(a, b)

    def _open(self, index: int) -> None:
        if 0 <= index < len(self.runs):
            self.sigOpenRun.emit(self.runs[index].source)
