"""The main window: menus, shortcuts, recent files, drag-and-drop, status and progress. It wires
views to the model and controllers and holds no logic of its own; views plug in through
`add_tab` and `add_dock`, so adding a view touches no other view."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget, QFileDialog, QLabel, QMainWindow, QMessageBox, QProgressBar, QTabWidget, QWidget,
)

from inspector.core.outputs.html_report import render_report
from inspector.core.readers.session_bundle import save_bundle
from inspector.gui.qt_background import run_in_background
from inspector.gui.qt_capture_controller import QtCaptureController
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel, load_session
from inspector.gui.qt_settings import AppSettings
from inspector.gui.qt_settings_dialog import QtSettingsDialog
from inspector.gui.views.qt_code_view import QtCodeView
from inspector.gui.views.qt_dashboard import QtDashboard
from inspector.gui.views.qt_log_pane import QtLogPane
from inspector.gui.views.qt_navigator import QtNavigator
from inspector.gui.views.qt_problems import QtProblems
from inspector.gui.views.qt_ranks_view import QtRanksView
from inspector.gui.views.qt_source_view import QtSourceView
from inspector.gui.views.qt_diff_view import QtDiffView
from inspector.gui.views.qt_graph_view import QtGraphView
from inspector.gui.views.qt_kernel_plots import QtKernelPlots
from inspector.gui.views.qt_modes_view import QtModeComparison, QtModesView
from inspector.gui.views.qt_timeline import QtTimeline
from inspector.gui.views.qt_stage_strip import MAX_ROWS, ROW_HEIGHT, QtStageStrip

SESSIONS_DIR = Path(tempfile.gettempdir()) / "torch-compile-inspector"


class QtMainWindow(QMainWindow):
    def __init__(self, settings: AppSettings | None = None):
        super().__init__()
        self.setWindowTitle("torch.compile Inspector")
        self.resize(1400, 900)
        self.setAcceptDrops(True)
        self.settings = settings or AppSettings()
        self.model = QtSessionModel(self)
        self.capture = QtCaptureController(self)
        self.script: Path | None = None
        self.tabs = QTabWidget()
        self.setCentralWidget(self.tabs)
        self.views: dict[str, QWidget] = {}
        self._build_menus()
        self.add_tab("Summary", QtDashboard(self.model))
        self.add_tab("Graph", QtGraphView(self.model))
        self.add_tab("Source", QtSourceView(self.model))
        self.add_tab("Code", QtCodeView(self.model))
        self.add_tab("Timeline", QtTimeline(self.model))
        self.add_tab("Kernels", QtKernelPlots(self.model))
        self.add_tab("Ranks", QtRanksView(self.model))
        self.add_tab("Diff", QtDiffView())
        self.modes = QtModeComparison(self.capture, self)
        self.add_tab("Modes", QtModesView(self.modes))
        self.modes.sigDone.connect(lambda _rows: self.tabs.setCurrentWidget(self.views["Modes"]))
        self.add_dock("Session", QtNavigator(self.model), Qt.DockWidgetArea.LeftDockWidgetArea)
        self.add_dock("Compile stages", QtStageStrip(self.capture), Qt.DockWidgetArea.TopDockWidgetArea)
        self.add_dock("Problems", QtProblems(self.model), Qt.DockWidgetArea.BottomDockWidgetArea)
        self.add_dock("Log", QtLogPane(self.capture), Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.findChild(QDockWidget, "Problems"), self.findChild(QDockWidget, "Log"))
        self.findChild(QDockWidget, "Problems").raise_()
        self.resizeDocks([self.findChild(QDockWidget, "Session")], [430], Qt.Orientation.Horizontal)
        self.resizeDocks([self.findChild(QDockWidget, "Compile stages")], [ROW_HEIGHT * (MAX_ROWS + 1) + 12], Qt.Orientation.Vertical)
        self.status = QLabel("Ready")
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # shows paths and messages from the input
        self.progress_bar = QProgressBar()
        self.progress_bar.setMaximumWidth(220)
        self.progress_bar.hide()
        self.statusBar().addWidget(self.status, 1)
        self.statusBar().addPermanentWidget(self.progress_bar)
        self.model.sigLoaded.connect(self._on_loaded)
        self.model.sigLocationRequested.connect(lambda *_: self.tabs.setCurrentWidget(self.views["Source"]))
        self.capture.sigStarted.connect(self._on_capture_started)
        self.capture.sigProgress.connect(self._on_capture_progress)
        self.capture.sigFinished.connect(self._on_capture_finished)

    # --- layout --------------------------------------------------------------------------------
    def add_tab(self, name: str, view: QWidget) -> None:
        self.views[name] = view
        self.tabs.addTab(view, name)

    def add_dock(self, name: str, view: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        self.views[name] = view
        dock = QDockWidget(name, self)
        dock.setObjectName(name)
        dock.setWidget(view)
        self.addDockWidget(area, dock)
        self.view_menu.addAction(dock.toggleViewAction())
        return dock

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self._action(file_menu, "Open &Script…", QKeySequence.StandardKey.Open, self.ask_open_script)
        self._action(file_menu, "Open &Folder or Log…", "Ctrl+Shift+O", self.ask_open_session)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        file_menu.addSeparator()
        self._action(file_menu, "&Compare With…", "Ctrl+D", self.ask_compare)
        self._action(file_menu, "Save Session &As… (.tcinspect)", QKeySequence.StandardKey.SaveAs, self.ask_save_bundle)
        self._action(file_menu, "Export &HTML Report…", "Ctrl+E", self.ask_export_report)
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", QKeySequence.StandardKey.Quit, self.close)
        run_menu = self.menuBar().addMenu("&Run")
        self.run_action = self._action(run_menu, "&Run", "F5", self.run_capture)
        self.cancel_action = self._action(run_menu, "&Cancel", "Shift+F5", self.capture.cancel)
        self._action(run_menu, "Compare &Modes (default, reduce-overhead, max-autotune)", "Ctrl+M", self.compare_modes)
        self.cancel_action.setEnabled(False)
        run_menu.addSeparator()
        self._action(run_menu, "&Settings…", "Ctrl+,", self.edit_settings)
        self.view_menu = self.menuBar().addMenu("&View")

    def _action(self, menu, text: str, shortcut, slot) -> QAction:
        action = QAction(text, self)
        action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        for path in self.settings.recent or []:
            self.recent_menu.addAction(path, lambda p=path: self.open_path(Path(p)))
        if not self.settings.recent:
            self.recent_menu.addAction("(none yet)").setEnabled(False)

    # --- opening -------------------------------------------------------------------------------
    def ask_open_script(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open model script", "", "Python scripts (*.py)")
        if path:
            self.open_path(Path(path))

    def ask_open_session(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open session, TORCH_TRACE or TORCH_COMPILE_DEBUG folder")
        if path:
            self.open_path(Path(path))

    def open_path(self, path: Path) -> None:
        """A .py script is set up for a run; anything else is opened as saved compile output."""
        self.settings.add_recent(str(path))
        if path.suffix == ".py" and path.is_file():
            self.script = path
            self.setWindowTitle(f"{path.name} — torch.compile Inspector")
            self.status.setText(f"{path.name}: press F5 (Run ▸ Run) to compile it in the background")
            self.model.show_location(str(path), 0)
            return
        self.status.setText(f"Opening {path}…")
        self.progress_bar.setRange(0, 0)
        self.progress_bar.show()
        started = time.perf_counter()
        run_in_background(lambda: load_session(path),
                          lambda loaded: self._on_session_ready(loaded, started),
                          lambda message, _tb: self._on_load_failed(path, message), self)

    def ask_compare(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Compare with which run (session, TORCH_TRACE or debug folder)?")
        if path:
            self.compare_with(Path(path))

    def compare_with(self, path: Path) -> None:
        """Diff the open session (A) against the one at `path` (B) in the Diff tab."""
        if self.model.loaded is None:
            self.show_message("Nothing to compare", "Open a session first; then compare it with another.")
            return
        a = self.model.loaded.session
        self.status.setText(f"Opening {path} to compare…")
        run_in_background(lambda: load_session(path), lambda b: self._show_diff(a, b.session),
                          lambda message, _tb: self.show_message("Cannot compare", message), self)

    def _show_diff(self, a, b) -> None:
        self.views["Diff"].set_sessions(a, b)
        self.tabs.setCurrentWidget(self.views["Diff"])
        self.status.setText(f"Comparing {a.source} (A) with {b.source} (B)")

    def ask_save_bundle(self) -> None:
        loaded = self.model.loaded
        folder = loaded.session.source if loaded else None
        if folder is None or not Path(folder).is_dir():
            self.show_message("Nothing to save", "Open a session folder first (a bundle is saved already).")
            return
        target, _ = QFileDialog.getSaveFileName(self, "Save session", f"{Path(folder).name}.tcinspect",
                                                "Session bundles (*.tcinspect)")
        if target:
            run_in_background(lambda: save_bundle(folder, target),
                              lambda result: self.status.setText(f"Saved {result[0]}"),
                              lambda message, _tb: self.show_message("Could not save", message), self)

    def ask_export_report(self) -> None:
        loaded = self.model.loaded
        if loaded is None:
            self.show_message("Nothing to export", "Open a session first.")
            return
        target, _ = QFileDialog.getSaveFileName(self, "Export HTML report", "compile-report.html", "HTML (*.html)")
        if target:
            run_in_background(lambda: Path(target).write_text(render_report(loaded.analysis), encoding="utf-8"),
                              lambda _: self.status.setText(f"Report written to {target}"),
                              lambda message, _tb: self.show_message("Could not export", message), self)

    def _on_session_ready(self, loaded: LoadedSession, started: float) -> None:
        self.progress_bar.hide()
        self.model.set_loaded(loaded)
        self.status.setText(f"Opened {loaded.session.source} in {time.perf_counter() - started:.2f} s")

    def _on_load_failed(self, path: Path, message: str) -> None:
        self.progress_bar.hide()
        self.status.setText(f"Could not open {path}")
        self.show_message("Cannot open", message)

    def show_message(self, title: str, text: str) -> None:
        """A non-modal message, so nothing waits on the user to click."""
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, self)
        box.setModal(False)
        box.show()
        self.last_message = text

    def _on_loaded(self, loaded: LoadedSession) -> None:
        self.setWindowTitle(f"{Path(str(loaded.session.source)).name} — torch.compile Inspector")
        self.tabs.setCurrentWidget(self.views["Summary"])

    # --- running -------------------------------------------------------------------------------
    def _ready_to_run(self) -> bool:
        """No capture running and a script chosen (asking for one if none is)."""
        if self.capture.running:
            return False
        if self.script is None:
            self.ask_open_script()
        return self.script is not None

    def run_capture(self) -> None:
        if self._ready_to_run():
            session = SESSIONS_DIR / f"{self.script.stem}-{time.strftime('%Y%m%d-%H%M%S')}"
            self.capture.start(self.script, session, self.settings.capture_settings(), self.settings.python)

    def compare_modes(self) -> None:
        if self._ready_to_run():
            folder = SESSIONS_DIR / f"{self.script.stem}-modes-{time.strftime('%Y%m%d-%H%M%S')}"
            self.modes.start(self.script, folder, self.settings.capture_settings(), self.settings.python)

    def _on_capture_started(self, session: str) -> None:
        self.run_action.setEnabled(False)
        self.cancel_action.setEnabled(True)
        self.progress_bar.setRange(0, 0)
        self.progress_bar.show()
        self.status.setText(f"Compiling {self.script.name} in the background…")
        self.findChild(QDockWidget, "Log").raise_()

    def _on_capture_progress(self, progress) -> None:
        units = len(progress.units)
        phase = progress.phase or ("compiling" if units else "starting")
        self.status.setText(f"{self.script.name}: {phase}; {units} compile unit(s) so far")

    def _on_capture_finished(self, session: str, code: int, error) -> None:
        self.run_action.setEnabled(True)
        self.cancel_action.setEnabled(False)
        self.progress_bar.hide()
        if error:
            self.show_message("Capture did not finish", f"{error.get('message')}\n\nWhat was captured is kept: {session}")
        if not self.modes.running:
            self.open_path(Path(session))

    def edit_settings(self) -> None:
        QtSettingsDialog(self.settings, self).open()

    def closeEvent(self, event) -> None:
        self.capture.shutdown()
        super().closeEvent(event)

    # --- drag and drop --------------------------------------------------------------------------
    def dragEnterEvent(self, event) -> None:
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        urls = event.mimeData().urls()
        if urls:
            self.open_path(Path(urls[0].toLocalFile()))
