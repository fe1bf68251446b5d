"""Mode comparison: capture the current script in default, reduce-overhead and max-autotune one
after another, then a table and bars of compile time, steady-state time, speedup, breaks and kernels."""

from __future__ import annotations

import time
from pathlib import Path

import pyqtgraph as pg
from PySide6.QtCore import QObject, Signal
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QStackedWidget, QVBoxLayout, QWidget

from inspector.capture.launcher import CaptureSettings
from inspector.capture.mode_runs import ModeRuns, ModeStep
from inspector.core.analysis.mode_comparison import ModeRow, caches_text, compare_modes, fastest
from inspector.core.numbers import quantity, seconds
from inspector.core.outputs.kind_documents import document_of
from inspector.core.readers.session_loader import detect_modes
from inspector.core.readers.sources import Source
from inspector.gui.qt_background import LatestRequest, run_in_background
from inspector.gui.qt_capture_controller import QtCaptureController
from inspector.gui.views.qt_plot_titles import span_title
from inspector.gui.views.qt_tables import fill_rows, rows_table

GUIDANCE = ("<h3>Which mode pays off?</h3><p>Open a model script (File ▸ Open Script…), then <b>Run ▸ Compare "
            "Modes</b> (Ctrl+M). The script is captured three times, in <i>default</i>, <i>reduce-overhead</i> and "
            "<i>max-autotune</i>, one after another.</p><p>Here you then see, per mode, compile time, steady-state "
            "time per call, speedup over eager, graph breaks, recompiles and kernels, and which mode ran fastest.</p>"
            "<p>A script that defines <code>inspector_model()</code> is measured; any other script is only traced, "
            "so only compile time and counts are compared.</p>"
            "<p>A folder <code>compile-inspector modes -o DIR</code> wrote opens here as well (File ▸ Open Log, "
            "Bundle or Folder…).</p>")


class QtModeComparison(QObject):
    """Steps through the shared `ModeRuns` sequence (the CLI's `modes` runs the same one), each capture
    through the window's capture controller so the stage strip and the log follow it."""

    sigDone = Signal(object)  # list[ModeRow]
    sigStep = Signal(str)  # the mode being captured
    sigError = Signal(str)  # the comparison itself failed (each mode's own error is in its row)

    def __init__(self, capture: QtCaptureController, parent: QObject | None = None):
        super().__init__(parent)
        self.capture = capture
        self.runs: ModeRuns | None = None
        self.step: ModeStep | None = None
        self.running = False
        capture.sigFinished.connect(self._on_finished)

    def start(self, script: Path, folder: Path, settings: CaptureSettings, python: str | None,
              warm: bool = False) -> None:
        self.script, self.python = script, python
        self.runs, self.running = ModeRuns(folder, settings, warm=warm), True
        self._next()

    def _next(self) -> None:
        self.step = self.runs.next_step()
        if self.step is None:
            self.running = False
            sessions, warm = self.runs.sessions, self.runs.warm_sessions
            run_in_background(lambda: compare_modes(detect_modes(sessions), detect_modes(warm)), self.sigDone.emit,
                              lambda message, _traceback: self.sigError.emit(message), self)
            return
        self.sigStep.emit(self.step.mode + (" (warm, from its own cache)" if self.step.warm else " (cold)"))
        self.capture.start_plan(self.step.plan(self.script, [], self.python))

    def _on_finished(self, _session: str, code: int, error) -> None:
        if not self.running or self.step is None:
            return
        self.runs.record(self.step, code, error, self.capture.stopped_by)
        self._next()


class QtModesView(QWidget):
    def __init__(self, comparison: QtModeComparison):
        super().__init__()
        self.rows: list[ModeRow] = []
        self.status = QLabel("Run ▸ Compare Modes captures the script in default, reduce-overhead and max-autotune.")
        self.status.setWordWrap(True)
        self.table = rows_table(("Mode", "Compile time", "Steady state per call", "Speedup", "Breaks",
                                 "Recompiles", "Kernels", "Note"))
        self.steady = self._plot("Steady-state time per call (µs)")
        self.compile = self._plot("Compile time (s)")
        plots = QHBoxLayout()
        plots.addWidget(self.steady)
        plots.addWidget(self.compile)
        content = QWidget()
        layout = QVBoxLayout(content)
        layout.addWidget(self.status)
        layout.addWidget(self.table, 1)
        layout.addLayout(plots, 2)
        self.guidance = QLabel(GUIDANCE)
        self.guidance.setWordWrap(True)
        self.guidance.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.guidance.setMargin(40)
        self.pages = QStackedWidget()  # the guidance until a comparison starts
        self.pages.addWidget(self.guidance)
        self.pages.addWidget(content)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.pages)
        comparison.sigStep.connect(self._on_step)
        comparison.sigDone.connect(self.show_rows)
        comparison.sigError.connect(self._on_failed)
        self._opens = LatestRequest(self)  # a `modes` folder opened: only the latest one's rows are shown

    def _plot(self, title: str) -> pg.PlotWidget:
        plot = pg.PlotWidget(title=title, background=self.palette().base().color())
        plot.setMouseEnabled(x=False, y=False)
        plot.getPlotItem().hideButtons()
        span_title(plot.getPlotItem())
        for side in ("left", "bottom"):
            plot.getAxis(side).setTextPen(self.palette().text().color())
        return plot

    def open(self, source: Source, opened=None, failed=None) -> None:
        """A `modes` output folder the window detected: its sessions compared off the UI thread, as
        `summary` of it compares them (the registry's document of its kind); `opened`, if given, once
        its rows are shown, or `failed` with why they could not be."""
        compare = document_of(source.kind).summarize

        def show(rows: list[ModeRow]) -> None:
            self.show_rows(rows, source.path)
            if opened is not None:
                opened()

        def on_failed(message: str, _traceback: str) -> None:
            self._on_failed(message)
            if failed is not None:
                failed(message)

        self._opens.run(lambda: compare(source.open()), show, on_failed)

    def _on_failed(self, message: str) -> None:
        self.pages.setCurrentIndex(1)
        self.status.setText(f"The comparison failed: {message}")

    def _on_step(self, mode: str) -> None:
        self.pages.setCurrentIndex(1)
        self.status.setText(f"Capturing in mode {mode}… ({time.strftime('%H:%M:%S')})")

    def show_rows(self, rows: list[ModeRow], folder: Path | None = None) -> None:
        """The comparison: of the captures just made, or of a `modes` folder opened (`folder`)."""
        self.pages.setCurrentIndex(1)
        self.rows = rows
        best = fastest(rows)
        opened = f"The modes captured in {folder}" if folder is not None else ""
        self.status.setText("\n".join(text for text in (opened, best.text, caches_text(rows)) if text))
        fill_rows(self.table, [(row.mode, seconds(row.compile_s), seconds(row.steady_s), quantity(row.speedup, "×"),
                                str(row.breaks), str(row.recompiles), str(row.kernels), row.note(best.mode))
                               for row in rows])
        positions = list(range(len(rows)))
        for plot, values, colour in ((self.steady, [(r.steady_s or 0) * 1e6 for r in rows], "#2e9d4f"),
                                     (self.compile, [r.compile_s or 0 for r in rows], "#2b7bb9")):
            plot.clear()
            plot.addItem(pg.BarGraphItem(x=positions, height=values, width=0.6, brush=colour))
            plot.getAxis("bottom").setTicks([[(p, row.mode) for p, row in zip(positions, rows)]])

