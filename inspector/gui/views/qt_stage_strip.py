"""The live stage strip: graph capture → graph optimisation → code generation → backend compile, one row
per compile unit (every unit: the window puts the strip in a scroll area that follows the newest), each
cell lit as its events arrive, with its own time; beside the rows one benchmark cell for the run's
measuring phase, which is not any unit's. Idle it is one line; a run that succeeded folds it to one
line saying what compiled (the room goes back to the tabs), and a click on it opens the rows again."""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QToolTip, QWidget

from inspector.core.model.pipeline import PIPELINE
from inspector.core.numbers import count, seconds
from inspector.core.readers.stage_progress import StageProgress
from inspector.gui.qt_capture_controller import QtCaptureController

ROW_HEIGHT = 20
VISIBLE_ROWS = 4  # rows the window gives the strip before it scrolls
LABEL_WIDTH = 70
BENCHMARK = "benchmark"
STATE_COLOURS = {"waiting": "#408a8f98", "running": "#e0a526", "done": "#2e9d4f", "failed": "#d64545"}


class QtStageStrip(QWidget):
    sigFolded = Signal(bool)  # folded to one line (True) or opened again (False): the window refits its dock

    def __init__(self, controller: QtCaptureController):
        super().__init__()
        self.folded = False  # one line with the run's outcome instead of a row per unit
        self.progress = StageProgress()
        self.started_at: float | None = None
        self.stopped = False  # the run ended while a stage was still open
        self.ended: str | None = None  # how a run that did not succeed ended (cancelled, failed: why)
        self.finished = False  # the latest run has ended (however it did)
        self.finished_at: float | None = None
        self.session: str | None = None  # the run drawn (a finish of an earlier one is not this one's)
        self.title: str | None = None  # what the run is, when it is one of several (a mode of Compare Modes)
        self.done_runs: list[str] = []  # those of the several that ended, with what they compiled
        controller.sigStarted.connect(self._on_started)
        controller.sigProgress.connect(self._on_progress)
        controller.sigFinished.connect(self._on_finished)
        self._ticker = QTimer(self)  # elapsed time keeps counting between events
        self._ticker.setInterval(250)
        self._ticker.timeout.connect(self.update)

    def rows_height(self) -> int:
        """The height every row needs (header plus one per unit; one line while nothing ran; and one
        saying how a run with units ended, if it did not succeed)."""
        units = len(self.progress.units)
        if self.folded:
            return ROW_HEIGHT + 8
        return ROW_HEIGHT * (1 + max(1, units) + (1 if units and self.ended else 0)) + 8

    def sizeHint(self) -> QSize:
        return QSize(800, self.rows_height())

    def minimumSizeHint(self) -> QSize:
        return QSize(200, self.rows_height())

    def start_series(self) -> None:
        """Several runs follow (Compare Modes): each says its title and what the ones before compiled."""
        self.done_runs, self.title = [], None

    def _on_started(self, session: str) -> None:
        self.session = session
        self.progress, self.started_at, self.stopped, self.ended = StageProgress(), time.time(), False, None
        self.finished = False
        self.set_folded(False)
        self.setMinimumHeight(self.rows_height())
        self._ticker.start()
        self.updateGeometry()
        self.update()

    def _on_progress(self, progress: StageProgress) -> None:
        self.progress = progress  # the controller may hand the same object, updated: compare heights
        if self.minimumHeight() != self.rows_height():
            self.setMinimumHeight(self.rows_height())
            self.updateGeometry()
        self.update()

    def _on_finished(self, session: str, code: int, error) -> None:
        if session != self.session:  # the next mode's run started before this finish reached the strip
            return
        if self.title:
            ended = end_state(code, error)
            self.done_runs.append(f"{self.title}: {count(len(self.progress.units), 'unit')} compiled"
                                  + (f" ({ended})" if ended else ""))
        self.stopped, self.finished, self.finished_at = code != 0, True, time.time()
        self.ended = end_state(code, error)
        self._ticker.stop()
        if self.ended is None and self.progress.units:  # a failure's reason stays on show with its rows
            self.set_folded(True)
        if self.minimumHeight() != self.rows_height():
            self.setMinimumHeight(self.rows_height())
            self.updateGeometry()
        self.update()

    def set_folded(self, folded: bool) -> None:
        if folded == self.folded:
            return
        self.folded = folded
        self.setMinimumHeight(self.rows_height())
        self.setCursor(Qt.CursorShape.PointingHandCursor if folded else Qt.CursorShape.ArrowCursor)
        self.updateGeometry()
        self.update()
        self.sigFolded.emit(folded)

    def folded_text(self) -> str:
        """The folded strip's line: what the run compiled, and how to see the stages again."""
        units = len(self.progress.units)
        took = (f" in {seconds(self.finished_at - self.started_at)}"
                if self.started_at is not None and self.finished_at is not None else "")
        if self.done_runs:
            return f"▸ {'; '.join(self.done_runs)} — click to show the last run's stages"
        return f"▸ {count(units, 'compile unit')} compiled{took} — click to show each unit's stages"

    def mousePressEvent(self, event) -> None:
        if self.folded or (self.finished and event.position().y() < ROW_HEIGHT + 4):  # the header folds it back
            self.set_folded(not self.folded)
            return
        super().mousePressEvent(event)

    def status_text(self) -> str:
        """The strip's own line: a hint before any run, how a run that did not succeed ended, and
        "starting" only while a run is starting (empty while units are drawn and nothing went wrong)."""
        if self.ended:
            return self.ended
        if self.progress.units:
            return ""
        if self.title and not self.finished:  # a mode starting: what the modes before it compiled
            return f"{self.title}: starting" + (f" (after {'; '.join(self.done_runs)})" if self.done_runs else "")
        if self.finished:
            return "finished: nothing was compiled"
        return ("Run a script (Run ▸ Run, F5) to watch it compile, stage by stage." if self.started_at is None
                else "starting: importing torch…")

    def cell_states(self) -> dict[str, dict[str, str]]:
        """compile id → pipeline step → waiting | running | done (what the strip draws)."""
        states = {}
        for compile_id, steps in self.progress.units.items():
            states[compile_id] = {step: self.progress.benchmark_state if step == BENCHMARK else
                                  ("failed" if self.progress.error or self.stopped else "running") if state.running
                                  else "done" if state.started is not None else "waiting"
                                  for step, state in steps.items()}
        return states

    def cell_at(self, x: float, y: float) -> tuple[str, str] | None:
        """(compile id, pipeline step) of the cell at widget point (x, y), if any."""
        row, width = int((y - 4) // ROW_HEIGHT) - 1, self.column_width()
        column = int((x - LABEL_WIDTH) // width) if width > 0 and x >= LABEL_WIDTH else -1
        ids = list(self.progress.units)
        if 0 <= row < len(ids) and 0 <= column < len(PIPELINE):
            return ids[row], PIPELINE[column]
        return None

    def column_width(self) -> float:
        """The width of one pipeline step's column (the unit labels take LABEL_WIDTH on the left)."""
        return (self.width() - LABEL_WIDTH - 8) / len(PIPELINE)

    def benchmark_rect(self) -> QRectF:
        """The benchmark cell: one for the run, beside every unit's row (it measures the whole model)."""
        width = self.column_width()
        column = PIPELINE.index(BENCHMARK)
        return QRectF(LABEL_WIDTH + column * width + 2, ROW_HEIGHT + 5, width - 4,
                      ROW_HEIGHT * len(self.progress.units) - 2)

    def event(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            cell = None if self.folded else self.cell_at(event.pos().x(), event.pos().y())
            if self.folded:
                QToolTip.showText(event.globalPos(), "Click to show each compile unit's stages", self)
            elif cell is None and self.finished and event.pos().y() < ROW_HEIGHT + 4:
                QToolTip.showText(event.globalPos(), "Click to fold the stages to one line", self)
            elif cell is None and self.ended:  # the end state whole, however long its reason
                QToolTip.showText(event.globalPos(), self.ended, self)
            elif cell is None:
                QToolTip.hideText()
            else:
                compile_id, step = cell
                state = self.cell_states()[compile_id][step]
                now = time.time()
                elapsed = (self.progress.benchmark_elapsed(now) if step == BENCHMARK
                           else self.progress.units[compile_id][step].elapsed(now))
                subject = "benchmark (one phase of the whole run, after every unit compiled)" if step == BENCHMARK \
                    else f"[{compile_id}] {step}"
                QToolTip.showText(event.globalPos(), f"{subject}: {state}"
                                  + (f", {seconds(elapsed)} own time" if elapsed is not None else "")
                                  + step_note(step, self.progress.concurrent.get(compile_id)), self)
            return True
        return super().event(event)

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if self.folded:
            painter.setPen(self.palette().text().color())
            painter.drawText(QRectF(6, 4, self.width() - 12, ROW_HEIGHT), Qt.AlignmentFlag.AlignVCenter,
                             self.folded_text())
            painter.end()
            return
        label_width = LABEL_WIDTH
        width = self.column_width()
        now = time.time()
        text = self.palette().text().color()
        rows = list(self.progress.units.items())
        line = self.status_text()
        if line:  # under the units, if any (a failure's own colour), else in the strip's one line
            painter.setPen(QColor(STATE_COLOURS["failed"]) if self.ended else text)
            painter.drawText(QRectF(4, ROW_HEIGHT * (max(1, len(rows)) + (1 if rows else 0)) + 4, self.width() - 8,
                                    ROW_HEIGHT),
                             Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextSingleLine, line)
        states = self.cell_states()
        for row, (compile_id, steps) in enumerate(rows):
            y = ROW_HEIGHT * (row + 1) + 4
            painter.setPen(text)
            painter.drawText(QRectF(0, y, label_width, ROW_HEIGHT), Qt.AlignmentFlag.AlignVCenter, f"[{compile_id}]")
            for column, step in enumerate(PIPELINE):
                if step != BENCHMARK:  # one phase of the whole run, drawn once across the rows below
                    self._cell(painter, QRectF(label_width + column * width + 2, y + 1, width - 4, ROW_HEIGHT - 2),
                               states[compile_id][step], steps[step].elapsed(now))
        if rows:  # its time in the part on screen: the rows scroll
            whole = self.benchmark_rect()
            shown = whole.intersected(QRectF(self.visibleRegion().boundingRect()))
            self._cell(painter, whole, self.progress.benchmark_state, self.progress.benchmark_elapsed(now),
                       shown if not shown.isEmpty() else whole)
        # the header last, at the top of what is on screen: it stays put while the rows scroll under it
        top = self.visibleRegion().boundingRect().top() if not self.visibleRegion().isEmpty() else 0
        painter.fillRect(QRectF(0, top, self.width(), ROW_HEIGHT + 4), self.palette().window())
        painter.setPen(text)
        for column, step in enumerate(PIPELINE):
            painter.drawText(QRectF(label_width + column * width, top + 2, width, ROW_HEIGHT),
                             Qt.AlignmentFlag.AlignCenter, step)
        painter.drawText(QRectF(0, top + 2, label_width, ROW_HEIGHT), Qt.AlignmentFlag.AlignVCenter,
                         count(len(rows), "unit"))
        painter.end()

    def _cell(self, painter: QPainter, rect: QRectF, state: str, elapsed: float | None,
              text_rect: QRectF | None = None) -> None:
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(STATE_COLOURS[state]))
        painter.drawRoundedRect(rect, 4, 4)
        if elapsed is not None:
            painter.setPen(QColor("white") if state != "waiting" else self.palette().text().color())
            painter.drawText(text_rect or rect, Qt.AlignmentFlag.AlignCenter, seconds(elapsed, 2))


def step_note(step: str, workers: dict[str, int] | None) -> str:
    """Why a step's own time differs from torch's figure of a similar name, and what ran beside it."""
    note = ""
    if step == "backend compile":
        note = ("\n(the C++/Triton builds and loading; torch's backend_compile_time_s is its backend_compile stage:"
                " AOT, Inductor and these builds)")
    if workers:
        note += ("\nbeside the compile, on worker threads (not in any own time): "
                 + ", ".join(f"{name} ×{n}" for name, n in workers.items()))
    return note


def end_state(code: int, error: dict | None) -> str | None:
    """How a capture that did not succeed ended, in words (None for one that did)."""
    if not error and code == 0:
        return None
    kind = (error or {}).get("kind")
    message = str((error or {}).get("message") or "").strip()
    if kind == "cancelled":
        return "cancelled" + (f": {message}" if message else "")
    if kind == "timeout":
        return "timed out" + (f": {message}" if message else "")
    return "failed: " + (message or f"exit status {code}")
