"""The main window: menus, shortcuts, recent files, drag-and-drop, status and progress. It wires
views to the model and controllers and holds no logic of its own; views plug in through
`add_tab` and `add_dock`, so adding a view touches no other view.

Layout: the tabs get the room; the Session tree on the left; Problems and Log share one tabbed,
collapsible bottom panel (Ctrl+J); the compile-stage strip shows only while a capture runs (and
after, until closed). Dock sizes and places are remembered (saveState) across starts."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import TypeVar

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QApplication, QDockWidget, QFileDialog, QFrame, QLabel, QMainWindow, QMessageBox, QProgressBar, QScrollArea,
    QTabWidget,
    QWidget,
)

from inspector.core.outputs.html_report import render_report
from inspector.core.numbers import count, megabytes, seconds
from inspector.core.readers.session_bundle import save_bundle
from inspector.core.readers.session_loader import close_session
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.loading import Loaded, LoadedSession, Overview, Preview, ReadProgress, load_session
from inspector.core.readers.sources import Source, detect
from inspector.gui.code_highlight import compile_lexers_meanwhile
from inspector.gui.qt_background import LatestRequest, answer_the_ui_first, run_in_background
from inspector.gui.qt_capture_controller import QtCaptureController
from inspector.gui.qt_open_dialog import QtOpenDialog
from inspector.gui.qt_session_model import QtSessionModel
from inspector.gui.qt_settings import AppSettings
from inspector.gui.qt_settings_dialog import QtSettingsDialog
from inspector.gui.qt_window_layout import QtWindowLayout
from inspector.gui.views.qt_code_view import QtCodeView
from inspector.gui.views.qt_dashboard import QtDashboard
from inspector.gui.views.qt_log_pane import QtLogPane
from inspector.gui.views.qt_findable import Findable
from inspector.gui.views.qt_navigator import QtNavigator
from inspector.gui.views.qt_problems import QtProblems
from inspector.gui.views.qt_ranks_view import QtRanksView
from inspector.gui.views.qt_shapes import QtShapesView
from inspector.gui.views.qt_source_view import QtSourceView
from inspector.gui.views.qt_diff_view import QtDiffView
from inspector.gui.views.graph.qt_graph_view import QtGraphView
from inspector.gui.views.qt_kernel_plots import QtKernelPlots
from inspector.gui.views.qt_modes_view import QtModeComparison, QtModesView
from inspector.gui.views.qt_timeline import QtTimeline
from inspector.gui.views.qt_stage_strip import ROW_HEIGHT, VISIBLE_ROWS, QtStageStrip
from inspector.gui.views.qt_gpu_view import QtGpuView
from inspector.gui.views.qt_history_view import QtHistoryView
from inspector.gui.views.qt_xla_view import QtXlaView

SESSIONS_DIR = Path(tempfile.gettempdir()) / "torch-compile-inspector"
MIN_PAGE_WIDTH, MIN_PAGE_HEIGHT = 560, 240
View = TypeVar("View", bound=QWidget)
TAB_TIPS = {"Summary": "The verdict: was compiling worth it, with formulas and sources",
            "Graph": "The selected unit's FX graph at any stage, folded into modules",
            "Source": "Your script with graph breaks and recompiles marked",
            "Code": "What Inductor generated for the selected unit, kernel by kernel",
            "Shapes": "Dynamic shapes of the selected unit: symbols, guards, dims specialised to a constant",
            "Timeline": "Where compile time went: stages per compile unit",
            "Kernels": "Kernel times, eager against compiled, compile time and memory",
            "Ranks": "A distributed run's ranks side by side: units, breaks, recompiles, cache and compile time, "
                     "and where they diverge",
            "Diff": "Two runs side by side (File ▸ Compare With…)",
            "XLA": "An XLA dump (XLA_FLAGS=--xla_dump_to=DIR): its modules and fusions, compared with the open run's "
                   "kernels",
            "GPU": "A profiler or tritonparse trace: GPU time per compiled region, kernel, source line and module; "
                   "a kernel's Triton IR",
            "Modes": "default, reduce-overhead and max-autotune compared (Run ▸ Compare Modes)",
            "History": "The runs of this script over time: compile time, breaks, recompiles, cache hits, speed"}


class QtMainWindow(QtWindowLayout):
    # what an open asked for is on screen: a session handed to every view, or another kind read in its tab
    sigOpened = Signal()
    sigOpenFailed = Signal(str, str)  # path, why: the session or the other kind's document could not be read

    def __init__(self, settings: AppSettings | None = None):
        super().__init__()
        answer_the_ui_first()  # workers computing in Python let go of the GIL sooner while the window paints
        compile_lexers_meanwhile()  # the first open's worker finds them made
        self.setWindowTitle("torch.compile Inspector")
        self.setAcceptDrops(True)
        # buttons as wide as their words (the style's 80 px floor would make toolbars wider than the window)
        self.setStyleSheet("QPushButton { padding: 3px 10px; }")
        self.settings = settings or AppSettings()
        self.model = QtSessionModel(self)
        self._compares = LatestRequest(self)  # a second Compare With replaces the first
        self._opening: Path | None = None  # what the latest open was asked to open
        # the latest open showed its per-rank overview or a preview (reset as each open starts)
        self.shown_first = False
        self.partial_offer: QMessageBox | None = None  # the choice a failed run leaves, while a session is on screen
        self.capture = QtCaptureController(self)
        self.script: Path | None = None
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        self.tabs.setUsesScrollButtons(True)
        self.setCentralWidget(self.tabs)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks)
        self.setTabPosition(Qt.DockWidgetArea.BottomDockWidgetArea, QTabWidget.TabPosition.North)
        # every page and dock by the name it shows (for --tab NAME, Find and the self-test); code reads the attributes
        self.views: dict[str, QWidget] = {}
        self._build_menus()
        self.summary_view = self.add_tab("Summary", QtDashboard(self.model))
        self.graph_view = self.add_tab("Graph", QtGraphView(self.model))
        self.source_view = self.add_tab("Source", QtSourceView(self.model))
        self.code_view = self.add_tab("Code", QtCodeView(self.model))
        self.shapes_view = self.add_tab("Shapes", QtShapesView(self.model))
        self.timeline_view = self.add_tab("Timeline", QtTimeline(self.model))
        self.kernels_view = self.add_tab("Kernels", QtKernelPlots(self.model))
        self.ranks_view = self.add_tab("Ranks", QtRanksView(self.model))
        self.diff_view = self.add_tab("Diff", QtDiffView(self.model))
        self.xla_view = self.add_tab("XLA", QtXlaView(self.model))
        self.gpu_view = self.add_tab("GPU", QtGpuView(self.model))
        # the strip hears a run's end before Compare Modes starts the next mode's run on it
        self.stage_strip = QtStageStrip(self.capture)
        self.stage_strip.sigFolded.connect(lambda _folded: self._fit_stage_strip())
        self.modes = QtModeComparison(self.capture, self)
        self.modes_view = self.add_tab("Modes", QtModesView(self.modes))
        self.modes.sigDone.connect(lambda _rows: self.tabs.setCurrentWidget(self.modes_view))
        self.modes.sigStep.connect(self._on_mode_step)
        self.history_view = self.add_tab("History", QtHistoryView(self.model, lambda: self.settings.history_store,
                                                                  lambda: self.settings.record_history))
        self.history_view.sigOpenRun.connect(lambda path: self.open_path(Path(path)))
        self.history_view.sigCompareRuns.connect(self.compare_runs)
        self.kernels_view.sigKernelActivated.connect(lambda _name: self.tabs.setCurrentWidget(self.code_view))
        self.gpu_view.sigShowInCode.connect(lambda: self.tabs.setCurrentWidget(self.code_view))
        self.navigator = QtNavigator(self.model, self.capture)
        self.session_dock = self.add_dock("Session", self.navigator, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.stages_dock = self.add_dock("Compile stages", self.stage_strip, Qt.DockWidgetArea.TopDockWidgetArea,
                                         self._scrolling(self.stage_strip))
        self.problems_view = QtProblems(self.model)
        self.problems_dock = self.add_dock("Problems", self.problems_view, Qt.DockWidgetArea.BottomDockWidgetArea,
                                           self.problems_view.panel)
        self.log_view = QtLogPane(self.capture)
        self.log_dock = self.add_dock("Log", self.log_view, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.problems_dock, self.log_dock)
        for dock in (self.problems_dock, self.log_dock):  # their tabs name them: no title bar above as well
            dock.setTitleBarWidget(QWidget())
        self.problems_dock.raise_()
        self._build_view_menu()
        self._fit_screen()
        self._default_sizes()
        self.stages_dock.hide()  # shown when a capture starts
        self._restore_layout()
        self.status = QLabel("Ready")
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # shows paths and messages from the input
        self.progress_bar = QProgressBar()
        self.progress_bar.setMaximumWidth(220)  # wide enough for its words ("42% of 1,056 MB" in one piece)
        self.progress_bar.setMinimumWidth(self.progress_bar.fontMetrics().horizontalAdvance("100% of 99,999 MB") + 40)
        self.progress_bar.hide()
        self.statusBar().addWidget(self.status, 1)
        self.statusBar().addPermanentWidget(self.progress_bar)
        self.model.sigOpening.connect(self._on_opening)
        self.model.sigLoadEvent.connect(self._on_load_event)
        self.model.sigLoadFailed.connect(self._on_load_failed)
        self.model.sigLoaded.connect(self._on_loaded)
        self.model.sigLoaded.connect(lambda _loaded: self.sigOpened.emit())
        self.model.sigLocationRequested.connect(lambda *_: self.tabs.setCurrentWidget(self.source_view))
        self.capture.sigStarted.connect(self._on_capture_started)
        self.capture.sigProgress.connect(self._on_capture_progress)
        self.capture.sigFinished.connect(self._on_capture_finished)

    # --- layout --------------------------------------------------------------------------------
    def add_tab(self, name: str, view: View) -> View:
        """A page's own minimum (say, a wide toolbar) must not squeeze the docks away: it is capped,
        and a toolbar wider than the page is cut at the right instead."""
        self.views[name] = view
        hint = view.minimumSizeHint()
        view.setMinimumSize(min(hint.width(), MIN_PAGE_WIDTH), min(hint.height(), MIN_PAGE_HEIGHT))
        index = self.tabs.addTab(view, name)
        self.tabs.setTabToolTip(index, f"{TAB_TIPS.get(name, name)}" + (f" (Ctrl+{index + 1})" if index < 9 else ""))
        return view

    def add_dock(self, name: str, view: QWidget, area: Qt.DockWidgetArea, holder: QWidget | None = None) -> QDockWidget:
        """Dock `view` (inside `holder`, e.g. a scroll area, when given) as `name`."""
        self.views[name] = view
        dock = QDockWidget(name, self)
        dock.setObjectName(name)
        dock.setWidget(holder or view)
        self.addDockWidget(area, dock)
        return dock

    @staticmethod
    def _scrolling(strip: QtStageStrip) -> QScrollArea:
        """The stage strip in a scroll area a few rows high that follows the newest unit."""
        area = QScrollArea()
        area.setWidget(strip)
        area.setWidgetResizable(True)
        area.setFrameShape(QFrame.Shape.NoFrame)
        area.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        area.setMaximumHeight(ROW_HEIGHT * (VISIBLE_ROWS + 1) + 12)  # _fit_stage_strip keeps it so
        bar = area.verticalScrollBar()
        bar.rangeChanged.connect(lambda _low, high: bar.setValue(high))
        bar.valueChanged.connect(lambda _value: strip.update())  # repaint the sticky header where it now is
        return area

    def _build_view_menu(self) -> None:
        for dock in (self.session_dock, self.problems_dock, self.log_dock, self.stages_dock):
            self.view_menu.addAction(dock.toggleViewAction())
        self._action(self.view_menu, "Show/Hide &Bottom Panel", "Ctrl+J", self.toggle_bottom_panel)
        self.view_menu.addSeparator()
        for index in range(self.tabs.count()):
            self._action(self.view_menu, f"&{index + 1} {self.tabs.tabText(index)}", f"Ctrl+{index + 1}" if index < 9
                         else "",
                         lambda _=False, i=index: self.tabs.setCurrentIndex(i))
        self.view_menu.addSeparator()
        self._action(self.view_menu, "&Find in View", QKeySequence.StandardKey.Find, self.find_in_view)
        self._action(self.view_menu, "&Reset Layout", "", self.reset_layout)

    def toggle_bottom_panel(self) -> None:
        """Hide Problems and Log together (the tabs take the height), or bring them back."""
        docks = [self.problems_dock, self.log_dock]
        visible = any(d.isVisible() for d in docks)
        for d in docks:
            d.setVisible(not visible)
        if not visible:
            docks[0].raise_()

    def find_in_view(self) -> None:
        """Ctrl+F: focus the find box of the pane the keyboard is in (the Log's filter), else of the
        tab on show (Graph search, Code find)."""
        focused = QApplication.focusWidget()
        panes = [view for view in self.views.values() if focused is not None and view.isAncestorOf(focused)]
        view = next((pane for pane in panes if isinstance(pane, Findable)), self.tabs.currentWidget())
        if isinstance(view, Findable):
            box = view.find_box()
            box.setFocus()
            box.selectAll()
            return
        self.status.setText(f"{self.tabs.tabText(self.tabs.currentIndex())} has no find; Graph, Code and Log do")

    def reset_layout(self) -> None:
        for dock in (self.session_dock, self.problems_dock, self.log_dock):
            dock.show()
        self.stages_dock.setVisible(self.capture.running)
        self._default_sizes()

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self._action(file_menu, "Open &Script…", QKeySequence.StandardKey.Open, self.ask_open_script)
        self._action(file_menu, "Open &Log, Bundle or Folder…", "Ctrl+Shift+O", self.ask_open_session)
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
        self._action(run_menu, "Compare Modes, Cold and &Warm (each mode twice: compile time from an empty cache "
                     "and from its own)", None, lambda: self.compare_modes(warm=True))
        self.cancel_action.setEnabled(False)
        run_menu.addSeparator()
        self._action(run_menu, "&Settings…", "Ctrl+,", self.edit_settings)
        self.view_menu = self.menuBar().addMenu("&View")

    def _action(self, menu, text: str, shortcut, slot) -> QAction:
        action = QAction(text, self)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _fill_recent(self) -> None:
        """Inputs that opened, newest first, each once; those gone from disk since are dropped."""
        self.recent_menu.clear()
        recent = self.settings.existing_recent()
        for path in recent:
            self.recent_menu.addAction(path, lambda p=path: self.open_path(Path(p)))
        if not recent:
            self.recent_menu.addAction("(none yet)").setEnabled(False)

    # --- opening -------------------------------------------------------------------------------
    def ask_open_script(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Open model script", "", "Python scripts (*.py)")
        if path:
            self.open_path(Path(path))

    def ask_open_session(self) -> None:
        path = QtOpenDialog.ask(self, "Open a TORCH_TRACE log, a .tcinspect bundle, or a session or debug folder")
        if path:
            self.open_path(path)

    def open_path(self, path: Path) -> None:
        """A .py script is set up for a run; anything else is detected once here (a few stats and globs)
        and opened: a session by the model's load worker (core/loading.py), another kind in its tab.
        Open Recent gets `path` once it has opened (not an input that failed)."""
        if path.suffix == ".py" and path.is_file():
            self._set_script(path)
        elif (source := self._detect(path)) is not None and not source.kind.opens_session:
            self._open_document(source, lambda: self.settings.add_recent(path))
        elif source is not None:
            self._opening = path
            self.model.open(source, self.settings.dask_target)

    def _set_script(self, path: Path) -> None:
        self.settings.add_recent(path)
        self.script = path
        self.setWindowTitle(f"{path.name} — torch.compile Inspector")
        self.status.setText(f"{path.name}: press F5 (Run ▸ Run) to compile it in the background")
        self.model.show_location(str(path), 0)

    def ask_compare(self) -> None:
        path = QtOpenDialog.ask(self, "Compare with which run (log, bundle, session or debug folder)?")
        if path:
            self.compare_with(path)

    def compare_with(self, path: Path) -> None:
        """Diff the open session (A) against the one at `path` (B) in the Diff tab."""
        source = self._detect(path, "Cannot compare")
        if source is None:
            return
        if not source.kind.opens_session:
            self._open_document(source)
            return
        if self.model.loaded is None:
            self.show_message("Nothing to compare", "Open a session first; then compare it with another.")
            return
        a = self.model.loaded.analysis
        self.status.setText(f"Opening {path} to compare…")
        self._compares.run(lambda: load_session(source), lambda b: self._show_diff(a, b.analysis),
                           lambda message, _tb: self.show_message("Cannot compare", message),
                           lambda b: close_session(b.session))

    def compare_runs(self, a: str, b: str) -> None:
        """Two runs (the History tab's) in the Diff tab as A and B, both read on a worker."""
        sources = [self._detect(Path(path), "Cannot compare") for path in (a, b)]
        if None in sources:
            return
        self.status.setText(f"Opening {a} and {b} to compare…")
        self._compares.run(lambda: (load_session(sources[0]), load_session(sources[1])),
                           lambda pair: self._show_diff(pair[0].analysis, pair[1].analysis),
                           lambda message, _tb: self.show_message("Cannot compare", message),
                           lambda pair: [close_session(loaded.session) for loaded in pair])

    def _detect(self, path: Path, title: str = "Cannot open") -> Source | None:
        """The kind of input at `path`, or None after saying why nothing there can be opened."""
        try:
            return detect(path)
        except (OSError, ValueError) as error:
            if title == "Cannot open":
                self.model.load_failed(path, str(error))
            else:
                self.show_message(title, str(error))
            return None

    def _open_document(self, source: Source, opened=None) -> None:
        """An input that is no torch.compile session, in its own tab: an XLA dump (compared with the
        open run, if any), a tritonparse or profiler trace (GPU), a mode comparison's folder (Modes).
        `opened` runs once it has been read."""
        view = {"xla": self.xla_view, "gpu": self.gpu_view, "modes": self.modes_view}[source.kind.shown_in]
        started = time.perf_counter()
        tab = self.tabs.tabText(self.tabs.indexOf(view))
        self.status.setText(f"Reading {source.path} in the {tab} tab…")

        def done() -> None:
            self.status.setText(f"Opened {source.path} in {seconds(time.perf_counter() - started)} (the {tab} tab)")
            if self.model.loaded is None:  # opened alone: the title names it (with a run open, it names the run)
                self.setWindowTitle(f"{Path(source.path).name} — torch.compile Inspector")
            if opened is not None:
                opened()
            self.sigOpened.emit()

        def failed(message: str) -> None:
            self.status.setText(f"Could not open {source.path} (the {tab} tab says why)")
            self.sigOpenFailed.emit(str(source.path), message)

        view.open(source, done, failed)
        self.tabs.setCurrentWidget(view)

    def _show_diff(self, a: SessionAnalysis, b: SessionAnalysis) -> None:
        self.diff_view.set_sessions(a, b)
        self.tabs.setCurrentWidget(self.diff_view)
        self.status.setText(f"Comparing {a.session.source} (A) with {b.session.source} (B)")

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

    def _on_opening(self, _path: str) -> None:
        self.status.setText(f"Opening {self._opening}…")
        self.shown_first = False
        self.progress_bar.setRange(0, 0)
        self.progress_bar.show()

    def _on_load_event(self, event) -> None:
        """What the latest open has got so far (core/loading.py's events), on the bar and the status line."""
        took = seconds(event.after_s)
        match event:
            case ReadProgress(done, total):
                self._show_progress(done, total)
            case Overview(report, where):
                self._on_overview(report, where, took)
            case Preview(loaded):
                self.status.setText(f"{self._opening}: its {loaded.preview_extent} in {took}; reading the rest…")
            case Loaded(loaded):
                self.progress_bar.hide()
                self.status.setText(f"Opened {loaded.session.source} in {took}")
                self.settings.add_recent(self._opening)

    def _show_progress(self, done: int, total: int) -> None:
        """A determinate bar with megabytes while bytes are read, an indeterminate one while what was read
        is analysed."""
        if total <= 0 or done >= total:
            self.progress_bar.setRange(0, 0)
            return
        self.progress_bar.setRange(0, 1000)
        self.progress_bar.setValue(int(1000 * done / total))
        self.progress_bar.setFormat(f"%p% of {megabytes(total)}")

    def _on_overview(self, report, where: str, took: str) -> None:
        """A big distributed job: its per-rank overview now, on the Ranks tab (the ranks read so far
        first, if reading them all takes a while); its details follow. Where it was read is said when
        the Dask setting is on (and why not on the cluster, if not)."""
        if not self.shown_first:  # else the user is already looking at (or away from) its first rows
            self.tabs.setCurrentWidget(self.ranks_view)
        self.shown_first = True
        ranks = count(len(report.figures), 'rank')
        if report.unread:
            self.status.setText(f"{self._opening}: the first {ranks} of {len(report.figures) + report.unread} "
                                f"in {took}; reading the rest…")
            return
        self.status.setText(f"{self._opening}: per-rank overview of {ranks} in {took}"
                            + (f" ({where})" if where else "") + "; reading every rank's details…")

    def _on_load_failed(self, path: str, message: str) -> None:
        self.progress_bar.hide()
        self.status.setText(f"Could not open {path}")
        self.show_message("Cannot open", message)
        self.sigOpenFailed.emit(path, message)

    def show_message(self, title: str, text: str) -> None:
        """A non-modal message, so nothing waits on the user to click."""
        box = QMessageBox(QMessageBox.Icon.Warning, title, text, QMessageBox.StandardButton.Ok, self)
        box.setModal(False)
        box.show()
        self.last_message = text

    def _on_loaded(self, loaded: LoadedSession) -> None:
        preview = " (preview)" if loaded.session.preview else ""
        self.setWindowTitle(f"{Path(str(loaded.session.source)).name}{preview} — torch.compile Inspector")
        if not self.shown_first:  # else the user is already looking at (or away from) the overview or preview
            self.tabs.setCurrentWidget(self.summary_view)
        self.shown_first = self.shown_first or bool(preview)
        if not self.restored:  # a layout the user saved keeps its sizes
            self._fit_bottom_panel(len(loaded.issues))

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
            self.stage_strip.start_series()
            self.stages_dock.setWindowTitle("Compile stages")
            self.capture.start(self.script, session, self.settings.capture_settings(), self.settings.python)

    def compare_modes(self, warm: bool = False) -> None:
        if self._ready_to_run():
            folder = SESSIONS_DIR / f"{self.script.stem}-modes-{time.strftime('%Y%m%d-%H%M%S')}"
            self.stage_strip.start_series()
            self.modes.start(self.script, folder, self.settings.capture_settings(), self.settings.python, warm)

    def _on_mode_step(self, mode: str) -> None:
        """Compare Modes moves to its next mode: the strip and its dock's title say which, and what the
        modes before it compiled."""
        strip = self.stage_strip
        strip.title = mode
        done = f" — done: {'; '.join(strip.done_runs)}" if strip.done_runs else ""
        self.stages_dock.setWindowTitle(f"Compile stages — {mode}{done}")

    def _on_capture_started(self, session: str) -> None:
        self.run_action.setEnabled(False)
        self.cancel_action.setEnabled(True)
        self.progress_bar.setRange(0, 0)
        self.progress_bar.show()
        self.status.setText(f"Compiling {self.script.name} in the background…")
        self.stages_dock.show()
        self._fit_stage_strip()
        self.log_dock.show()
        self.log_dock.raise_()

    def _fit_stage_strip(self) -> None:
        """The strip's dock as tall as its rows, up to VISIBLE_ROWS (beyond that it scrolls); one line
        while folded."""
        area = self.stages_dock.widget()
        most = ROW_HEIGHT * (VISIBLE_ROWS + 1) + 12
        height = min(self.stage_strip.rows_height(), most)
        if area.minimumHeight() != height:
            area.setMinimumHeight(height)
            area.setMaximumHeight(height if self.stage_strip.folded else most)
            self.resizeDocks([self.stages_dock], [height], Qt.Orientation.Vertical)

    def _on_capture_progress(self, progress) -> None:
        self._fit_stage_strip()
        units = len(progress.units)
        phase = progress.phase or ("compiling" if units else "starting")
        self.status.setText(f"{self.script.name}: {phase}; {count(units, 'compile unit')} so far")

    def _on_capture_finished(self, session: str, code: int, error) -> None:
        self.run_action.setEnabled(True)
        self.cancel_action.setEnabled(False)
        self.progress_bar.hide()
        self._fit_stage_strip()  # room for the strip's line saying how the run ended
        if self.modes.running:
            return
        if error and self.model.loaded is not None:
            self._offer_partial(Path(session), error)
            return
        if error:
            self.show_message("Capture did not finish",
                              f"{error.get('message')}\n\nWhat was captured is kept: {session}")
        self.open_path(Path(session))

    def _offer_partial(self, session: Path, error: dict) -> None:
        """A run that failed or was cancelled leaves the session on screen as it was: the user chooses
        whether to look at what it captured (kept on disk either way)."""
        box = QMessageBox(QMessageBox.Icon.Warning, "Capture did not finish",
                          f"{error.get('message')}\n\nWhat was captured is kept: {session}\n"
                          f"The session on screen stays until you open it.", QMessageBox.StandardButton.Close, self)
        opener = box.addButton("Open what was captured", QMessageBox.ButtonRole.AcceptRole)
        opener.clicked.connect(lambda: self.open_path(session))
        box.setModal(False)
        box.show()
        self.partial_offer, self.last_message = box, box.text()

    def edit_settings(self) -> None:
        QtSettingsDialog(self.settings, self).open()

    def closeEvent(self, event) -> None:
        self.save_layout()
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
