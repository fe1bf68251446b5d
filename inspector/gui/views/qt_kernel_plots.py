"""Kernel plots (pyqtgraph): time per kernel in the compiled run (sorted, top N, the rest folded),
eager against compiled time per op family, compile time per unit, and memory high-water eager against
compiled. Clicking a kernel's bar selects that kernel in every view."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from inspector.core.analysis.kernel_plots import compile_time_per_unit, kernel_bars, memory_bars, op_family_bars
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel

TOP_N = 15


def _hbar_plot(title: str, palette) -> pg.PlotWidget:
    plot = pg.PlotWidget(title=title, background=palette.base().color())
    for side in ("left", "bottom"):
        plot.getAxis(side).setTextPen(palette.text().color())
    plot.getPlotItem().titleLabel.setAttr("color", palette.text().color().name())
    plot.invertY(True)
    plot.setMouseEnabled(x=True, y=False)
    plot.getPlotItem().hideButtons()
    return plot


class QtKernelPlots(QWidget):
    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.kernel_names: list[str] = []
        self.kernels = _hbar_plot("Compiled run: time per kernel / op (µs per call)", self.palette())
        self.kernels.scene().sigMouseClicked.connect(self._on_click)
        self.families = _hbar_plot("Eager vs compiled per op family (µs per call)", self.palette())
        self.units = _hbar_plot("Compile time per unit (s)", self.palette())
        self.memory = _hbar_plot("Memory high-water (MB): eager vs compiled", self.palette())
        self.note = QLabel("")
        self.note.setWordWrap(True)
        layout = QGridLayout(self)
        layout.addWidget(self.kernels, 0, 0)
        layout.addWidget(self.families, 0, 1)
        layout.addWidget(self.units, 1, 0)
        layout.addWidget(self.memory, 1, 1)
        layout.addWidget(self.note, 2, 0, 1, 2)
        model.sigLoaded.connect(self._on_loaded)

    def _on_loaded(self, loaded: LoadedSession) -> None:
        results = loaded.session.results or {}
        rows = kernel_bars(results, TOP_N)
        self.kernel_names = [row.name for row in rows]
        self._bars(self.kernels, [row.label for row in rows], [row.value for row in rows], "#d9822b")
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
        check = (loaded.summary.get("run") or {}).get("profile_check") or {}
        if check.get("consistent") is False:
            missing.insert(0, check["note"])
        self.note.setText("; ".join(missing))

    @staticmethod
    def _bars(plot: pg.PlotWidget, labels: list[str], values: list[float], colour: str) -> None:
        plot.clear()
        if not values:
            return
        plot.addItem(pg.BarGraphItem(x0=0, y=list(range(len(values))), height=0.7, width=values, brush=colour))
        plot.getAxis("left").setTicks([[(i, label[:48]) for i, label in enumerate(labels)]])
        plot.setYRange(-0.5, len(values) - 0.5, padding=0.02)
        plot.setXRange(0, max(values) * 1.05 or 1, padding=0)

    @staticmethod
    def _paired(plot: pg.PlotWidget, rows: list[tuple[str, float | None, float | None]]) -> None:
        plot.clear()
        if not rows:
            return
        plot.addLegend(offset=(-10, 10))
        eager = [row[1] or 0 for row in rows]
        compiled = [row[2] or 0 for row in rows]
        plot.addItem(pg.BarGraphItem(x0=0, y=[i - 0.18 for i in range(len(rows))], height=0.34, width=eager,
                                     brush="#8a8f98", name="eager"))
        plot.addItem(pg.BarGraphItem(x0=0, y=[i + 0.18 for i in range(len(rows))], height=0.34, width=compiled,
                                     brush="#2e9d4f", name="compiled"))
        plot.getAxis("left").setTicks([[(i, row[0][:40]) for i, row in enumerate(rows)]])
        plot.setYRange(-0.5, len(rows) - 0.5, padding=0.02)
        plot.setXRange(0, max(eager + compiled) * 1.05 or 1, padding=0)

    def _on_click(self, event) -> None:
        point = self.kernels.getViewBox().mapSceneToView(event.scenePos())
        index = round(point.y())
        if 0 <= index < len(self.kernel_names):
            self.model.select_kernel_named(self.kernel_names[index])
