"""Kernel plots (pyqtgraph): time per kernel in the compiled run (sorted, top N, the rest folded),
eager against compiled time per op family, compile time per unit, and memory high-water eager against
compiled. Hovering a bar tells its figure; clicking a kernel's bar selects that kernel in every view
(highlighted here) and asks for the Code tab (`sigKernelActivated`)."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QToolTip, QWidget

from inspector.core.analysis.kernel_plots import compile_time_per_unit, kernel_bars, memory_bars, op_family_bars
from inspector.core.numbers import number
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel

TOP_N = 15
LABEL_CHARS = 30
KERNEL_COLOUR, SELECTED_COLOUR = "#d9822b", "#e0c000"


def _hbar_plot(title: str, unit: str, palette) -> pg.PlotWidget:
    """A horizontal bar plot: a short title, the unit under the x axis, room on the right for the
    last tick label (pyqtgraph otherwise cuts it), labels on the left elided with the full text in
    the hover tooltip."""
    plot = pg.PlotWidget(title=title, background=palette.base().color())
    for side in ("left", "bottom"):
        plot.getAxis(side).setTextPen(palette.text().color())
    plot.getPlotItem().titleLabel.setAttr("color", palette.text().color().name())
    plot.getPlotItem().titleLabel.setAttr("size", "10pt")
    plot.setLabel("bottom", unit, color=palette.text().color().name())
    plot.getPlotItem().layout.setContentsMargins(4, 4, 24, 4)
    plot.setToolTip(f"{title} ({unit})")
    plot.invertY(True)
    plot.setMouseEnabled(x=True, y=False)
    plot.getPlotItem().hideButtons()
    return plot


def _elide(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[:LABEL_CHARS - 1] + "…"


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


class QtKernelPlots(QWidget):
    sigKernelActivated = Signal(str)  # a kernel's bar was clicked and that kernel selected: show its code

    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.kernel_names: list[str] = []
        self.kernel_labels: list[str] = []
        self.kernel_values: list[float] = []
        self.selected: int | None = None  # index of the highlighted kernel bar
        self.hover_text = ""
        self.kernels = _hbar_plot("Time per kernel or op", "µs per call, compiled run", self.palette())
        self.kernels.scene().sigMouseClicked.connect(self._on_click)
        self._hover = pg.SignalProxy(self.kernels.scene().sigMouseMoved, rateLimit=30, slot=self._on_hover)
        self.families = _hbar_plot("Eager vs compiled per op family", "µs per call", self.palette())
        self.units = _hbar_plot("Compile time per unit", "s", self.palette())
        self.memory = _hbar_plot("Memory high-water", "MB, eager vs compiled", self.palette())
        self.note = QLabel("")
        self.note.setWordWrap(True)
        layout = QGridLayout(self)
        layout.addWidget(self.kernels, 0, 0)
        layout.addWidget(self.families, 0, 1)
        layout.addWidget(self.units, 1, 0)
        layout.addWidget(self.memory, 1, 1)
        layout.addWidget(self.note, 2, 0, 1, 2)
        for column in (0, 1):  # equal halves: a long label must not push a plot out of its cell
            layout.setColumnStretch(column, 1)
        for plot in (self.kernels, self.families, self.units, self.memory):
            plot.setMinimumWidth(120)
        model.sigLoaded.connect(self._on_loaded)
        model.sigKernelSelected.connect(self._on_kernel_selected)

    def _on_loaded(self, loaded: LoadedSession) -> None:
        results = loaded.session.results or {}
        rows = kernel_bars(results, TOP_N)
        self.kernel_names = [row.name for row in rows]
        self.kernel_labels = [row.label for row in rows]
        self.kernel_values = [row.value for row in rows]
        self.selected = None
        self._bars(self.kernels, self.kernel_labels, self.kernel_values, KERNEL_COLOUR)
        families = op_family_bars(results)
        self._paired(self.families, families)
        units = compile_time_per_unit(loaded.session)
        self._bars(self.units, [label for label, _ in units], [value for _, value in units], "#2b7bb9")
        self._paired(self.memory, memory_bars(results))
        missing = []
        if not rows:
            missing.append("no profile (capture an entry-point script with profiling on to see kernel times)")
        if not memory_bars(results):
            missing.append("memory not measured")
        check = loaded.analysis.profile_check
        if check.consistent is False:
            missing.insert(0, check.note)
        self.note.setText("; ".join(missing))

    @staticmethod
    def _bars(plot: pg.PlotWidget, labels: list[str], values: list[float], colour: str,
              selected: int | None = None) -> None:
        plot.clear()
        if not values:
            _empty(plot)
            return
        _axes(plot)
        brushes = [SELECTED_COLOUR if index == selected else colour for index in range(len(values))]
        plot.addItem(pg.BarGraphItem(x0=0, y=list(range(len(values))), height=0.7, width=values, brushes=brushes))
        plot.getAxis("left").setTicks([[(i, _elide(label)) for i, label in enumerate(labels)]])
        plot.setYRange(-0.5, len(values) - 0.5, padding=0.02)
        plot.setXRange(0, max(values) * 1.05 or 1, padding=0)

    @staticmethod
    def _paired(plot: pg.PlotWidget, rows: list[tuple[str, float | None, float | None]]) -> None:
        plot.clear()
        if not rows:
            _empty(plot)
            return
        _axes(plot)
        plot.addLegend(offset=(-10, 10))
        eager = [row[1] or 0 for row in rows]
        compiled = [row[2] or 0 for row in rows]
        plot.addItem(pg.BarGraphItem(x0=0, y=[i - 0.18 for i in range(len(rows))], height=0.34, width=eager,
                                     brush="#8a8f98", name="eager"))
        plot.addItem(pg.BarGraphItem(x0=0, y=[i + 0.18 for i in range(len(rows))], height=0.34, width=compiled,
                                     brush="#2e9d4f", name="compiled"))
        plot.getAxis("left").setTicks([[(i, _elide(row[0])) for i, row in enumerate(rows)]])
        plot.setYRange(-0.5, len(rows) - 0.5, padding=0.02)
        plot.setXRange(0, max(eager + compiled) * 1.05 or 1, padding=0)

    def _bar_under(self, scene_pos) -> int | None:
        view = self.kernels.getViewBox()
        if not view.sceneBoundingRect().contains(scene_pos):
            return None
        point = view.mapSceneToView(scene_pos)
        index = round(point.y())
        if 0 <= index < len(self.kernel_values) and 0 <= point.x() <= max(self.kernel_values[index], 0) * 1.02 + 1e-9:
            return index
        return None

    def _on_hover(self, event) -> None:
        index = self._bar_under(event[0])
        if index is None:
            QToolTip.hideText()
            return
        name = self.kernel_names[index]
        self.hover_text = (f"{self.kernel_labels[index]}\n{number(self.kernel_values[index])} µs per call"
                           + ("\nclick: show its code" if name else ""))
        QToolTip.showText(self.kernels.mapToGlobal(self.kernels.mapFromScene(event[0])), self.hover_text, self.kernels)

    def _on_click(self, event) -> None:
        index = self._bar_under(event.scenePos())
        if index is None or not self.kernel_names[index]:
            return
        name = self.kernel_names[index]
        self.model.select_kernel_named(name)
        if self.model.kernel is not None and self.model.kernel.name == name:
            self.note.setText("")
            self.sigKernelActivated.emit(name)
        else:
            self._highlight(index)
            self.note.setText(f"{name} is an operator run by the compiled code, not a kernel Inductor generated: "
                              "no code of its own to show.")

    def _on_kernel_selected(self, _unit, kernel) -> None:
        names = self.kernel_names
        self._highlight(names.index(kernel.name) if kernel is not None and kernel.name in names else None)

    def _highlight(self, index: int | None) -> None:
        if index != self.selected:
            self.selected = index
            self._bars(self.kernels, self.kernel_labels, self.kernel_values, KERNEL_COLOUR, index)
