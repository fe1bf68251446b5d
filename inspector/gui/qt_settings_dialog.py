"""Settings: the Python interpreter captures run in (checked: its torch version and whether it sees
CUDA, probed in the background) and the compile options of a run."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel, QPushButton,
    QSpinBox, QWidget,
)

from inspector.capture.launcher import CaptureSettings, candidate_interpreters, probe_interpreter
from inspector.capture.options import DYNAMIC, MODES
from inspector.gui.qt_background import run_in_background
from inspector.gui.qt_settings import AppSettings


class QtSettingsDialog(QDialog):
    def __init__(self, settings: AppSettings, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Capture settings")
        self.settings = settings
        current = settings.capture_settings()
        self.python = QComboBox()
        self.python.setEditable(True)
        self.python.addItems([settings.python] + [p for p in candidate_interpreters() if p != settings.python])
        self.python.currentTextChanged.connect(lambda _: self.check_interpreter())
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        check = QPushButton("Check")
        check.clicked.connect(self.check_interpreter)
        row = QHBoxLayout()
        row.addWidget(self.python)
        row.addWidget(browse)
        row.addWidget(check)
        self.interpreter_info = QLabel("")
        self.interpreter_info.setWordWrap(True)
        self.mode = self._combo(MODES, current.mode)
        self.dynamic = self._combo(DYNAMIC, current.dynamic)
        self.device = self._combo(["cpu", "cuda"], current.device)
        self.fullgraph = QCheckBox("fail on the first graph break")
        self.fullgraph.setChecked(current.fullgraph)
        self.runs = QSpinBox()
        self.runs.setRange(1, 10_000)
        self.runs.setValue(current.runs)
        self.profile = QCheckBox("profile eager and compiled (per-kernel times)")
        self.profile.setChecked(current.profile)
        form = QFormLayout(self)
        form.addRow("Python interpreter", row)
        form.addRow("", self.interpreter_info)
        form.addRow("Mode", self.mode)
        form.addRow("Dynamic shapes", self.dynamic)
        form.addRow("fullgraph", self.fullgraph)
        form.addRow("Device", self.device)
        form.addRow("Timed runs", self.runs)
        form.addRow("", self.profile)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self.check_interpreter()
        candidates = [self.python.itemText(i) for i in range(self.python.count())]
        run_in_background(lambda: {path: probe_interpreter(path) for path in candidates}, self._label_candidates,
                          lambda message, _tb: None, self)

    def _label_candidates(self, probes: dict) -> None:
        """Say next to each interpreter found whether it has torch (probed once, in the background)."""
        for index in range(self.python.count()):
            info = probes.get(self.python.itemText(index)) or {}
            label = f"torch {info['torch']}" + (", CUDA" if info.get("cuda") else "") if info.get("torch") else "no torch"
            self.python.setItemData(index, label, Qt.ItemDataRole.ToolTipRole)
            self.python.setItemData(index, label, Qt.ItemDataRole.UserRole)
        self.candidate_labels = {self.python.itemText(i): self.python.itemData(i, Qt.ItemDataRole.UserRole)
                                 for i in range(self.python.count())}

    @staticmethod
    def _combo(values, current: str) -> QComboBox:
        combo = QComboBox()
        combo.addItems(values)
        combo.setCurrentText(current)
        return combo

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Python interpreter", self.python.currentText())
        if path:
            self.python.setCurrentText(path)

    def check_interpreter(self) -> None:
        python = self.python.currentText()
        self.interpreter_info.setText(f"checking {python}…")
        run_in_background(lambda: probe_interpreter(python), self._show_probe,
                          lambda message, _tb: self.interpreter_info.setText(message), self)

    def _show_probe(self, info: dict) -> None:
        if info.get("torch"):
            cuda = "CUDA available" if info.get("cuda") else "no CUDA (CPU only)"
            self.interpreter_info.setText(f"Python {info['python']}, torch {info['torch']}, {cuda}")
        else:
            self.interpreter_info.setText(f"<b>No usable torch</b>: {info.get('error', 'unknown error')}")

    def accept(self) -> None:
        previous = self.settings.capture_settings()
        self.settings.python = self.python.currentText()
        self.settings.set_capture_settings(CaptureSettings(
            mode=self.mode.currentText(), dynamic=self.dynamic.currentText(), fullgraph=self.fullgraph.isChecked(),
            backend=previous.backend, device=self.device.currentText(), runs=self.runs.value(), warmup=previous.warmup,
            profile=self.profile.isChecked(), timeout_s=previous.timeout_s, threads=previous.threads))
        super().accept()
