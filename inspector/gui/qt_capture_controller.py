"""The app's side of a running capture: a thin Qt adapter over the same `CaptureProcess` the CLI
drives. A timer polls it (never blocking) — which enforces the timeout and carries a cancel through to
SIGKILL — and tails the files it writes: stdout.txt and stderr.txt for the log pane, progress.jsonl
for the stage strip. Cancel ends the whole process tree and keeps the session."""

from __future__ import annotations

import codecs
import time
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.capture.launcher import CapturePlan, CaptureProcess, CaptureSettings, plan_script, tail_progress
from inspector.core.readers.stage_progress import StageProgress
from inspector.gui.qt_background import next_turn

POLL_MS = 50
MAX_OUTPUT_PER_POLL = 256 * 1024  # bytes per stream and tick: a flooding script cannot stall the window
SHUTDOWN_WAIT_S = 1.0


class QtCaptureController(QObject):
    sigStarted = Signal(str)  # session folder
    sigProgress = Signal(object)  # StageProgress (the same object, updated)
    sigOutput = Signal(str, str)  # stream ("stdout" | "stderr"), text
    sigFinished = Signal(str, int, object)  # session folder, exit status (as a shell reports it), error dict or None

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.process: CaptureProcess | None = None
        self.plan: CapturePlan | None = None
        self.progress = StageProgress()
        self._offset = 0
        self._outputs: dict[str, OutputTail] = {}
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.running

    @property
    def stopped_by(self) -> str | None:
        return self.process.stopped_by if self.process else None

    def start(self, script: Path, session: Path, settings: CaptureSettings, python: str | None) -> None:
        """Capture `script` with our runner in `python`."""
        self.start_plan(plan_script(script, [], session, settings, python))

    def start_plan(self, plan: CapturePlan) -> None:
        """Run any planned capture (`plan_script` or `plan_command`)."""
        if self.running:
            raise RuntimeError("a capture is already running")
        self.plan = plan
        self.progress, self._offset = StageProgress(), 0
        try:
            self.process = CaptureProcess(plan)
        except OSError:  # the manifest says why; the session folder stays
            self.process = None
            self.sigStarted.emit(str(plan.session))
            next_turn(self, lambda: self.sigFinished.emit(
                str(plan.session), -1, {"kind": "cannot_start", "message": f"could not start {plan.command[0]}"}))
            return
        self._outputs = {name: OutputTail(plan.session / f"{name}.txt") for name in ("stdout", "stderr")}
        self._timer.start()
        self.sigStarted.emit(str(plan.session))

    def cancel(self) -> None:
        """SIGTERM to the whole tree now; the next polls SIGKILL what is left after a short grace."""
        if self.running:
            self.process.stop("cancelled")

    def shutdown(self) -> None:
        """The app is closing: kill the run's whole tree now (its session stays on disk, incomplete),
        waiting at most a moment for it to go."""
        if not self.running:
            return
        self.process.stop("cancelled", grace_s=0)
        deadline = time.monotonic() + SHUTDOWN_WAIT_S
        while self.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        self._poll()

    def _poll(self) -> None:
        if self.process is None:
            return
        code = self.process.poll()
        for stream, tail in self._outputs.items():
            text = tail.read()
            if text:
                self.sigOutput.emit(stream, text)
        events, self._offset = tail_progress(self.plan.session, self._offset)
        for event in events:
            self.progress.apply(event)
        if events:
            self.sigProgress.emit(self.progress)
        if code is not None and self._timer.isActive():
            self._timer.stop()
            self.sigFinished.emit(str(self.plan.session), self.process.exit_code, self.process.error)


class OutputTail:
    """New text of a file another process is writing, decoded across chunk boundaries; when more than
    `MAX_OUTPUT_PER_POLL` arrived since the last read, the middle is skipped (it stays in the file)."""

    def __init__(self, path: Path):
        self.path = path
        self.offset = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def read(self) -> str:
        try:
            with open(self.path, "rb") as handle:
                size = handle.seek(0, 2)
                skipped = 0
                if size - self.offset > MAX_OUTPUT_PER_POLL:
                    skipped = size - MAX_OUTPUT_PER_POLL - self.offset
                    self.offset = size - MAX_OUTPUT_PER_POLL
                    self.decoder.reset()
                handle.seek(self.offset)
                data = handle.read(size - self.offset)
        except OSError:
            return ""
        self.offset += len(data)
        text = self.decoder.decode(data)
        if skipped:
            text = f"\n[… {skipped:,} bytes not shown here: see {self.path.name} …]\n" + text
        return text
