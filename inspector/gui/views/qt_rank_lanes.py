"""One lane per rank: each rank's compile units as bars along its lane, aligned on the rank's own first
compile (or, with the toggle, on one wall clock shared by every rank). A unit a divergence finding
names is drawn in its own colour, a failed or cut-off compile outlined in red, a lane with nothing to
draw hatched with a note: which rank compiled what, when and for how long, and where the ranks part
ways, at a glance even for hundreds of ranks. Drawn from the per-rank index, so it shows with a big
job's overview."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontInfo
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QToolTip, QVBoxLayout, QWidget

from inspector.core.analysis.rank_figures import RankFigures, RankReport, UnitPrint
from inspector.core.analysis.rank_lanes import DIFFERS, rank_timeline
from inspector.core.analysis.timeline import Timeline
from inspector.core.numbers import seconds
from inspector.gui.qt_plain_text import plain_tip
from inspector.gui.views.qt_timeline import GanttItem, LaneAxis

COLOURS = {None: "#8a8f98", DIFFERS: "#d9822b"}
NOTE_MIN_PX = 8  # the smallest note text, in pixels
LEGEND = ("Grey: a compile unit · orange: a rank a divergence finding names · red outline: failed or cut off · "
          "hatched: nothing recorded")
LEGEND_TIP = ("Orange marks the units of the ranks a divergence finding names (where ranks differ from each other); "
              "a break or a recompile alone is listed under Problems, not coloured here.")


def lane_note(figures: RankFigures) -> tuple[str, str]:
    """What an empty lane says (a rank's lane with no bar looked like a rank with nothing wrong), and
    its hover's explanation."""
    if not figures.units:
        return ("no compile recorded",
                "its log holds no compile: torch.compile never ran on this rank, or the rank stopped before it did")
    return (f"{figures.units} compile unit{'s' if figures.units > 1 else ''}, no time recorded",
            "its log records no time for any of its compile units, so none can be placed on the clock")


def outcome_line(unit: UnitPrint) -> str:
    """How a unit's compile ended, for the hover of one that did not compile."""
    if unit.outcome == "cut":
        return "\nthe log ends inside this compile (the rank crashed or was stopped): drawn up to its last event"
    if unit.outcome == "failed":
        return "\nthe compile failed" + ("" if unit.compile_time_s is not None else
                                          ": drawn from its first to its last traced event")
    return ""


class LaneNotes(pg.GraphicsObject):
    """Each lane with no bar hatched across the time axis, with its note at the left of the view where
    the lane is tall enough for text: at any zoom such a rank stands out from its neighbours."""

    def __init__(self, notes: dict[int, str], end_s: float, colour: QColor):
        super().__init__()
        self.notes, self.end_s = notes, max(end_s, 1e-3)
        self.lanes = max(notes, default=0) + 1
        self.text_colour = colour
        hatch = QColor(colour)
        hatch.setAlpha(70)
        self.hatch = QBrush(hatch, Qt.BrushStyle.BDiagPattern)

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, self.end_s, self.lanes)

    def paint(self, painter, _option, _widget=None) -> None:
        view = self.getViewBox()
        if view is None or not self.notes:
            return
        (left, right), (low, high) = view.viewRange()
        left, right = max(left, 0.0), min(right, self.end_s)
        transform = painter.transform()
        shown = [(lane, transform.mapRect(QRectF(left, lane, right - left, 1)))
                 for lane in self.notes if low - 1 <= lane <= high]
        painter.save()
        painter.resetTransform()  # a pattern and text in pixels, whatever the zoom
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(self.hatch)
        painter.drawRects([rect.adjusted(0, rect.height() * 0.08, 0, -rect.height() * 0.08) for _lane, rect in shown])
        font = self._note_font(painter, abs(transform.m22()))
        if font is not None:
            painter.setFont(font)
            painter.setPen(self.text_colour)
            metrics = painter.fontMetrics()
            for lane, rect in shown:
                text = metrics.elidedText(self.notes[lane], Qt.TextElideMode.ElideRight, int(rect.width()) - 12)
                box = QRectF(rect.left() + 6, rect.top(), metrics.horizontalAdvance(text) + 8, rect.height())
                painter.fillRect(box, self.getViewWidget().backgroundBrush())  # the text over no hatching
                painter.drawText(box, Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()

    @staticmethod
    def _note_font(painter, lane_px: float) -> QFont | None:
        """The painter's font, smaller where a lane is thinner than its lines (a dozen ranks at 1280×720),
        or None where even NOTE_MIN_PX would not fit."""
        font = QFont(painter.font())
        size = min(QFontInfo(font).pixelSize(), int((lane_px - 2) / 1.25))  # a line is ~1.2 × the pixel size
        if size < NOTE_MIN_PX:
            return None
        font.setPixelSize(size)
        return font


class QtRankLanes(QWidget):
    sigUnitClicked = Signal(int, str)  # lane (the rank's place in the report), compile id

    def __init__(self):
        super().__init__()
        self.report: RankReport | None = None
        self.timeline: Timeline | None = None
        self.gantt: GanttItem | None = None
        self.notes: dict[int, tuple[str, str]] = {}  # lane → (note, explanation), for lanes with no bar
        self.hover_text = ""  # the last tooltip shown (what a test or a screen reader can read back)
        self.plot = pg.PlotWidget(background=self.palette().base().color(), axisItems={"left": LaneAxis()})
        self.plot.invertY(True)
        self.plot.showGrid(x=True, y=False, alpha=0.2)
        self.plot.getPlotItem().hideButtons()
        for side in ("left", "bottom"):
            self.plot.getAxis(side).setTextPen(self.palette().text().color())
        # rate-limited hovers, kept as long as the view (a dropped proxy delivers nothing)
        self.hover_proxies = (pg.SignalProxy(self.plot.scene().sigMouseMoved, rateLimit=30, slot=self._on_hover),)
        self.plot.scene().sigMouseClicked.connect(self._on_click)
        self.wall_clock = QCheckBox("Shared wall clock")
        self.wall_clock.setToolTip("Off: each rank's lane starts at its own first compile.\n"
                                   "On: all ranks on one clock, from the first compile of any rank.")
        self.wall_clock.toggled.connect(lambda _on: self._draw())
        legend = QLabel(LEGEND)
        legend.setToolTip(LEGEND_TIP)
        legend.setTextFormat(Qt.TextFormat.PlainText)
        row = QHBoxLayout()
        row.addWidget(legend, 1)
        row.addWidget(self.wall_clock)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.plot)

    def show_report(self, report: RankReport | None) -> None:
        """Draw `report`'s lanes; the same lanes again (a big job's details after its overview) stay
        as drawn, with what the user zoomed to."""
        same = (report is not None and self.report is not None and self.timeline is not None
                and not self.wall_clock.isChecked() and report.figures == self.report.figures
                and report.lanes == self.timeline)
        self.report = report
        if not same:
            self._draw()

    def _draw(self) -> None:
        self.plot.clear()
        if self.report is None:
            self.timeline = self.gantt = None
            self.notes = {}
            return
        timeline = self.timeline = (rank_timeline(self.report, True) if self.wall_clock.isChecked()
                                    else self.report.lanes)
        drawn = {bar.lane for bar in timeline.bars}
        self.notes = {lane: lane_note(figures) for lane, figures in enumerate(self.report.figures) if lane not in drawn}
        self.gantt = GanttItem(timeline, COLOURS)
        self.plot.addItem(self.gantt)
        self.plot.addItem(LaneNotes({lane: note for lane, (note, _why) in self.notes.items()}, timeline.end_s,
                                    self.palette().text().color()))
        self.plot.getAxis("left").set_lanes(timeline.lanes, 1)
        self.plot.setLabel("bottom", "time since the first compile of any rank" if timeline.wall_clock
                           else "time since each rank's first compile", units="s")
        self.plot.setYRange(0, max(1, len(timeline.lanes)), padding=0.02)
        self.plot.setXRange(0, max(timeline.end_s, 1e-3), padding=0.01)

    def _bar_at(self, scene_pos) -> int | None:
        return self.gantt.bar_under(scene_pos) if self.gantt is not None else None

    def _on_hover(self, event) -> None:
        index = self._bar_at(event[0])
        text = self._bar_tip(index) if index is not None else self._note_tip(event[0])
        if not text:
            QToolTip.hideText()
            return
        QToolTip.showText(self.plot.mapToGlobal(self.plot.mapFromScene(event[0])), plain_tip(text), self.plot)
        self.hover_text = text

    def _bar_tip(self, index: int) -> str:
        """Which unit the bar is, and which of its rank's units (the bars of one rank join when zoomed out)."""
        bar = self.timeline.bars[index]
        rank = self.timeline.lane_ranks[bar.lane]
        units = self.report.figures[bar.lane].unit_prints
        place = next(i for i, unit in enumerate(units) if unit.compile_id == bar.compile_id)
        return (f"{self.timeline.lanes[bar.lane]} {bar.compile_id}: {seconds(bar.end_s - bar.start_s)}, "
                f"from {seconds(bar.start_s)} (unit {place + 1} of {len(units)} of this rank)"
                + ("\nnamed by a divergence finding" if bar.step == DIFFERS else "")
                + outcome_line(units[place])
                + f"\nclick: select {bar.compile_id} of {'rank ' + str(rank) if rank is not None else 'this log'}")

    def _note_tip(self, scene_pos) -> str:
        """The explanation of the empty lane under the mouse, or ""."""
        if self.timeline is None:
            return ""
        lane = math.floor(self.plot.getViewBox().mapSceneToView(QPointF(scene_pos)).y())
        if lane not in self.notes:
            return ""
        note, why = self.notes[lane]
        return f"{self.timeline.lanes[lane]}: {note}\n{why}"

    def _on_click(self, event) -> None:
        index = self._bar_at(event.scenePos())
        if index is not None:
            bar = self.timeline.bars[index]
            self.sigUnitClicked.emit(bar.lane, bar.compile_id)
