"""One lane per rank: each rank's compile units as bars along its lane, aligned on the rank's own first
compile (or, with the toggle, on one wall clock shared by every rank). A unit a divergence finding
names is drawn in its own colour, a failed or cut-off compile outlined in red: which rank compiled
what, when and for how long, and where the ranks part ways, at a glance even for hundreds of ranks.
Drawn from the per-rank index, so it shows with a big job's overview."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QToolTip, QVBoxLayout, QWidget

from inspector.core.analysis.ranks import DIFFERS, RankReport, rank_timeline
from inspector.core.analysis.timeline import Timeline
from inspector.core.numbers import seconds
from inspector.gui.qt_plain_text import plain_tip
from inspector.gui.views.qt_timeline import GanttItem, LaneAxis

COLOURS = {None: "#8a8f98", DIFFERS: "#d9822b"}
LEGEND = "Grey: a compile unit · orange: one a divergence finding names · red outline: failed or cut off"


class QtRankLanes(QWidget):
    sigUnitClicked = Signal(int, str)  # lane (the rank's place in the report), compile id

    def __init__(self):
        super().__init__()
        self.report: RankReport | None = None
        self.timeline: Timeline | None = None
        self.gantt: GanttItem | None = None
        self.hover_text = ""  # the last tooltip shown (what a test or a screen reader can read back)
        self.plot = pg.PlotWidget(background=self.palette().base().color(), axisItems={"left": LaneAxis()})
        self.plot.invertY(True)
        self.plot.showGrid(x=True, y=False, alpha=0.2)
        self.plot.getPlotItem().hideButtons()
        for side in ("left", "bottom"):
            self.plot.getAxis(side).setTextPen(self.palette().text().color())
        self._hover = pg.SignalProxy(self.plot.scene().sigMouseMoved, rateLimit=30, slot=self._on_hover)
        self.plot.scene().sigMouseClicked.connect(self._on_click)
        self.wall_clock = QCheckBox("Shared wall clock")
        self.wall_clock.setToolTip("Off: each rank's lane starts at its own first compile.\n"
                                   "On: all ranks on one clock, from the first compile of any rank.")
        self.wall_clock.toggled.connect(lambda _on: self._draw())
        legend = QLabel(LEGEND)
        legend.setTextFormat(Qt.TextFormat.PlainText)
        row = QHBoxLayout()
        row.addWidget(legend, 1)
        row.addWidget(self.wall_clock)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.plot)

    def show_report(self, report: RankReport | None) -> None:
        self.report = report
        self._draw()

    def _draw(self) -> None:
        if self.report is None:
            self.plot.clear()
            self.timeline = self.gantt = None
            return
        timeline = self.timeline = rank_timeline(self.report, self.wall_clock.isChecked())
        self.plot.clear()
        self.gantt = GanttItem(timeline, COLOURS)
        self.plot.addItem(self.gantt)
        self.plot.getAxis("left").set_lanes(timeline.lanes, 1)
        self.plot.setLabel("bottom", "time since the first compile of any rank" if timeline.wall_clock
                           else "time since each rank's first compile", units="s")
        self.plot.setYRange(0, max(1, len(timeline.lanes)), padding=0.02)
        self.plot.setXRange(0, max(timeline.end_s, 1e-3), padding=0.01)

    def _bar_at(self, scene_pos) -> int | None:
        return self.gantt.bar_under(scene_pos) if self.gantt is not None else None

    def _on_hover(self, event) -> None:
        index = self._bar_at(event[0])
        if index is None:
            QToolTip.hideText()
            return
        bar = self.timeline.bars[index]
        rank = self.timeline.lane_ranks[bar.lane]
        text = (f"{self.timeline.lanes[bar.lane]} {bar.compile_id}: {seconds(bar.end_s - bar.start_s)}, "
                f"from {seconds(bar.start_s)}"
                + ("\nnamed by a divergence finding" if bar.step == DIFFERS else "")
                + ("\nthe compile failed or was cut off" if bar.is_open else "")
                + f"\nclick: select {bar.compile_id} of {'rank ' + str(rank) if rank is not None else 'this log'}")
        QToolTip.showText(self.plot.mapToGlobal(self.plot.mapFromScene(event[0])), plain_tip(text), self.plot)
        self.hover_text = text

    def _on_click(self, event) -> None:
        index = self._bar_at(event.scenePos())
        if index is not None:
            bar = self.timeline.bars[index]
            self.sigUnitClicked.emit(bar.lane, bar.compile_id)
