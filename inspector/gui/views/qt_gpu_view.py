"""GPU view: the GPU files of a run, read without a GPU.

- A tritonparse trace: its kernel compilations (the torch.compile unit each came from, launches,
  warps, stages, shared memory); for the chosen one, its Python source beside one IR stage (TTIR,
  TTGIR, LLIR, PTX, …). A click on a source line tints the IR lines it became; a click on an IR line
  tints the source line it came from (the trace's source mappings). With a run open, each compilation
  is joined to the run's kernel it is (`core/analysis/triton_join.py`): "Show in Code" selects that
  kernel in every view, and a kernel selected anywhere brings its compilation up here.
- A torch.profiler trace: GPU time per compiled region (calls, CPU, GPU, GPU per call) and per kernel,
  device idle time; joined to the open run when it is that run's profile (opened beside it, or found
  beside its log when the run opens): kernel time per source line and module of the user's model,
  each figure measured or apportioned (`core/analysis/source_time.py`). A profile found with one run
  leaves when another run without one opens; one the user opened stays, joined to each run opened
  after it, and says so when it is not that run's. A CPU run's profile shows no GPU columns.
- A folder of a distributed run's profiler traces, one per rank: per rank, the time profiled, in
  collectives and outside them, and the compiled regions it ran; then what differs between the
  ranks — the slow rank the others waited for, regions only some ranks ran (`profile_ranks.py`)."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QCoreApplication, Qt, Signal
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QLabel, QPushButton, QSplitter, QStackedWidget, QVBoxLayout,
                               QWidget)

from inspector.core.numbers import number
from inspector.core.analysis.gpu_profile import microseconds, region_label
from inspector.core.analysis.triton_join import NOT_IN_RUN, TritonJoin, join_triton
from inspector.core.outputs.gpu_summary import (RANK_COLUMNS, REGION_EVENTS, profile_rank_rows, profile_ranks_verdict,
                                                profile_totals_text, summarize_profile, summarize_source_time,
                                                trace_damage_text, unlinked_text)
from inspector.core.outputs.kind_documents import document_of
from inspector.core.readers.inflated import ReadCancelled
from inspector.core.readers.profiler_trace import ProfilerTrace, paired_profile, read_profiler_trace
from inspector.core.readers.sources import Source
from inspector.core.readers.tritonparse_trace import TritonKernel, TritonTrace
from inspector.gui.code_highlight import LazyHighlighter
from inspector.gui.qt_background import LatestRequest, run_in_background
from inspector.gui.qt_session_model import QtSessionModel
from inspector.gui.qt_shown_later import QtShownLater
from inspector.gui.views.qt_code_editor import QtCodeEditor
from inspector.gui.views.qt_tables import fill_rows, rows_table

GPU_COLUMNS = (3, 4, 5)  # of the regions table: GPU, GPU per call, kernel launches
EMPTY = ("Open a tritonparse trace (dedicated_log_triton_trace_*.ndjson[.gz]), a torch.profiler trace "
         "(*.pt.trace.json[.gz]) or a folder of them, one per rank, with File ▸ Open Log, Bundle or Folder… "
         "(Ctrl+Shift+O).")


class QtGpuView(QWidget):
    sigShowInCode = Signal()  # a compilation's kernel was selected in the open run: show the Code tab

    def __init__(self, model: QtSessionModel | None = None):
        super().__init__()
        self.model = model
        self.trace: TritonTrace | None = None
        self.kernel: TritonKernel | None = None
        self.join: TritonJoin | None = None  # the trace joined to the open run
        self.profile: dict | None = None
        self.profile_trace: ProfilerTrace | None = None  # the profile shown
        self.profile_opened = False  # opened by the user (joined again to each run opened next), not found with a run
        self.source_time: dict | None = None  # the profile joined to the open run
        self.ranks_summary: dict | None = None  # a folder of rank traces the user opened
        self._paired = LatestRequest(self)  # the profile found beside a run being opened: only the latest shown
        self._syncing = False  # a tint set from the other pane must not tint back
        # set when the app quits: a trace still being read stops at its next chunk (else the process
        # would wait for the read, which only the reader's caps end)
        self._quitting = threading.Event()
        if QCoreApplication.instance() is not None:
            QCoreApplication.instance().aboutToQuit.connect(self._quitting.set)
        self.header = QLabel(EMPTY)
        self.header.setWordWrap(True)
        self.pages = QStackedWidget()
        self.pages.addWidget(self._triton_page())
        self.pages.addWidget(self._profile_page())
        self.pages.addWidget(self._ranks_page())
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.header)
        layout.addWidget(self.pages, 1)
        layout.addStretch(0)  # holds the header at the top while the pages are hidden
        self._when_shown = QtShownLater(self)  # a kernel selected elsewhere comes up when the tab is shown
        if model is not None:
            model.sigLoaded.connect(self._on_session_loaded)
            model.sigKernelSelected.connect(lambda unit, kernel: self._when_shown.run(
                lambda: self._on_kernel_selected(unit, kernel)))

    def showEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        self._when_shown.shown()
        super().showEvent(event)

    def _triton_page(self) -> QWidget:
        self.kernels = rows_table(("kernel", "torch.compile unit", "launches", "warps", "stages", "shared", "hash"))
        self.kernels.currentCellChanged.connect(lambda row, *_: self._on_kernel_chosen(row))
        self.kernel_info = QLabel("")
        self.kernel_info.setWordWrap(True)
        self.kernel_info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.source = QtCodeEditor()
        self.source.cursorPositionChanged.connect(self._on_source_line)
        self.stage = QComboBox()
        self.stage.currentTextChanged.connect(lambda _: self._show_ir())
        self.ir = QtCodeEditor()
        self.ir.cursorPositionChanged.connect(self._on_ir_line)
        ir_pane = QWidget()
        ir_layout = QVBoxLayout(ir_pane)
        ir_layout.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("IR stage:"))
        bar.addWidget(self.stage)
        bar.addStretch(1)
        ir_layout.addLayout(bar)
        ir_layout.addWidget(self.ir, 1)
        code = QSplitter(Qt.Orientation.Horizontal)
        code.addWidget(self.source)
        code.addWidget(ir_pane)
        page = QSplitter(Qt.Orientation.Vertical)
        top = QWidget()
        top_layout = QVBoxLayout(top)
        top_layout.setContentsMargins(0, 0, 0, 0)
        top_layout.addWidget(self.kernels, 1)
        self.show_in_code = QPushButton("Show in Code")
        self.show_in_code.setToolTip("select this kernel of the open run in every view, and show the Code tab")
        self.show_in_code.clicked.connect(self._on_show_in_code)
        info = QHBoxLayout()
        info.addWidget(self.kernel_info, 1)
        info.addWidget(self.show_in_code, 0, Qt.AlignmentFlag.AlignTop)
        top_layout.addLayout(info)
        page.addWidget(top)
        page.addWidget(code)
        page.setSizes([220, 500])
        return page

    def _profile_page(self) -> QWidget:
        self.devices = QLabel("")
        self.devices.setWordWrap(True)
        self.regions = rows_table(("compiled region", "calls", "CPU", "GPU", "GPU per call", REGION_EVENTS))
        self.regions.horizontalHeaderItem(5).setToolTip("how many kernels, copies and fills were queued while the "
                                                        "region ran (a count; their time is the GPU column)")
        self.regions_note = QLabel("")  # why the regions' GPU time falls short of the total
        self.regions_note.setWordWrap(True)
        self.profile_kernels = rows_table(("share", "GPU time", "count", "mean", "kind",
                                           "kernel (Inductor source, grid)"))
        self.profile_splitter = page = QSplitter(Qt.Orientation.Vertical)
        head = QWidget()
        head_layout = QVBoxLayout(head)
        head_layout.setContentsMargins(0, 0, 0, 0)
        head_layout.addWidget(self.devices)
        head_layout.addWidget(self.regions, 1)
        head_layout.addWidget(self.regions_note)
        page.addWidget(head)
        page.addWidget(self.profile_kernels)
        joined = QWidget()
        joined_layout = QVBoxLayout(joined)
        joined_layout.setContentsMargins(0, 0, 0, 0)
        self.joined_label = QLabel("")
        self.joined_label.setWordWrap(True)
        self.source_lines = rows_table(("share", "time", "measured / apportioned", "source line", "code", "FX nodes"))
        self.source_lines.horizontalHeaderItem(2).setToolTip(
            "measured: the time of launches wholly on this line; apportioned: shares of kernels made from nodes "
            "on several lines (a kernel made from k nodes gives each 1/k)")
        # its name first, and short headings: the pane beside the source lines is narrow at 1280 wide
        self.modules = rows_table(("module", "share", "time", "basis"))
        self.modules.horizontalHeaderItem(0).setToolTip(
            "Kernel time per module of the model: the submodule each FX node belongs to (from the parameter names "
            "Dynamo gives it); measured and apportioned as per source line")
        self.modules.horizontalHeaderItem(3).setToolTip(
            "measured or apportioned: as per source line (" + self.source_lines.horizontalHeaderItem(2).toolTip() + ")")
        tables = QSplitter(Qt.Orientation.Horizontal)
        tables.addWidget(self.source_lines)
        tables.addWidget(self.modules)
        tables.setSizes([700, 300])
        joined_layout.addWidget(self.joined_label)
        joined_layout.addWidget(tables, 1)
        page.addWidget(joined)
        page.setSizes([200, 300, 300])
        return page

    def _ranks_page(self) -> QWidget:
        self.rank_rows = rows_table(RANK_COLUMNS)
        self.rank_rows.horizontalHeaderItem(4).setToolTip(
            "busy time outside collectives: the work that makes the other ranks wait in the next collective")
        self.rank_differences = QLabel("")
        self.rank_differences.setWordWrap(True)
        self.rank_differences.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.rank_differences.setAlignment(Qt.AlignmentFlag.AlignTop)
        page = QSplitter(Qt.Orientation.Vertical)
        page.addWidget(self.rank_rows)
        page.addWidget(self.rank_differences)
        page.setSizes([300, 300])
        return page

    # --- opening --------------------------------------------------------------------------------
    def open(self, source: Source, opened=None, failed=None) -> None:
        """Read the file, and work out a profile's figures, off the UI thread (a training run's trace
        holds a hundred thousand events); then show it on the page its kind is shown as and call
        `opened`, if given (or `failed` with why it could not be read). Its figures are its kind's
        summary, the one `summary` prints."""
        self.header.setText(f"Opening {source.path}…")

        loaded = self.model.loaded if self.model is not None else None

        quitting = self._quitting

        def stop_if_quitting(_done: int, _total: int) -> None:
            if quitting.is_set():
                raise ReadCancelled(str(source.path))

        summarize, page = document_of(source.kind).summarize, source.kind.shown_as

        def read():
            """The document, its summary (its kind's, as `summary` prints it) and its join to the open run."""
            document = source.open(stop_if_quitting)
            if page == "triton":
                return document, None, join_triton(loaded.session, document) if loaded else None
            return document, summarize(document), _joined(loaded, document) if page == "profile" else None

        def show(result) -> None:
            document, summary, joined = result
            if page == "ranks":
                self.set_ranks(summary)
            elif page == "triton":
                self._show_triton(document, joined, loaded)
            else:
                self.set_profile(document, summary, joined, opened=True)
            if opened is not None:
                opened()

        def on_failed(message: str, _traceback: str) -> None:
            self.header.setText(f"Could not open {source.path}: {message}")
            if failed is not None:
                failed(message)

        run_in_background(read, show, on_failed, self)

    def _show_triton(self, trace: TritonTrace, join: TritonJoin | None, loaded) -> None:
        """A tritonparse trace the user opened, joined to the run open when it was read (and to a run
        opened meanwhile)."""
        self.set_triton(trace, join)
        if self.model is not None and self.model.loaded is not loaded:
            self._join_to(self.model.loaded)

    def _on_session_loaded(self, loaded) -> None:
        """The run's own profile (a capture's, or the one beside its log) shown joined to it, else a
        profile the user opened joined to the new run; a profile found with an earlier run leaves —
        unless the tab holds a tritonparse trace the user opened."""
        if self.trace is not None:  # the trace the user opened stays, joined to the run opened now
            self._join_to(loaded)
            return
        if self._holds_a_document:
            return
        kept = (self.profile_trace, self.profile) if self.profile_opened else (None, None)

        quitting = self._quitting

        def read():
            path, why = paired_profile(loaded.session)
            if path is not None:
                def stop_if_quitting(_done: int, _total: int) -> None:
                    if quitting.is_set():
                        raise ReadCancelled(str(path))

                # found beside the log: read only inside its folder (no link out)
                trace = read_profiler_trace(path, root=path.parent, progress=stop_if_quitting)
                return trace, summarize_profile(trace), _joined(loaded, trace), False
            if kept[0] is not None:
                return kept[0], kept[1], _joined(loaded, kept[0]), True
            return why

        def show(result) -> None:
            if self._holds_a_document:
                return
            if isinstance(result, str):
                self.clear_profile(result)
            else:
                trace, summary, joined, opened = result
                self.set_profile(trace, summary, joined, opened=opened)

        def failed(message, _tb) -> None:
            if self._holds_a_document:
                return
            if self.profile_opened:
                self.joined_label.setText(f"Profile not read: {message}")
            else:  # not the earlier run's profile in its place
                self.clear_profile(f"its profiler trace could not be read: {message}")

        self._paired.run(read, show, failed)

    @property
    def _holds_a_document(self) -> bool:
        """A tritonparse trace or a folder of rank traces the user opened: a run opened next leaves it."""
        return self.trace is not None or self.ranks_summary is not None

    def set_triton(self, trace: TritonTrace, join: TritonJoin | None = None) -> None:
        """`join`: the trace joined to the open run (None without one)."""
        self.trace, self.kernel, self.ranks_summary, self.join = trace, None, None, join
        problems = "; ".join(trace.problems.describe())
        self.header.setText(f"tritonparse trace {trace.path.name}: {len(trace.kernels)} kernel compilation(s), "
                            f"{number(trace.launches)} launch(es)"
                            + (f" — could not read: {problems}" if problems else ""))
        fill_rows(self.kernels, [(kernel.name, self._unit_cell(kernel), number(kernel.launches),
                                  str(kernel.metadata.get("num_warps", "")), str(kernel.metadata.get("num_stages", "")),
                                  str(kernel.metadata.get("shared", "")), kernel.hash[:12])
                                 for kernel in trace.kernels])
        self.pages.setCurrentIndex(0)
        self.pages.setVisible(True)
        self.kernels.setCurrentCell(-1, -1)  # row 0 current from an earlier trace would not say it changed
        self.kernels.setCurrentCell(0 if trace.kernels else -1, 0)
        self._show_kernel_info()

    def _join_to(self, loaded) -> None:
        """The trace shown, joined to the run `loaded` (off the UI thread); until then joined to none."""
        trace = self.trace
        self._set_join(None)
        if loaded is None:
            return
        self._paired.run(lambda: join_triton(loaded.session, trace),
                         lambda join: self._set_join(join) if self.trace is trace else None,
                         lambda message, _tb: self.kernel_info.setText(f"Not joined to the open run: {message}"))

    def _set_join(self, join: TritonJoin | None) -> None:
        self.join = join
        for row, kernel in enumerate(self.trace.kernels):
            self.kernels.item(row, 1).setText(self._unit_cell(kernel))
        self._show_kernel_info()

    def _unit_cell(self, kernel: TritonKernel) -> str:
        """The unit a compilation came from: the open run's when it is one of its kernels."""
        joined = self.join.of_compilation(kernel) if self.join is not None else None
        if joined is not None:
            rank = f"rank {joined.unit.rank} " if joined.unit.rank is not None else ""
            return f"{rank}{joined.unit.compile_id} in the open run"
        if self.join is None:
            return kernel.compile_id or "—"
        named = kernel.compile_id or "not from torch.compile"
        return f"{named}, {'not in' if self.join.why_not(kernel) == NOT_IN_RUN else 'ambiguous in'} the open run"

    def clear_profile(self, why: str) -> None:
        """The open run has no profile (`why`): the one found with an earlier run is no longer shown."""
        self.profile = self.profile_trace = self.source_time = None
        self.profile_opened = False
        for table in (self.regions, self.profile_kernels, self.source_lines, self.modules):
            fill_rows(table, [])
        self.devices.setText("")
        self.regions_note.setText("")
        self.joined_label.setText("")
        self.header.setText(f"The open run has no profiler trace ({why}). {EMPTY}")
        self.pages.setVisible(False)  # no empty tables of a profile not shown

    def set_profile(self, trace: ProfilerTrace, summary: dict, joined: dict | None = None, opened: bool = True) -> None:
        """`opened`: the user opened the profile (it stays for the next run); else it came with the open run."""
        self.profile, self.profile_trace, self.trace, self.profile_opened = summary, trace, None, opened
        self.ranks_summary = None
        rank = f" (rank {summary['rank']})" if summary["rank"] is not None else ""
        gpu = bool(summary["kernels"])
        origin = ("" if joined is None else " (found with the open run)" if not opened else
                  " (opened on its own; not of the open run)" if not joined["graph_calls"]
                  and joined["unmatched_graph_calls"]
                  else " (opened on its own)")
        totals = profile_totals_text(summary)
        if not gpu and joined is not None and joined["graph_calls"] and joined["device"] == "CPU":
            totals += "; kernel time per source line below is CPU time"
        damage = trace_damage_text(summary)
        self.header.setText(f"Profiler trace{rank} {trace.path.name}{origin}: {totals}"
                            + (f"\n{damage}" if damage else ""))
        self.devices.setVisible(gpu)
        self.devices.setText("   ".join(f"Device {d['device']} {d['name']}: busy {microseconds(d['busy_us'])} of "
                                        f"{microseconds(d['span_us'])}, {d['idle_share']:.0%} idle"
                                        for d in summary["devices"]))
        fill_rows(self.regions, [(region_label(row["region"]), str(row["calls"] or "—"),
                                  microseconds(row["cpu_us"]) if row["calls"] else "—", microseconds(row["gpu_us"]),
                                  microseconds(row["gpu_us_per_call"]) if row["gpu_us_per_call"] is not None else "—",
                                  number(row["kernels"])) for row in summary["regions"]])
        for column in GPU_COLUMNS:  # a CPU run's GPU figures are no figures
            self.regions.setColumnHidden(column, not gpu)
        self.regions_note.setText(unlinked_text(summary) if summary["regions"] else "")
        self.regions_note.setVisible(bool(self.regions_note.text()))
        self.profile_kernels.setVisible(gpu)
        fill_rows(self.profile_kernels, [
            (f"{row['share']:.1%}", microseconds(row["total_us"]), number(row["count"]), microseconds(row["mean_us"]),
             row["kind"],
             row["name"] + (f"  [{Path(row['kernel_file']).name}, {row['grid']}]" if row["kernel_file"] else ""))
            for row in summary["kernels"]])
        self._show_joined(joined)
        # the rows there are get the room: no empty table of lines beside a profile not joined
        self.profile_splitter.setSizes([300 if gpu else 200, 300 if gpu else 0, 300 if (joined or {}).get("lines")
                                        else 80])
        self.pages.setCurrentIndex(1)
        self.pages.setVisible(True)

    def set_ranks(self, summary: dict) -> None:
        """A distributed run's profiler traces side by side (`summarize_profile_ranks`)."""
        self.ranks_summary, self.trace, self.profile, self.profile_trace = summary, None, None, None
        unreadable = (f"; {len(summary['unreadable'])} trace(s) could not be read: "
                      + "; ".join(f"{name}: {why}"
                                  for name, why in summary["unreadable"].items())) if summary["unreadable"] else ""
        self.header.setText(f"Profiler traces of {len(summary['ranks'])} rank(s) in {Path(summary['source']).name}, "
                            f"times from {'the device' if summary['times_from'] == 'device' else 'the CPU calls'}"
                            f"{unreadable}" + (f"\n{damage}" if (damage := trace_damage_text(summary)) else ""))
        fill_rows(self.rank_rows, profile_rank_rows(summary))
        self.rank_differences.setText("\n".join([profile_ranks_verdict(summary)]
                                                + [f"• {difference['text']}" for difference in summary["differences"]]))
        self.pages.setCurrentIndex(2)
        self.pages.setVisible(True)

    def _show_joined(self, joined: dict | None) -> None:
        """Kernel time per source line and module of the open run, or why there is none."""
        self.source_time = joined
        rows = (joined or {}).get("lines", [])
        if joined is None:
            self.joined_label.setText("Open the run this profile was taken of (its TORCH_TRACE log or capture) to see "
                                      "kernel time per source line of the model.")
        elif not joined["graph_calls"]:
            calls = joined["unmatched_graph_calls"]
            self.joined_label.setText(
                (f"This profile is of another run: none of its {calls} compiled graph call(s) ran the open run's code"
                 if calls else "This profile holds no compiled graph call of the open run's code")
                + (" — it was opened on its own, and is joined to each run opened after it." if self.profile_opened
                   else "."))
        else:
            what = ("GPU time of the kernels each launch queued" if joined["device"] == "GPU"
                    else "CPU time of each launch")
            self.joined_label.setText(f"Kernel time per line of the model ({what}): {microseconds(joined['total_us'])} "
                                      f"in {joined['graph_calls']} compiled graph call(s)"
                                      + "".join(f". {note}" for note in joined["notes"]))
        total = (joined or {}).get("total_us") or 1.0
        fill_rows(self.source_lines, [
            (f"{row['us'] / total:.1%}", microseconds(row["us"]), row["basis"],
             f"{Path(row['file']).name}:{row['line']}" if row["file"] else "no source line", row["code"] or "",
             ", ".join(row["nodes"])) for row in rows])
        fill_rows(self.modules, [(row["module"], f"{row['us'] / total:.1%}", microseconds(row["us"]), row["basis"])
                                 for row in (joined or {}).get("modules", [])])

    # --- a kernel's source and IR ---------------------------------------------------------------
    def _on_kernel_chosen(self, row: int) -> None:
        if self.trace is None or not 0 <= row < len(self.trace.kernels):
            return
        self.kernel = kernel = self.trace.kernels[row]
        self._show_kernel_info()
        self._syncing = True
        self.source.show_text(kernel.python_code, LazyHighlighter.for_text(kernel.python_code, "python"))
        self._syncing = False
        self.stage.blockSignals(True)
        previous = self.stage.currentText()
        self.stage.clear()
        self.stage.addItems([stage.upper() for stage in kernel.stages])
        if previous in [stage.upper() for stage in kernel.stages]:
            self.stage.setCurrentText(previous)
        self.stage.blockSignals(False)
        self._show_ir()

    def _show_kernel_info(self) -> None:
        kernel = self.kernel
        if kernel is None:
            self.kernel_info.setText("")
            self.show_in_code.setEnabled(False)
            return
        varying = "; ".join(f"{name}: {how}" for name, how in kernel.varying.items())
        where = f"{kernel.python_file}:{kernel.python_start_line}" if kernel.python_file else "source not in the trace"
        joined = self.join.of_compilation(kernel) if self.join is not None else None
        run = ("" if self.join is None else
               f" In the open run: {joined.kernel.name} of {joined.unit.compile_id} (found by {joined.matched_by})."
               if joined is not None else f" Not joined to the open run: {self.join.why_not(kernel)}.")
        self.kernel_info.setText(
            f"{kernel.name} — {where}; {kernel.metadata.get('arch', '?')}, Triton "
            f"{kernel.metadata.get('triton_version', '?')}, "
            f"cache {'hit' if kernel.metadata.get('cache_hit') else 'miss'}"
            + (f". Varies between launches: {varying}" if varying else "")
            + ("" if kernel.mappings else ". No source mappings: run tritonparse's parser on the trace to link lines.")
            + run)
        self.show_in_code.setEnabled(joined is not None)

    def _on_show_in_code(self) -> None:
        joined = self.join.of_compilation(self.kernel) if self.join is not None and self.kernel is not None else None
        if joined is not None and self.model is not None:
            self.model.select_kernel(joined.unit, joined.kernel)
            self.sigShowInCode.emit()

    def _on_kernel_selected(self, unit, kernel) -> None:
        """A kernel selected in any view: its compilation, when the trace holds it, comes up here (unless
        the one shown already is of that kernel: an autotuned kernel compiles once per config)."""
        if self.join is None or self.trace is None:
            return
        shown = self.join.of_compilation(self.kernel) if self.kernel is not None else None
        joined = self.join.of_kernel(unit, kernel)
        if joined is not None and (shown is None or shown.unit is not unit or shown.kernel is not kernel):
            row = next(row for row, compilation in enumerate(self.trace.kernels) if compilation is joined.compilation)
            self.kernels.setCurrentCell(row, 0)

    def _show_ir(self) -> None:
        if self.kernel is None:
            return
        stage = self.stage.currentText().lower()
        self._syncing = True
        self.ir.show_text(self.kernel.ir.get(stage, ""), None)
        self._syncing = False

    def _on_source_line(self) -> None:
        """The IR lines the clicked source line became."""
        if self._syncing or self.kernel is None or self.kernel.python_start_line is None:
            return
        line = self.kernel.python_start_line + self.source.textCursor().blockNumber()
        self._tint(self.ir, self.kernel.lines_for("python", line, self.stage.currentText().lower()))

    def _on_ir_line(self) -> None:
        """The source line the clicked IR line came from."""
        if self._syncing or self.kernel is None or self.kernel.python_start_line is None:
            return
        line = self.ir.textCursor().blockNumber() + 1
        python = self.kernel.lines_for(self.stage.currentText().lower(), line, "python")
        self._tint(self.source, [value - self.kernel.python_start_line + 1 for value in python])

    def _tint(self, editor: QtCodeEditor, lines: list[int]) -> None:
        """Tint `lines` of `editor`: those it has (a trace may map a line to one past the text's end)."""
        self._syncing = True
        editor.tint_lines([line for line in lines if 1 <= line <= editor.blockCount()])
        self._syncing = False


def _joined(loaded, trace: ProfilerTrace) -> dict | None:
    """`trace` joined to the open run (None without one)."""
    return summarize_source_time(loaded.session, trace) if loaded is not None else None
