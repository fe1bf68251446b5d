"""Kernel plots (pyqtgraph): time per kernel in the compiled run (sorted, top N, the rest folded),
eager against compiled time per op family, compile time per unit, and memory high-water eager against
compiled. Hovering a bar tells its figure; clicking a kernel's bar selects that kernel in every view
(highlighted here) and asks for the Code tab (`sigKernelActivated`)."""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QEvent, QPointF, Qt, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QScrollArea, QToolTip, QVBoxLayout, QWidget

from inspector.core.analysis.kernel_plots import (kernel_bars, memory_bars, memory_measured, op_family_bars,
                                                  slowest_units)
from inspector.core.analysis.source_time import described
from inspector.core.numbers import number
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel
from inspector.gui.qt_shown_later import QtShownLater
from inspector.gui.views.qt_elide import elide_at_boundary
from inspector.gui.views.qt_plot_titles import span_title

TOP_N = 15
UNITS_SHOWN = 40  # compile-time bars: the slowest units, past this many
UNITS_TITLE = "Compile time per unit"
LABEL_SHARE = 0.5  # the most of a plot's width its row labels may take before they are elided
CHROME_LINES = 4.5  # the title, the x axis with its unit and the margins, in lines of text
FULL_ROWS = 16  # a plot is never made shorter than this many rows of labels need (more rows: every k-th label)
KERNEL_COLOUR, SELECTED_COLOUR = "#d9822b", "#e0c000"
EAGER_COLOUR, COMPILED_COLOUR, UNIT_COLOUR = "#8a8f98", "#2e9d4f", "#2b7bb9"


class RowAxis(pg.AxisItem):
    """The left axis of a bar plot: one label per bar row (row i at y = i), elided between words to
    the axis's width, its name kept whole (`extern_kernels.addmm line 103 …`, never `extern_kernels.ad…03`;
    the full text is in the row's tooltip); where rows are thinner than a line of
    text only every k-th row is labelled, so two labels never overlap. (Explicit ticks would draw
    every label, on top of each other once the plot is short.)"""

    def __init__(self, font: QFont):
        super().__init__("left")
        self.labels: list[str] = []
        self.setStyle(tickFont=font)

    def set_labels(self, labels: list[str]) -> None:
        self.labels = labels
        self.picture = None  # drawn again with the new labels
        self.update()

    def metrics(self) -> QFontMetrics:
        return QFontMetrics(self.style["tickFont"])

    def text_room(self) -> int:
        """Pixels a label may take: the axis's width less the tick and the gap to it."""
        return max(0, int(self.width()) - max(0, self.style["tickLength"]) - self.style["tickTextOffset"][0] - 2)

    def needed_width(self) -> int:
        """The width that shows every label whole."""
        widest = max((self.metrics().horizontalAdvance(label) for label in self.labels), default=0)
        return widest + max(0, self.style["tickLength"]) + self.style["tickTextOffset"][0] + 4

    def tickValues(self, minVal: float, maxVal: float, size: float):  # noqa: N802, N803 (pyqtgraph's names)
        if not self.labels or not (math.isfinite(minVal) and math.isfinite(maxVal)) or size <= 0:
            return []
        low, high = sorted((minVal, maxVal))  # an inverted axis gives them top first
        first, last = max(0, math.ceil(low - 1e-9)), min(len(self.labels) - 1, math.floor(high + 1e-9))
        if last < first:
            return []
        px_per_row = size / max(high - low, 1e-9)
        step = max(1, math.ceil(self.metrics().height() / px_per_row))
        return [(step, list(range(first, last + 1, step)))]

    def tickStrings(self, values, scale, spacing):  # noqa: N802 (pyqtgraph's name)
        metrics, room = self.metrics(), self.text_room()
        rows = (int(round(value)) for value in values)
        return [elide_at_boundary(self.labels[row], metrics, room, balanced=True) if 0 <= row < len(self.labels)
                else "" for row in rows]


def _hbar_plot(owner: "QtKernelPlots", title: str, unit: str, palette, font: QFont) -> _BarPlot:
    """A horizontal bar plot: a short title, the unit under the x axis, room on the right for the
    last tick label (pyqtgraph otherwise cuts it), row labels on the left elided to the room the
    plot can give them, the full text in the row's tooltip."""
    plot = _BarPlot(owner, title=title, background=palette.base().color(), axisItems={"left": RowAxis(font)})
    for side in ("left", "bottom"):
        plot.getAxis(side).setTextPen(palette.text().color())
    plot.getPlotItem().titleLabel.setAttr("color", palette.text().color().name())
    plot.getPlotItem().titleLabel.setAttr("size", "10pt")
    span_title(plot.getPlotItem())
    plot.setLabel("bottom", unit, color=palette.text().color().name())
    plot.getPlotItem().layout.setContentsMargins(4, 4, 24, 4)
    plot.setToolTip(f"{title} ({unit})")
    plot.invertY(True)
    plot.setMouseEnabled(x=True, y=False)
    plot.getPlotItem().hideButtons()
    return plot


