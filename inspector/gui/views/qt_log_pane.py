"""Live log of the capture's stdout and stderr: bounded, filterable."""

from __future__ import annotations

from collections import deque

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLineEdit, QPlainTextEdit, QVBoxLayout, QWidget

from inspector.gui.qt_capture_controller import QtCaptureController

MAX_LINES = 20_000
NO_RUN_YET = ("The output of a script compiled from here (Run ▸ Run, F5) shows here as it runs: its stdout and "
              "stderr. An opened log or session keeps no output of its run here (a capture folder holds it in "
              "stdout.txt and stderr.txt).")


class QtLogPane(QWidget):
    def __init__(self, controller: QtCaptureController):
        super().__init__()
        self.lines: deque[tuple[str, str]] = deque(maxlen=MAX_LINES)
        self._partial = {"stdout": "", "stderr": ""}
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setMaximumBlockCount(MAX_LINES)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setPlaceholderText(NO_RUN_YET)  # a blank pane beside an opened log read as output lost
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter lines (text)")
        self.filter.textChanged.connect(self._refill)
        self.stderr_only = QCheckBox("stderr only")
        self.stderr_only.toggled.connect(self._refill)
        bar = QHBoxLayout()
        bar.addWidget(self.filter)
        bar.addWidget(self.stderr_only)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.text)
        controller.sigStarted.connect(self._on_started)
        controller.sigOutput.connect(self.append)

    def find_box(self) -> QLineEdit:
        return self.filter

    def _on_started(self, session: str) -> None:
        self.lines.clear()
        self.text.clear()
        self.text.appendPlainText(f"capturing into {session}")

    def _matches(self, stream: str, line: str) -> bool:
        if self.stderr_only.isChecked() and stream != "stderr":
            return False
        needle = self.filter.text()
        return not needle or needle.lower() in line.lower()

    def append(self, stream: str, text: str) -> None:
        text = self._partial[stream] + text
        *complete, self._partial[stream] = text.split("\n")
        shown = []
        for line in complete:
            self.lines.append((stream, line))
            if self._matches(stream, line):
                shown.append(line)
        if shown:
            self.text.appendPlainText("\n".join(shown))
        self._say_what_is_hidden()

    def _refill(self) -> None:
        self.text.setPlainText("\n".join(line for stream, line in self.lines if self._matches(stream, line)))
        self._say_what_is_hidden()

    def _say_what_is_hidden(self) -> None:
        """The blank pane's words: with output held and none shown, that the filter hides it all (the words
        for a pane before any run said no output was kept, which was then untrue)."""
        if not self.lines:
            self.text.setPlaceholderText(NO_RUN_YET)
            return
        held = len(self.lines)
        what = " and ".join(part for part in (f"“{self.filter.text()}”" if self.filter.text() else "",
                                              "stderr only" if self.stderr_only.isChecked() else "") if part)
        self.text.setPlaceholderText(f"No line matches the filter ({what}): {held} line{'s' if held != 1 else ''} "
                                     f"of output hidden; clear the filter to see {'them' if held != 1 else 'it'}.")
