"""Compile timeline (pyqtgraph): a Gantt of compile stages, one lane per compile unit with nested
stages as rows, coloured by pipeline step; zoom and pan on the time axis, hover details, markers for
cache hits and other instants (bar labels kept clear of them), stages that never ended outlined in
red, each colour and mark in the legend above; the own time per stage across the run beside it;
export as a Perfetto / Chrome trace. A distributed run shows one lane group per rank, each from its
own start, with a toggle to one shared wall clock."""

from __future__ import annotations

import json
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetrics, QPen
from PySide6.QtWidgets import (
    QCheckBox, QFileDialog, QHBoxLayout, QHeaderView, QLabel, QPushButton, QSizePolicy, QSplitter, QTableWidget,
    QTableWidgetItem, QToolTip,
    QVBoxLayout, QWidget,
)

from inspector.core.model.pipeline import PIPELINE
from inspector.core.analysis.compile_wall import wall_breakdown
from inspector.core.analysis.timeline import Bar, Timeline, chrome_trace
from inspector.core.numbers import seconds
from inspector.gui.qt_background import LatestRequest
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel
from inspector.gui.qt_shown_later import QtShownLater
from inspector.gui.qt_plain_text import plain_tip
from inspector.gui.views.qt_elide import QtBoundaryElideDelegate

STEP_COLOURS = {"graph capture": "#2b7bb9", "graph optimisation": "#8e5bb6", "code generation": "#e0a526",
                "backend compile": "#d9822b", None: "#8a8f98"}
MARKER_COLOUR, OPEN_COLOUR = "#2e9d4f", "#d64545"  # instants (cache hits, …); the outline of a stage never ended
LABEL_MIN_PX = 70
SEPARATE_MIN_PX = 5  # a bar at least this wide on screen is cut from the bars it touches…
GAP_MIN_ROW_PX = 4  # …where its row is at least this tall: a gap in a thinner one is lost in the crowd
MARKER_PX = 9  # an instant's diamond
MAX_LABELS = 400
LABELLED_RANKS = 64


def merged_rects(x0, x1, rows, min_width: float, px_per_row: float):
    """Level of detail: bars that would touch on screen (same pixel row, gaps under a pixel) become
    one rectangle, so zoomed out 10,000 spans cost a few hundred rectangles, zoomed in each its own."""
    x1 = np.maximum(x1, x0 + min_width)
    pixel_rows = np.floor(rows * min(1.0, px_per_row)) if px_per_row < 1.0 else rows
    order = np.lexsort((x0, pixel_rows))
    x0, x1, pixel_rows, rows = x0[order], x1[order], pixel_rows[order], rows[order]
    span = float(x1.max() - x0.min()) + 1.0
    shifted_end = np.maximum.accumulate(x1 + pixel_rows * span)  # running end, never across rows
    starts = np.ones(len(x0), dtype=bool)
    starts[1:] = (x0[1:] + pixel_rows[1:] * span > shifted_end[:-1] + min_width) | (pixel_rows[1:] != pixel_rows[:-1])
    index = np.nonzero(starts)[0]
    ends = np.maximum.reduceat(x1, index)
    return x0[index], ends, rows[index]