def legend_title(title: str, series: list[tuple[str, str]]) -> str:
    """A title that is the plot's legend too: each series' name in a swatch of its colour. A legend
    inside the plot covers the longest bars, which are drawn first, at the top."""
    swatches = " vs ".join(f'<span style="color:{colour}">■</span>&nbsp;{name}' for name, colour in series)
    return f"{title}: {swatches}"


def _empty(plot: pg.PlotWidget) -> None:
    """An empty plot says so in its middle rather than showing bare 0–1 axes."""
    text = pg.TextItem("nothing recorded for this plot\n(see the note below)", anchor=(0.5, 0.5),
                       color=plot.getAxis("bottom").textPen().color())
    plot.addItem(text)
    text.setPos(0.5, 0.5)
    plot.setXRange(0, 1, padding=0)
    plot.setYRange(0, 1, padding=0)
    for side in ("left", "bottom"):
        plot.showAxis(side, False)


def _axes(plot: pg.PlotWidget) -> None:
    for side in ("left", "bottom"):
        plot.showAxis(side, True)


class _BarPlot(pg.PlotWidget):
    """A bar plot of the view: its row labels kept as wide as they need (at most LABEL_SHARE of the
    plot) as it is resized, and the viewport's tooltip request answered with the row's own tooltip
    (left to the view, that request shows the plot's generic tooltip over the one the hover put up).

    Handlers of its own, not an event filter: Qt calls a filter while it deletes the plot's children,
    and Python entered there may run deletions PySide queued from another thread's garbage collection,
    on which Qt's own lock deadlocks and the window's teardown hangs."""

    owner: "QtKernelPlots | None" = None  # None while pyqtgraph builds the plot

    def __init__(self, owner: "QtKernelPlots", **options):
        super().__init__(**options)
        self.owner = owner

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        if self.owner is not None:
            self.owner.fit_labels(self)
        super().resizeEvent(event)

    def viewportEvent(self, event) -> bool:  # noqa: N802 (Qt's name)
        if event.type() == QEvent.Type.ToolTip and self.owner is not None:
            text = self.owner.tip_at(self, self.mapToScene(event.pos()))
            if text:
                QToolTip.showText(event.globalPos(), text, self)
                return True
        return super().viewportEvent(event)


