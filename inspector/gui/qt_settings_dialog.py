"""Settings: the Python interpreter captures run in (checked: its torch version and whether it sees
CUDA, probed in the background when the field is left or typing pauses; only the answer for what the
field holds is shown), the compile options of a run, and the Dask scheduler a big job's
rank logs are read on."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFileDialog, QFormLayout, QHBoxLayout, QLabel,
    QLineEdit, QPushButton, QSpinBox, QWidget,
)

from inspector.capture.launcher import CaptureSettings, candidate_interpreters, probe_interpreter
from inspector.capture.options import OPTIONS, Option
from inspector.core.analysis.dask_engine import INSECURE_WARNING, DaskSetupError, DaskTarget
from inspector.gui.qt_background import LatestRequest, run_in_background
from inspector.gui.qt_settings import AppSettings

CHECK_PAUSE_MS = 700  # typing that pauses this long has the interpreter checked (a probe starts a process)


class QtSettingsDialog(QDialog):
    def __init__(self, settings: AppSettings, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Capture settings")
        self.settings = settings
        current = settings.capture_settings()
        self.python = QComboBox()
        self.python.setEditable(True)
        self.python.addItems([settings.python] + [p for p in candidate_interpreters() if p != settings.python])
        self._probes = LatestRequest(self)  # an answer for an earlier text never replaces a later one
        self.checked_python: str | None = None  # the interpreter the line under the field speaks of
        self._pause = QTimer(self)
        self._pause.setSingleShot(True)
        self._pause.setInterval(CHECK_PAUSE_MS)
        self._pause.timeout.connect(self.check_interpreter)
        self.python.editTextChanged.connect(self._on_python_typed)
        self.python.activated.connect(lambda _index: self.check_interpreter())  # one picked from the list
        self.python.lineEdit().editingFinished.connect(self.check_interpreter)  # the field left, or Enter
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        check = QPushButton("Check")
        check.clicked.connect(lambda: (setattr(self, "checked_python", None), self.check_interpreter()))
        row = QHBoxLayout()
        row.addWidget(self.python)
        row.addWidget(browse)
        row.addWidget(check)
        self.interpreter_info = QLabel("")
        self.interpreter_info.setWordWrap(True)
        form = QFormLayout(self)
        form.addRow("Python interpreter", row)
        form.addRow("", self.interpreter_info)
        self.option_widgets = {option.name: self._option_widget(option, getattr(current, option.name))
                               for option in OPTIONS}
        for option in OPTIONS:
            widget = self.option_widgets[option.name]
            setattr(self, option.name, widget)  # dialog.runs, dialog.mode, …
            widget.setToolTip(option.help)
            form.addRow("" if option.type is bool else option.label, widget)
        self.dask_scheduler = QLineEdit(settings.dask_scheduler)
        self.dask_scheduler.setPlaceholderText("tls://scheduler:8786 (empty: this machine)")
        self.dask_scheduler.setToolTip(
            "A distributed job's per-rank overview (a folder of rank logs, 32 MB or more) is read on the Dask "
            "cluster with this scheduler, one log per task where the logs lie: its workers must see them at the "
            "same paths (a shared filesystem). Needs Dask's distributed (pip install 'compile-inspector[dask]'); "
            "where it is missing or the scheduler cannot be reached, the logs are read on this machine and the "
            "status bar says why. Dask's protocol carries pickles: a tls:// scheduler is reached with your "
            "certificates below; a plain tcp:// one only when allowed beside.")
        # the opt-in for plain tcp:// sits beside the address it is about, its warning in the tooltip: the
        # warning itself shows under the Dask rows, in core's words, once such an address is typed
        self.dask_allow_insecure = QCheckBox("Allow plain tcp://")
        self.dask_allow_insecure.setToolTip(f"Checked: a plain tcp:// scheduler is used, though {INSECURE_WARNING}.")
        self.dask_allow_insecure.setChecked(settings.dask_allow_insecure)
        self.dask_allow_insecure.toggled.connect(lambda _: self._check_dask())
        scheduler_row = QHBoxLayout()
        scheduler_row.addWidget(self.dask_scheduler, 1)
        scheduler_row.addWidget(self.dask_allow_insecure)
        form.addRow("Read rank logs on Dask", scheduler_row)
        self.dask_tls = {}
        for name, value, label, hint in zip(("ca", "cert", "key"), settings.dask_tls,
                                            ("Dask TLS: CA certificate", "Dask TLS: this client's certificate",
                                             "Dask TLS: this client's key"),
                                            ("the CA that signed the scheduler's certificate (PEM)",
                                             "client certificate (PEM)",
                                             "client key (PEM; empty: in the certificate)")):
            self.dask_tls[name] = QLineEdit(value)
            self.dask_tls[name].setPlaceholderText(hint)
            self.dask_tls[name].textChanged.connect(lambda _: self._check_dask())
            form.addRow(label, self.dask_tls[name])
        self.dask_check = QLabel("")
        self.dask_check.setWordWrap(True)
        form.addRow(self.dask_check)  # the whole width: core's warning is long, and wrapped narrower it is taller
        self.dask_scheduler.textChanged.connect(lambda _: self._check_dask())
        self._check_dask()
        self.record_history = QCheckBox("Record every opened run in the run history (History tab, "
                                        "compile-inspector history)")
        self.record_history.setChecked(settings.record_history)
        form.addRow("Run history", self.record_history)
        self.history_store = QLineEdit(settings.history_store or "")
        self.history_store.setPlaceholderText("empty: TCI_HISTORY_STORE, else the local file; or postgresql://…")
        self.history_store.setToolTip("Where the run history lives: a SQLite file, or a team's PostgreSQL database "
                                      "(needs pip install 'compile-inspector[history-postgres]')")
        form.addRow("History store", self.history_store)
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
            label = (f"torch {info['torch']}" + (", CUDA" if info.get("cuda") else "") if info.get("torch")
                     else "no torch")
            self.python.setItemData(index, label, Qt.ItemDataRole.ToolTipRole)
            self.python.setItemData(index, label, Qt.ItemDataRole.UserRole)
        self.candidate_labels = {self.python.itemText(i): self.python.itemData(i, Qt.ItemDataRole.UserRole)
                                 for i in range(self.python.count())}

    @staticmethod
    def _option_widget(option: Option, value) -> QWidget:
        """The editor for one capture option, chosen by its type; an unset optional number shows as
        "not set" at the bottom of its range."""
        if option.choices:
            widget = QComboBox()
            widget.addItems(option.choices)
            widget.setCurrentText(str(value))
        elif option.type is bool:
            widget = QCheckBox(option.help)
            widget.setChecked(bool(value))
        elif option.type is int:
            widget = QSpinBox()
            widget.setRange(int(option.minimum) - (option.default is None), 100_000)
        elif option.type is float:
            widget = QDoubleSpinBox()
            widget.setDecimals(3)  # seconds: a timing round of 0.05 s must not round to 0.1
            widget.setRange(0.0 if option.default is None else option.minimum, 1e6)
        else:
            widget = QLineEdit(str(value))
        if isinstance(widget, (QSpinBox, QDoubleSpinBox)):
            if option.default is None:
                widget.setSpecialValueText("not set")
            widget.setValue(widget.minimum() if value is None else value)
        return widget

    def _option_value(self, option: Option):
        widget = self.option_widgets[option.name]
        if isinstance(widget, QComboBox):
            return widget.currentText()
        if isinstance(widget, QCheckBox):
            return widget.isChecked()
        if isinstance(widget, (QSpinBox, QDoubleSpinBox)):
            if option.default is None and widget.value() == widget.minimum():
                return None
            return widget.value()
        return widget.text().strip() or option.default

    def _browse(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Python interpreter", self.python.currentText())
        if path:
            self.python.setCurrentText(path)

    def _on_python_typed(self, _text: str) -> None:
        """What was said of an earlier text goes at once (it is not about this one); the check waits
        for a pause in the typing."""
        self._probes.supersede()
        self.checked_python = None
        self.interpreter_info.setText("")
        self._pause.start()

    def check_interpreter(self) -> None:
        """Probe the interpreter the field holds now (once per text: leaving the field after a pause
        does not probe it again)."""
        self._pause.stop()
        python = self.python.currentText()
        if python == self.checked_python:
            return
        self.checked_python = python
        self.interpreter_info.setText(f"checking {html.escape(python)}…")
        self._probes.run(lambda: probe_interpreter(python), self._show_probe,
                         lambda message, _tb: self.interpreter_info.setText(html.escape(message)))

    def _show_probe(self, info: dict) -> None:
        if info.get("torch"):
            cuda = "CUDA available" if info.get("cuda") else "no CUDA (CPU only)"
            self.interpreter_info.setText(f"Python {info['python']}, torch {info['torch']}, {cuda}")
        else:
            self.interpreter_info.setText(f"<b>No usable torch</b>: "
                                          f"{html.escape(str(info.get('error', 'unknown error')))}")

    def _dask_target(self) -> DaskTarget:
        files = (self.dask_tls[name].text().strip() for name in ("ca", "cert", "key"))
        return DaskTarget(self.dask_scheduler.text(), *files, allow_insecure=self.dask_allow_insecure.isChecked())

    def _check_dask(self) -> None:
        """Say under the Dask settings whether they can be used as they are, and why not: a tcp://
        address without the opt-in, tls:// without certificates, a file that is not there."""
        if not self.dask_scheduler.text().strip():
            self.dask_check.setText("")
            return
        try:
            target = self._dask_target().checked()
        except DaskSetupError as error:
            self.dask_check.setText(f"<b>Not used</b> (rank logs read on this machine): {html.escape(str(error))}")
            return
        self.dask_check.setText(f"{html.escape(target.address)} over TLS with these certificates" if target.uses_tls
                                else f"<b>Warning</b>: {html.escape(INSECURE_WARNING)}")

    def accept(self) -> None:
        self.settings.python = self.python.currentText()
        self.settings.dask_scheduler = self.dask_scheduler.text()
        self.settings.dask_tls = tuple(self.dask_tls[name].text() for name in ("ca", "cert", "key"))
        self.settings.dask_allow_insecure = self.dask_allow_insecure.isChecked()
        self.settings.record_history = self.record_history.isChecked()
        self.settings.history_store = self.history_store.text()
        self.settings.set_capture_settings(CaptureSettings.from_mapping(
            {option.name: self._option_value(option) for option in OPTIONS}))
        super().accept()