class LaneAxis(pg.AxisItem):
    """The left axis of a lane chart: as many lane names as fit without overlapping, evenly spaced,
    every lane's once zoomed in far enough. (Explicit ticks would draw all of them: with hundreds
    of ranks, an unreadable smear that costs more to paint than the bars.)"""

    def __init__(self):
        super().__init__("left")
        self.labels: list[str] = []
        self.rows_per_lane = 1

    def set_lanes(self, labels: list[str], rows_per_lane: int) -> None:
        self.labels, self.rows_per_lane = labels, max(1, rows_per_lane)
        self.picture = None  # drawn again with the new names
        self.update()

    def tickValues(self, minVal: float, maxVal: float, size: float):  # noqa: N802, N803 (pyqtgraph's names)
        if not self.labels or not (math.isfinite(minVal) and math.isfinite(maxVal)):
            return []
        low, high = sorted((minVal, maxVal))  # an inverted axis gives them top first
        first = max(0, int(low // self.rows_per_lane))
        last = min(len(self.labels) - 1, int(high // self.rows_per_lane))
        line = QFontMetrics(self.style["tickFont"] or self.font()).height() * 1.2
        step = max(1, math.ceil((last - first + 1) / max(1, int(size // line))))
        lanes = range(first + (-first) % step, last + 1, step)
        return [(step * self.rows_per_lane, [(lane + 0.5) * self.rows_per_lane for lane in lanes])]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph's name)
        lanes = (int(value // self.rows_per_lane) for value in values)
        return [self.labels[lane] if 0 <= lane < len(self.labels) else "" for lane in lanes]


class GanttItem(pg.GraphicsObject):
    """All bars in one item, painted from arrays: only bars in view, at least a pixel wide, bars that
    touch merged until wide enough to tell apart, with labels only where they fit and clear of the
    timeline's markers — so a frame costs the same at 100 or 10,000 spans. A bar's colour is
    `colours[bar.step]` (the pipeline steps' colours unless told otherwise)."""

    def __init__(self, timeline: Timeline, colours: dict[str | None, str] = STEP_COLOURS):
        super().__init__()
        self.timeline = timeline
        bars = timeline.bars
        self.x0 = np.array([bar.start_s for bar in bars], dtype=float)
        self.x1 = np.array([bar.end_s for bar in bars], dtype=float)
        self.row = np.array([bar.lane * timeline.depth + bar.depth for bar in bars], dtype=float)
        keys = list(colours)
        self.colour = np.array([keys.index(bar.step) for bar in bars], dtype=int)
        self.open = np.array([bar.is_open for bar in bars], dtype=bool)
        self.brushes = [QBrush(QColor(colour)) for colour in colours.values()]
        self.rows = max(1, len(timeline.lanes) * timeline.depth)
        # an instant is drawn on its lane's first row (the unit's outermost stage), its label clear of it
        self.marker_row = np.array([lane * timeline.depth for lane, _t, _name in timeline.markers], dtype=float)
        self.marker_t = np.array([t for _lane, t, _name in timeline.markers], dtype=float)
        order = np.lexsort((self.marker_t, self.marker_row))
        rows, firsts = np.unique(self.marker_row[order], return_index=True)
        self.markers_by_row = dict(zip(rows, np.split(self.marker_t[order], firsts[1:])))  # each row's, sorted

    def marker_spots(self) -> list[dict]:
        """The instants' markers for a scatter plot: position and name."""
        return [{"pos": (t, row + 0.5), "data": name}
                for t, row, (_lane, _t, name) in zip(self.marker_t, self.marker_row, self.timeline.markers)]

    def boundingRect(self) -> QRectF:
        return QRectF(0, 0, max(1e-6, float(self.x1.max()) if len(self.x1) else 1.0), self.rows)

    def bar_under(self, scene_pos) -> int | None:
        """The bar under a point of the scene (where the mouse is), or None."""
        view = self.getViewBox()
        if view is None:
            return None
        point = view.mapSceneToView(QPointF(scene_pos))
        return self.bar_at(point.x(), point.y(), slack=view.viewPixelSize()[0])

    def bar_at(self, x: float, y: float, slack: float = 0.0) -> int | None:
        """The bar at a point, else the nearest one within `slack` of it: a bar narrower than a pixel
        is drawn a pixel wide and merged with its neighbours, so the mouse over it may be just past it.
        Of bars equally near, the last (drawn on top)."""
        on_row = np.nonzero(self.row == np.floor(y))[0]
        distance = np.maximum(0.0, np.maximum(self.x0[on_row] - x, x - self.x1[on_row]))
        if not len(on_row) or distance.min() > slack:
            return None
        return int(on_row[np.nonzero(distance == distance.min())[0][-1]])

    def paint(self, painter, _option, _widget=None) -> None:
        view = self.getViewBox()
        if view is None or not len(self.x0):
            return
        (left, right), rows_in_view = view.viewRange()
        px_per_s = abs(painter.transform().m11()) or 1.0
        min_width = 1.0 / px_per_s
        visible = np.nonzero((self.x1 >= left) & (self.x0 <= right))[0]
        px_per_row = abs(painter.transform().m22()) or 1.0
        height = max(0.84, 1.0 / px_per_row)  # at least a pixel: a lane thinner than that still shows its bars
        top = (1.0 - height) / 2
        painter.setPen(Qt.PenStyle.NoPen)
        for key in range(len(self.brushes)):
            chosen = visible[self.colour[visible] == key]
            if not len(chosen):
                continue
            painter.setBrush(self.brushes[key])
            x0, x1, rows = merged_rects(self.x0[chosen], self.x1[chosen], self.row[chosen], min_width, px_per_row)
            painter.drawRects([QRectF(a, y + top, b - a, height) for a, b, y in zip(x0, x1, rows)])
        if px_per_row >= GAP_MIN_ROW_PX:  # not for hundreds of lanes zoomed out
            self._gaps(painter, visible, px_per_s, rows_in_view, top, height)
        unfinished = visible[self.open[visible]]
        if len(unfinished):
            pen = QPen(QColor(OPEN_COLOUR), 2)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRects([QRectF(self.x0[i], self.row[i] + top, self.x1[i] - self.x0[i], height)
                               for i in unfinished])
        self._labels(painter, visible, px_per_s, (left, right))

    def _gaps(self, painter, visible, px_per_s: float, rows_in_view, top: float, height: float) -> None:
        """Both ends of a bar wide enough on screen to tell apart are cut by a line of the background's
        colour: bars back to back (one compile unit after another) would else read as one long bar, the
        merging joining bars that touch. Narrower bars stay merged, so zoomed out nothing changes. Only
        the rows in view get them: unlike the merged bars, the lines grow in number with the bars."""
        low, high = sorted(rows_in_view)
        in_view = (self.row[visible] >= low - 1) & (self.row[visible] <= high)
        wide = visible[in_view & ((self.x1[visible] - self.x0[visible]) * px_per_s >= SEPARATE_MIN_PX)]
        if not len(wide):
            return
        pen = QPen(self.getViewWidget().backgroundBrush().color(), 1)
        pen.setCosmetic(True)
        painter.setPen(pen)
        edges, rows = np.concatenate([self.x0[wide], self.x1[wide]]), np.tile(self.row[wide] + top, 2)
        painter.drawLines([QLineF(x, y, x, y + height) for x, y in zip(edges, rows)])

    def _labels(self, painter, visible, px_per_s: float, view_x: tuple[float, float]) -> None:
        if abs(painter.transform().m22()) < painter.fontMetrics().height():
            return  # rows too thin for text at this zoom
        widths_px = (self.x1[visible] - self.x0[visible]) * px_per_s
        wide = visible[widths_px >= LABEL_MIN_PX]
        if not len(wide):
            return
        wide = wide[np.argsort(-(self.x1[wide] - self.x0[wide]))][:MAX_LABELS]
        transform = painter.transform()
        painter.save()
        painter.resetTransform()
        painter.setPen(QColor("white"))
        metrics = painter.fontMetrics()
        left, right = (transform.map(QPointF(x, 0)).x() for x in view_x)
        for index in wide:
            rect = transform.mapRect(QRectF(self.x0[index], self.row[index], self.x1[index] - self.x0[index], 1))
            room = rect.adjusted(3, 0, -3, 0)  # elided, never cut: the whole name is in the bar's tooltip
            room.setLeft(max(room.left(), left + 3))  # a bar begun left of the view is labelled in view
            room.setRight(min(room.right(), right - 3))
            whole = self.timeline.bars[index].name
            room = self._clear_of_markers(room, self.row[index], transform, metrics.horizontalAdvance(whole))
            name = metrics.elidedText(whole, Qt.TextElideMode.ElideRight, int(room.width()))
            painter.drawText(room, Qt.AlignmentFlag.AlignVCenter, name)
        painter.restore()

    def _clear_of_markers(self, room: QRectF, row: float, transform, text_px: int) -> QRectF:
        """The part of a label's room that no marker covers (a diamond over the text made it
        unreadable): the first stretch wide enough for the whole text, else the widest."""
        times = self.markers_by_row.get(row)
        if times is None:
            return room
        reach = MARKER_PX / 2 + 2
        xs = times * transform.m11() + transform.dx()  # in pixels, still sorted: the time axis is not flipped
        xs = xs[(xs > room.left() - reach) & (xs < room.right() + reach)]
        if not len(xs):
            return room
        stretches, start = [], room.left()
        for x in xs:
            stretches.append((start, x - reach))
            start = max(start, x + reach)
        stretches.append((start, room.right()))
        fits = [(a, b) for a, b in stretches if b - a >= text_px]
        a, b = fits[0] if fits else max(stretches, key=lambda stretch: stretch[1] - stretch[0])
        return QRectF(a, room.top(), max(0.0, b - a), room.height())


class QtTimeline(QWidget):
    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.timeline: Timeline | None = None
        self.gantt: GanttItem | None = None
        self.lane_units: list = []  # the compile unit drawn in each lane (units with spans, in order)
        self._unit_steps: dict = {}  # unit → its steps' own times, made when a bar of it is first hovered
        self.hover_text = ""  # the last tooltip shown (what a test or a screen reader can read back)
        self.selection = pg.LinearRegionItem(orientation="horizontal", movable=False,
                                             brush=pg.mkBrush(255, 200, 0, 60), pen=pg.mkPen(None))
        self.selection.setZValue(-10)
        self.plot = pg.PlotWidget(background=self.palette().base().color(), axisItems={"left": LaneAxis()})
        self.plot.setMouseEnabled(x=True, y=False)
        self.plot.invertY(True)
        self.plot.setLabel("bottom", "time since the first compile event", units="s")
        self.plot.showGrid(x=True, y=False, alpha=0.2)
        for side in ("left", "bottom"):
            self.plot.getAxis(side).setTextPen(self.palette().text().color())
        self.plot.getPlotItem().hideButtons()
        self.markers = pg.ScatterPlotItem(size=MARKER_PX, symbol="d", pen=None, brush=pg.mkBrush(MARKER_COLOUR))
        # rate-limited hovers, kept as long as the view (a dropped proxy delivers nothing)
        self.hover_proxies = (pg.SignalProxy(self.plot.scene().sigMouseMoved, rateLimit=30, slot=self._on_hover),)
        self.plot.scene().sigMouseClicked.connect(self._on_click)
        self.totals = QTableWidget(0, 3)
        # short: the stage column is the one that gives way
        self.totals.setHorizontalHeaderLabels(["Stage", "Own time", "Share"])
        for column, tip in enumerate(("a compile stage, over every unit of the run",
                                      "its own time: the time in stages nested inside it is theirs, not its",
                                      "of the run's traced compile time")):
            self.totals.horizontalHeaderItem(column).setToolTip(tip)
        self.totals.verticalHeader().setVisible(False)
        self.totals.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.totals.horizontalHeader()  # the stage name takes what the figures leave
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in (1, 2):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.totals.setItemDelegateForColumn(0, QtBoundaryElideDelegate(self.totals))
        self.wall_clock = QCheckBox("Shared wall clock")
        self.wall_clock.setToolTip("Off: each rank's lanes start at its own first compile event.\n"
                                   "On: all ranks on one clock, from the first event of any rank.")
        self.wall_clock.hide()
        self.wall_clock.toggled.connect(self._on_clock_toggled)
        self.clock_request = LatestRequest(self)
        self.rank_lines: list[pg.InfiniteLine] = []
        # short: the legend shares its row (and is cut at 1280 with ranks otherwise)
        export = QPushButton("Export trace…")
        export.setToolTip("Save the compile stages as a Perfetto / Chrome trace (JSON), to open in ui.perfetto.dev")
        export.setSizePolicy(QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Fixed)
        export.clicked.connect(self.ask_export)
        legend = QHBoxLayout()
        self.legend: list[tuple[QLabel, str]] = []  # each entry of the legend and the colour it explains
        for step in [*PIPELINE[:-1], None]:
            chip = QLabel(step or "other")
            chip.setStyleSheet(f"background:{STEP_COLOURS[step]}; color:white; padding:2px 6px")
            chip.setToolTip(f"a stage of the {step} step" if step else
                            "a stage outside the pipeline's steps (a cache lookup, gc, a pass of its own)")
            self.legend.append((chip, STEP_COLOURS[step]))
        marker = QLabel(f'<span style="color:{MARKER_COLOUR}">◆</span> event')
        marker.setToolTip("an instant in the compile: an FX graph or AOTAutograd cache hit or miss, a dim made "
                          "dynamic, …; hover one for its name")
        self.legend.append((marker, MARKER_COLOUR))
        unfinished = QLabel("never ended")
        unfinished.setStyleSheet(f"border:2px solid {OPEN_COLOUR}; padding:0px 4px")
        unfinished.setToolTip("a stage that never ended: the run stopped inside it")
        self.legend.append((unfinished, OPEN_COLOUR))
        for entry, _colour in self.legend:
            legend.addWidget(entry)
        legend.addStretch(1)
        legend.addWidget(self.wall_clock)
        legend.addWidget(export)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.plot)
        split.addWidget(self.totals)
        split.setSizes([640, 320])  # a third for the stage table: its names (`Scheduler.codegen`) read whole at 1280
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(legend)
        layout.addWidget(split)
        self._when_shown = QtShownLater(self)
        model.on_each_session(lambda loaded: self._when_shown.run(lambda: self._on_loaded(loaded)))
        model.sigUnitSelected.connect(self._on_unit_selected)

    def showEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        self._when_shown.shown()
        super().showEvent(event)

    def _on_loaded(self, loaded: LoadedSession) -> None:
        self.lane_units = [unit for unit in loaded.session.units if unit.spans]
        self._unit_steps = {}  # unit → its steps' own times, made when a bar of it is first hovered
        self.wall_clock.blockSignals(True)
        self.wall_clock.setChecked(False)
        self.wall_clock.blockSignals(False)
        self.wall_clock.setVisible(len(loaded.session.ranks) > 1)
        self.clock_request.supersede()
        self.show_timeline(loaded.analysis.timeline)
        self._on_unit_selected(self.model.unit)
        timing = loaded.analysis.compile_time
        self_s = timing.self_s
        total = sum(self_s.values()) or 1.0
        rows = list(self_s.items())[:40]
        beside = list(timing.concurrent.items())
        self.totals.setRowCount(len(rows) + len(beside))
        for row, (name, own) in enumerate(rows):
            for column, text in enumerate((name, seconds(own), f"{own / total:.1%}")):
                item = QTableWidgetItem(text)
                item.setToolTip(f"{name}: {seconds(own)} own time ({own / total:.1%} of traced compile time)")
                self.totals.setItem(row, column, item)
        for row, (name, work) in enumerate(beside, start=len(rows)):
            tip = (f"{name} ×{work.count} ran beside the compile on other threads (compile workers): "
                   f"{seconds(work.busy_s)} of work within {seconds(work.wall_s)}, up to {work.peak} at "
                   "once; not in any own time or share")
            for column, text in enumerate((f"{name} (workers)", f"{seconds(work.wall_s)} beside", "—")):
                item = QTableWidgetItem(text)
                item.setToolTip(tip)
                self.totals.setItem(row, column, item)
        per_step = timing.per_step_s
        for chip, step in zip((entry for entry, _ in self.legend), [*PIPELINE[:-1], None]):
            own = per_step.get(step or "other")
            base = (f"a stage of the {step} step" if step else
                    "a stage outside the pipeline's steps (a cache lookup, gc, a pass of its own)")
            chip.setToolTip(base + (f": {seconds(own)} own time over the run, as the live stage strip counts it"
                                    if own is not None else ""))

    def show_timeline(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self.plot.clear()
        self.gantt = GanttItem(timeline)
        self.plot.addItem(self.gantt)
        self.markers.setData(self.gantt.marker_spots())
        self.plot.addItem(self.markers)
        self.plot.addItem(self.selection)
        self.selection.hide()
        self.plot.getAxis("left").set_lanes(timeline.lanes, timeline.depth)
        self._mark_ranks(timeline)
        self.plot.setYRange(0, max(1, len(timeline.lanes) * timeline.depth), padding=0.02)
        self.plot.setXRange(0, max(timeline.end_s, 1e-3), padding=0.01)

    def _mark_ranks(self, timeline: Timeline) -> None:
        """A rule above each rank's lane group, labelled up to LABELLED_RANKS ranks; none for a single
        process. Past LABELLED_RANKS the lane names the axis has room for carry the rank, and the rules
        are one item drawn across the data: hundreds of separate rules are slow to add and paint."""
        self.rank_lines = []
        groups = timeline.rank_groups()
        many = len(groups) > 1
        self.plot.setLabel("bottom", "time since each rank's first compile event" if many and not timeline.wall_clock
                           else "time since the first compile event", units="s")
        if not many:
            return
        colour = self.palette().text().color()
        pen = pg.mkPen(colour, width=1)
        if len(groups) > LABELLED_RANKS:
            rows = np.repeat([first * timeline.depth for _rank, first, _lanes in groups], 2)
            ends = np.tile([0.0, max(timeline.end_s, 1e-3)], len(groups))
            self.plot.addItem(pg.PlotCurveItem(ends, rows, connect="pairs", pen=pen))
            return
        # a label stands on its own patch of background: at the right edge it lies over the bars and
        # markers of the rank that compiled last, which made both unreadable
        patch = QColor(self.palette().base().color())
        patch.setAlpha(225)
        for rank, first, _lanes in groups:
            label = f"rank {rank}" if rank is not None else "unnumbered"
            line = pg.InfiniteLine(pos=first * timeline.depth, angle=0, movable=False, pen=pen, label=label,
                                   labelOpts={"position": 0.995, "anchors": [(1, 0), (1, 0)], "color": colour,
                                              "fill": pg.mkBrush(patch), "border": pen})
            self.plot.addItem(line)
            self.rank_lines.append(line)

    def _on_clock_toggled(self, shared: bool) -> None:
        """The other clock's timeline is built off the UI thread (a few hundred ms for 256 ranks)."""
        loaded = self.model.loaded
        if loaded is not None:
            analysis = loaded.analysis
            self.clock_request.run(lambda: analysis.wall_clock_timeline if shared else analysis.timeline,
                                   self._show_clock, lambda message, _tb: self.plot.setTitle(message))

    def _show_clock(self, timeline: Timeline) -> None:
        self.plot.setTitle(None)  # a failure shown there before is over
        self.show_timeline(timeline)
        self._on_unit_selected(self.model.unit)

    def _on_hover(self, event) -> None:
        if self.gantt is None:
            return
        position = event[0]
        marker = self._marker_under(position)
        if marker:
            text = f"{marker}\nan instant in the compile (a cache hit or miss, a dim made dynamic, …)"
            QToolTip.showText(self.plot.mapToGlobal(self.plot.mapFromScene(position)), plain_tip(text), self.plot)
            self.hover_text = text
            return
        index = self.gantt.bar_under(position)
        if index is None:
            QToolTip.hideText()
            return
        bar = self.timeline.bars[index]
        rank = self.timeline.lane_ranks[bar.lane] if len(self.timeline.rank_groups()) > 1 else None
        text = (f"{bar.name}  {bar.compile_id}" + (f" rank {rank}" if rank is not None else "") + "\n"
                f"{seconds(bar.end_s - bar.start_s)}  ({bar.step or 'other'}), "
                f"from {seconds(bar.start_s)}" + self._step_of_unit(bar)
                + ("\nnever ended: the run stopped inside this stage" if bar.is_open else "")
                + "\nclick: select this compile unit")
        # the scene is the plot widget's own (a QGraphicsView): scene → widget → screen
        QToolTip.showText(self.plot.mapToGlobal(self.plot.mapFromScene(position)), plain_tip(text), self.plot)
        self.hover_text = text

    def _step_of_unit(self, bar: Bar) -> str:
        """The bar's step over its whole unit, the figure the live strip shows: one stage's bar is
        only a part of it."""
        if bar.step is None or bar.lane >= len(self.lane_units):
            return ""
        unit = self.lane_units[bar.lane]
        if unit not in self._unit_steps:
            self._unit_steps[unit] = wall_breakdown([unit.spans]).per_step_s
        own = self._unit_steps[unit].get(bar.step)
        return f"\nthe whole {bar.step} step of {bar.compile_id}: {seconds(own)} own time" if own is not None else ""

    def _marker_under(self, scene_pos) -> str:
        """The name of the event marker under a point of the scene, or ""."""
        if not self.markers.isVisible() or not self.markers.sceneBoundingRect().adjusted(-6, -6, 6,
                                                                                         6).contains(scene_pos):
            return ""
        points = self.markers.pointsAt(self.markers.mapFromScene(QPointF(scene_pos)))
        return str(points[0].data()) if len(points) else ""

    def _on_click(self, event) -> None:
        if self.gantt is None:
            return
        index = self.gantt.bar_under(event.scenePos())
        if index is not None and self.timeline.bars[index].lane < len(self.lane_units):
            self.model.select_unit(self.lane_units[self.timeline.bars[index].lane])

    def _on_unit_selected(self, unit) -> None:
        """The selected unit's lane is shaded, whichever view selected it (once the view has the
        session: its update shades the unit selected by then)."""
        if self._when_shown.pending:
            return
        lane = next((i for i, candidate in enumerate(self.lane_units) if candidate is unit), None)
        if lane is None or self.timeline is None:
            self.selection.hide()
            return
        self.selection.setRegion((lane * self.timeline.depth, (lane + 1) * self.timeline.depth))
        self.selection.show()

    def selected_lane(self) -> int | None:
        """The lane shaded as selected (None when none is)."""
        if not self.selection.isVisible() or self.timeline is None or not self.timeline.depth:
            return None
        return round(self.selection.getRegion()[0] / self.timeline.depth)

    def ask_export(self) -> None:
        loaded = self.model.loaded
        if loaded is None:
            return
        target, _ = QFileDialog.getSaveFileName(self, "Export compile trace", "compile-trace.json", "JSON (*.json)")
        if target:
            with open(target, "w", encoding="utf-8") as handle:
                json.dump(chrome_trace(loaded.session), handle)