class QtKernelPlots(QWidget):
    sigKernelActivated = Signal(str)  # a kernel's bar was clicked and that kernel selected: show its code

    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.kernel_names: list[str] = []
        self.kernel_sites: list = []  # the call site of each bar (source_time.KernelFigure; None: the folded rest)
        self.generated: set[str] = set()  # the bars' names that are kernels of the session (with code)
        self.load_notes: list[str] = []
        self.kernel_labels: list[str] = []
        self.kernel_values: list[float] = []
        self.selected: int | None = None  # index of the highlighted kernel bar
        self.hover_text = ""
        self.rows: dict[pg.PlotWidget, list[tuple[str, float]]] = {}  # per plot, each row's tooltip and bar length
        font = QFont(self.font())
        self.kernels = _hbar_plot(self, "Time per kernel or op", "µs per call, compiled run", self.palette(), font)
        self.kernels.scene().sigMouseClicked.connect(self._on_click)
        self.families = _hbar_plot(self, legend_title("Per op family",
                                                [("eager", EAGER_COLOUR), ("compiled", COMPILED_COLOUR)]),
                                   "µs per call", self.palette(), font)
        self.families.setToolTip("Eager vs compiled per op family (µs per call)")
        self.units = _hbar_plot(self, UNITS_TITLE, "s", self.palette(), font)
        self.memory = _hbar_plot(self, legend_title("Memory high-water",
                                              [("eager", EAGER_COLOUR), ("compiled", COMPILED_COLOUR)]),
                                 "MB", self.palette(), font)
        self.memory.setToolTip("Memory high-water, eager vs compiled (MB)")
        self.plots = (self.kernels, self.families, self.units, self.memory)
        # rate-limited hovers, one per plot, kept as long as the view (a dropped proxy delivers nothing)
        self.hover_proxies = tuple(pg.SignalProxy(plot.scene().sigMouseMoved, rateLimit=30,
                                                  slot=lambda event, plot=plot: self._on_hover(plot, event))
                                   for plot in self.plots)
        self.note = QLabel("")
        self.note.setWordWrap(True)
        charts = QWidget()
        grid = QGridLayout(charts)
        grid.setContentsMargins(0, 0, 0, 0)
        grid.addWidget(self.kernels, 0, 0)
        grid.addWidget(self.families, 0, 1)
        grid.addWidget(self.units, 1, 0)
        grid.addWidget(self.memory, 1, 1)
        for column in (0, 1):  # equal halves: a long label must not push a plot out of its cell
            grid.setColumnStretch(column, 1)
        for plot in self.plots:
            plot.setMinimumWidth(120)
        # a window too short for every label scrolls the charts rather than squeezing their labels together
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.scroll.setWidget(charts)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.scroll, 1)
        layout.addWidget(self.note)
        self._when_shown = QtShownLater(self)
        model.on_each_session(lambda loaded: self._when_shown.run(lambda: self._on_loaded(loaded)))
        model.sigKernelSelected.connect(self._on_kernel_selected)

    def showEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        self._when_shown.shown()
        super().showEvent(event)

    def _on_loaded(self, loaded: LoadedSession) -> None:
        results = loaded.session.results
        rows = kernel_bars(loaded.analysis.kernel_time, TOP_N)
        self.kernel_sites = [row.site for row in rows]
        self.kernel_names = [row.name for row in rows]
        self.kernel_labels = [row.label for row in rows]
        self.kernel_values = [row.value for row in rows]
        # bars with code of their own; every unit's output code is parsed only when there are bars (on
        # a reopen nothing else has parsed it, and parsing it costs the UI thread a noticeable pause on a big log)
        kernels = {kernel.name for unit in loaded.session.units for kernel in unit.kernels} if rows else set()
        self.generated = {name for name in self.kernel_names if name in kernels}
        self.selected = None
        self._kernel_bars()
        self._paired(self.families, op_family_bars(results), "µs per call")
        every_unit = loaded.analysis.compile_time_per_unit
        units = slowest_units(every_unit, UNITS_SHOWN)
        self._bars(self.units, [name for name, _ in units], [value for _, value in units], UNIT_COLOUR,
                   [f"{name}\ncompile time {number(value)} s" for name, value in units])
        self.units.setTitle(UNITS_TITLE if len(units) == len(every_unit)
                            else f"{UNITS_TITLE}: the {len(units)} slowest of {len(every_unit):,}")
        self._paired(self.memory, memory_bars(results), "MB")
        self.memory.setToolTip(f"Memory, eager vs compiled (MB): {memory_measured(results)}")
        missing = []
        if not rows:
            missing.append("no profile (capture an entry-point script with profiling on to see kernel times)"
                           if loaded.analysis.kernel_time is None else "no kernel launch in the profile")
        if not memory_bars(results):
            missing.append("memory not measured")
        elif not (results and results.memory_method) or "running" in results.memory_method:
            missing.append(f"memory: {memory_measured(results)}")
        for check, charts in ((loaded.analysis.profile_check, "kernels and op families, compiled"),
                              (loaded.analysis.eager_profile_check, "op families, eager")):
            if check.consistent is False:
                missing.insert(0, f"{charts}: {check.note}")
        self.load_notes = missing  # what the charts lack or should be read with: kept under any click's note
        self.note.setText("; ".join(missing))
        self._on_kernel_selected(None, self.model.kernel)  # chosen elsewhere before this tab was shown

    def _kernel_bars(self) -> None:
        table = self.model.loaded.kernel_time if self.model.loaded else None
        tips = [f"{label}\n{number(value)} µs per call of its unit in the profile"
                + (f"\n{described(table.kernel_time(site.compile_unit, site.kernel), table)}\nclick: show its code"
                   if site is not None and table is not None else "")
                for site, label, value in zip(self.kernel_sites, self.kernel_labels, self.kernel_values)]
        self._bars(self.kernels, self.kernel_labels, self.kernel_values, KERNEL_COLOUR, tips, self.selected)

    def _bars(self, plot: pg.PlotWidget, labels: list[str], values: list[float], colour: str, tips: list[str],
              selected: int | None = None) -> None:
        plot.clear()
        self.rows[plot] = list(zip(tips, values))
        plot.getAxis("left").set_labels(labels)
        self._fit_height(plot, len(values))
        if not values:
            _empty(plot)
            return
        _axes(plot)
        brushes = [SELECTED_COLOUR if index == selected else colour for index in range(len(values))]
        plot.addItem(pg.BarGraphItem(x0=0, y=list(range(len(values))), height=0.7, width=values, brushes=brushes))
        plot.setYRange(-0.5, len(values) - 0.5, padding=0.02)
        plot.setXRange(0, max(values) * 1.05 or 1, padding=0)
        self.fit_labels(plot)

    def _paired(self, plot: pg.PlotWidget, rows: list[tuple[str, float | None, float | None]], unit: str) -> None:
        plot.clear()
        plot.getAxis("left").set_labels([row[0] for row in rows])
        self._fit_height(plot, len(rows))
        eager = [row[1] or 0 for row in rows]
        compiled = [row[2] or 0 for row in rows]
        self.rows[plot] = [(f"{row[0]}\neager: {_figure(row[1], unit)}\ncompiled: {_figure(row[2], unit)}", max(e, c))
                           for row, e, c in zip(rows, eager, compiled)]
        if not rows:
            _empty(plot)
            return
        _axes(plot)
        plot.addItem(pg.BarGraphItem(x0=0, y=[i - 0.18 for i in range(len(rows))], height=0.34, width=eager,
                                     brush=EAGER_COLOUR, name="eager"))
        plot.addItem(pg.BarGraphItem(x0=0, y=[i + 0.18 for i in range(len(rows))], height=0.34, width=compiled,
                                     brush=COMPILED_COLOUR, name="compiled"))
        plot.setYRange(-0.5, len(rows) - 0.5, padding=0.02)
        plot.setXRange(0, max(eager + compiled) * 1.05 or 1, padding=0)
        self.fit_labels(plot)

    def _fit_height(self, plot: pg.PlotWidget, rows: int) -> None:
        """Tall enough for a line of text per row (up to FULL_ROWS rows) besides title and x axis."""
        line = plot.getAxis("left").metrics().height() + 2
        plot.setMinimumHeight(round(CHROME_LINES * line) + min(max(rows, 1), FULL_ROWS) * line)

    def fit_labels(self, plot: pg.PlotWidget) -> None:
        """The row labels take what they need, up to LABEL_SHARE of the plot's width; only then are
        they elided."""
        axis = plot.getAxis("left")
        width = min(axis.needed_width(), max(60, int(plot.width() * LABEL_SHARE)))
        if axis.fixedWidth != width:
            axis.setWidth(width)
            axis.picture = None

    def row_at(self, plot: pg.PlotWidget, scene_pos) -> int | None:
        """The row under a scene point: on its bar(s) or on its label."""
        rows = self.rows.get(plot) or []
        view, axis = plot.getViewBox(), plot.getAxis("left")
        on_view = view.sceneBoundingRect().contains(scene_pos)
        on_label = axis.isVisible() and axis.sceneBoundingRect().contains(scene_pos)
        if not rows or not (on_view or on_label):
            return None
        point = view.mapSceneToView(QPointF(scene_pos))
        index = round(point.y())
        if not (0 <= index < len(rows) and abs(point.y() - index) <= 0.4):
            return None
        if on_label or 0 <= point.x() <= max(rows[index][1], 0) * 1.02 + 1e-9:
            return index
        return None

    def tip_at(self, plot: pg.PlotWidget, scene_pos) -> str:
        index = self.row_at(plot, scene_pos)
        return "" if index is None else self.rows[plot][index][0]

    def _bar_under(self, scene_pos) -> int | None:
        """The kernel whose bar (or label) is under a point of the kernel plot's scene."""
        return self.row_at(self.kernels, scene_pos)

    def _on_hover(self, plot: pg.PlotWidget, event) -> None:
        position = event[0]
        text = self.tip_at(plot, position)
        if not text:
            QToolTip.hideText()
            return
        if plot is self.kernels:
            self.hover_text = text
        QToolTip.showText(plot.mapToGlobal(plot.mapFromScene(position)), text, plot)

    def _on_click(self, event) -> None:
        index = self._bar_under(event.scenePos())
        if index is None or not self.kernel_names[index]:
            return
        name, site = self.kernel_names[index], self.kernel_sites[index]
        if site is not None and site.compile_unit is not None and site.kernel is not None:
            self.model.select_kernel(site.compile_unit, site.kernel)
        else:
            self.model.select_kernel_named(name)
        if self.model.kernel is not None and self.model.kernel.name == name:
            self.note.setText("; ".join(self.load_notes))
            self.sigKernelActivated.emit(name)
        else:
            self._highlight(index)
            self.note.setText("; ".join([f"{name} is an operator run by the compiled code, not a kernel Inductor "
                                         "generated: no code of its own to show", *self.load_notes]))

    def _on_kernel_selected(self, _unit, kernel) -> None:
        if self._when_shown.pending:  # the update to come marks it
            return
        index = next((at for at, site in enumerate(self.kernel_sites) if site is not None and site.kernel is kernel),
                     None)
        if index is None and kernel is not None and kernel.name in self.kernel_names:
            index = self.kernel_names.index(kernel.name)
        self._highlight(index)

    def _highlight(self, index: int | None) -> None:
        if index != self.selected:
            self.selected = index
            self._kernel_bars()


def _figure(value: float | None, unit: str) -> str:
    return "not measured" if value is None else f"{number(value)} {unit}"
