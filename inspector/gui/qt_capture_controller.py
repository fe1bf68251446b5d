"""Owns a running capture: a QProcess running our runner in the user's interpreter, the session
folder's manifest, and the progress stream, read on a timer (reads are small and non-blocking).
Cancel ends the whole process tree (the runner leads its own process group) and keeps the session."""

from __future__ import annotations

import signal
import time
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal

from inspector.capture.launcher import (
    CapturePlan, CaptureSettings, finish_manifest, kill_process_group, plan_script, tail_progress, write_manifest,
)
from inspector.core.readers.stage_progress import StageProgress

POLL_MS = 50
KILL_AFTER_MS = 400


class QtCaptureController(QObject):
    sigStarted = Signal(str)  # session folder
    sigProgress = Signal(object)  # StageProgress (the same object, updated)
    sigOutput = Signal(str, str)  # stream ("stdout" | "stderr"), text
    sigFinished = Signal(str, int, object)  # session folder, exit status, error dict or None

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.process: QProcess | None = None
        self.plan: CapturePlan | None = None
        self.progress = StageProgress()
        self.stopped_by: str | None = None
        self._offset = 0
        self._files: dict[str, object] = {}
        self._timer = QTimer(self)
        self._timer.setInterval(POLL_MS)
        self._timer.timeout.connect(self._poll_progress)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.state() != QProcess.ProcessState.NotRunning

    def start(self, script: Path, session: Path, settings: CaptureSettings, python: str | None) -> None:
        if self.running:
            raise RuntimeError("a capture is already running")
        self.plan = plan = plan_script(script, [], session, settings, python)
        self.progress, self.stopped_by, self._offset = StageProgress(), None, 0
        plan.session.mkdir(parents=True, exist_ok=True)
        (plan.session / "trace").mkdir(exist_ok=True)
        write_manifest(plan, started=time.time(), complete=False, exit_status=None)
        self._files = {name: open(plan.session / f"{name}.txt", "ab") for name in ("stdout", "stderr")}
        process = self.process = QProcess(self)
        environment = QProcessEnvironment()
        for key, value in plan.env.items():
            environment.insert(key, value)
        process.setProcessEnvironment(environment)
        process.setWorkingDirectory(str(plan.script.parent))
        process.readyReadStandardOutput.connect(lambda: self._read("stdout"))
        process.readyReadStandardError.connect(lambda: self._read("stderr"))
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(self._on_error)
        process.start(plan.command[0], plan.command[1:])
        self._timer.start()
        self.sigStarted.emit(str(plan.session))

    def cancel(self) -> None:
        """Ask the whole tree to stop now, and kill it if it has not gone a moment later."""
        if not self.running:
            return
        self.stopped_by = "cancelled"
        pid = self.process.processId()
        if not kill_process_group(pid, signal.SIGTERM):
            self.process.terminate()
        QTimer.singleShot(KILL_AFTER_MS, self._kill_if_alive)

    def shutdown(self) -> None:
        """The app is closing: end the run's whole tree now (its session stays on disk, incomplete)."""
        if self.running:
            self.stopped_by = "cancelled"
            if not kill_process_group(self.process.processId(), signal.SIGKILL):
                self.process.kill()
            self.process.waitForFinished(1000)

    def _kill_if_alive(self) -> None:
        if self.running:
            if not kill_process_group(self.process.processId(), signal.SIGKILL):
                self.process.kill()

    def _read(self, stream: str) -> None:
        data = bytes(self.process.readAllStandardOutput() if stream == "stdout" else self.process.readAllStandardError())
        handle = self._files.get(stream)
        if handle and not handle.closed:
            handle.write(data)
        self.sigOutput.emit(stream, data.decode("utf-8", errors="replace"))

    def _poll_progress(self) -> None:
        if not self.plan:
            return
        events, self._offset = tail_progress(self.plan.session, self._offset)
        for event in events:
            self.progress.apply(event)
        if events:
            self.sigProgress.emit(self.progress)

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self._close(-1, {"kind": "cannot_start", "message": f"could not start {self.plan.command[0]}"})

    def _on_finished(self, exit_code: int, exit_status: QProcess.ExitStatus) -> None:
        self._read("stdout")
        self._read("stderr")
        self._poll_progress()
        code = exit_code if exit_status == QProcess.ExitStatus.NormalExit else -signal.SIGKILL
        manifest = finish_manifest(self.plan, code, self.stopped_by)
        self._close(code, manifest.get("error"))

    def _close(self, code: int, error: dict | None) -> None:
        self._timer.stop()
        for handle in self._files.values():
            handle.close()
        if error and error.get("kind") == "cannot_start":
            write_manifest(self.plan, ended=time.time(), exit_status=None, complete=False, error=error)
        self.sigFinished.emit(str(self.plan.session), code, error)
