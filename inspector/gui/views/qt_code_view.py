"""Code pane: the output code of the selected compile unit (wrapper plus Triton or C++ kernels),
highlighted, with line numbers, find, and a kernel outline with each kernel's time and share; picking
a kernel shows its code and the FX nodes it came from with their source lines. The same pane shows
the unit's other texts: graphs at every stage, guards, IR before and after fusion, break and
recompile reasons. A pane with nothing in it says why and what to do."""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView, QComboBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QPushButton, QSizePolicy, QSplitter,
    QTableWidget, QTableWidgetItem, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget,
)

from inspector.gui.code_highlight import LazyHighlighter
from inspector.core.analysis.kernel_index import KernelCompile, code_compiles, kernel_nodes
from inspector.core.analysis.source_time import KernelTime, SourceTime, described
from inspector.core.model.output_code import Kernel
from inspector.core.model.session import CodeArtifact, CompileUnit, UnitStatus
from inspector.core.numbers import number, seconds
from inspector.core.outputs.compile_page import PAGE_LABEL, compile_page
from inspector.gui.qt_background import LatestRequest
from inspector.gui.qt_session_model import QtSessionModel
from inspector.gui.views.qt_code_editor import QtCodeEditor
from inspector.gui.qt_plain_text import plain_tip

ORIGIN_WORDS = {"provenance": "exact (provenance)", "comment": "from comments (over-includes)", None: "unknown"}
# the outline's Nodes column in a word, so the kernel names keep the width (the cell's tooltip has ORIGIN_WORDS)
ORIGIN_CELLS = {"provenance": "exact", "comment": "comments", None: "—"}
KERNEL_ROLE = Qt.ItemDataRole.UserRole
COMPILE_COLUMN = 5  # the outline's, shown where the unit's kernel compiles were recorded
NOT_RUN = "not run"  # the time cell of a kernel whose unit ran in no profiled call: not profiled

# Why a pane of the Code tab is empty, and what to do: a blank white pane reads as broken or still loading.
NO_UNIT = "No compile unit selected: choose one in the Session tree to see its generated code and kernels."
NO_CODE = {
    UnitStatus.FAILED: "No kernels: this unit's compile failed, so the frame runs eagerly (the failure is listed "
                       "under Problems).",
    UnitStatus.EMPTY_GRAPH: "No kernels: Dynamo captured no operations in this unit, so there was nothing to compile.",
    UnitStatus.CUT: "No kernels: the run ended inside this unit's compile, before Inductor wrote its code.",
}
NOT_LOGGED = ("No kernels: the log holds no Inductor output code for this unit (it was compiled by another backend, "
              "or its output code was not logged).")
NOT_CODE = "Kernels are listed for output code: choose an “output code” entry above to see them."
READING = "Reading the output code…"
NO_CALLS = ("No kernel call found in this output code: the graph computes nothing itself (views or inputs returned "
            "as they are), or calls kernels in a form this outline does not read.")
PICK_KERNEL = "Select a kernel above to see the FX nodes it was made from, with their source lines."
NO_TEXTS = "Nothing was recorded for this unit: the log holds no graph, code, guards or reasons for it."
EMPTY_TEXT = "This text is empty."
NOT_COMPILED = ("the log says nothing of compiling this kernel (torch records it for Triton kernels, on a GPU: "
                "triton_kernel_info and the benchmarking of their configs)")


def kernel_cells(kernel: Kernel, time: KernelTime | None, compiled: KernelCompile | None = None,
                 table: SourceTime | None = None) -> list[tuple[str, str]]:
    """(text, tooltip) of each outline cell of `kernel`, `time` being its profiled time in its own
    unit (None: the unit was not profiled, or there is no profile: `table` is None) and `compiled`
    what compiling it cost where torch recorded it: the name's tooltip is the whole name (the column
    elides it where the pane is narrow), the time cells' say per launch × launches = total, each call
    site apart, and how far to trust the time, the compile cell's what compiling and autotuning it took."""
    time_tip = plain_tip(described(time, table) + (f"\n{time.suspect}" if time and time.suspect else ""))
    flag = " ⚠" if time and time.suspect else ""
    if time is not None and time.launches:
        times = [number(time.per_launch_us) + flag,
                 (f"{time.share:.1%}" if time.share is not None else "—") + flag]
    elif table is not None:
        times = [NOT_RUN, "—"]  # short: the names need the width (the tooltip says "not profiled" and why)
    else:
        times = ["—", "—"]
    if compiled is not None and compiled.compile_s is not None:
        compile_text = seconds(compiled.compile_s)
    elif compiled is not None and compiled.autotune_s is not None:
        compile_text = f"tuned {seconds(compiled.autotune_s)}"  # its configs benchmarked; no compile time logged
    else:
        compile_text = "—"
    compile_tip = (compiled.described() if compiled else "") or NOT_COMPILED
    return [(kernel.name, plain_tip(kernel.name)), (kernel.kind, time_tip or kernel.kind),
            *((text, time_tip or text) for text in times),
            (ORIGIN_CELLS[kernel.source_origin], f"FX nodes: {ORIGIN_WORDS[kernel.source_origin]}"),
            (compile_text, plain_tip(compile_tip))]


def kernels_hint(unit: CompileUnit | None, source, code) -> str:
    """Why the kernel outline is empty for `unit` with `source` (an entry of `unit_texts`) on show,
    `code` being its parsed output code once read."""
    if unit is None:
        return NO_UNIT
    if not unit.output_code:
        return NO_CODE.get(unit.status, NOT_LOGGED)
    if not isinstance(source, CodeArtifact):
        return NOT_CODE
    return READING if code is None else NO_CALLS


def nodes_hint(unit: CompileUnit | None, kernel: Kernel | None) -> str:
    """Why the FX node list is empty: no kernel picked (where there is none to pick, the outline says
    why), or nothing in the log links the kernel to nodes (exact links need provenance tracking,
    which INDUCTOR_PROVENANCE=1 turns on)."""
    if kernel is None or unit is None:
        return PICK_KERNEL
    why = (" and the log has no provenance tracking (capture with INDUCTOR_PROVENANCE=1 to record it)"
           if unit.provenance is None else " and the provenance record does not name it")
    return f"Nothing in the log links {kernel.name} to FX nodes: Inductor's code names none for it{why}."


def editor_hint(unit: CompileUnit | None, has_texts: bool) -> str:
    """What the empty code editor says: nothing selected, nothing recorded, or a text that is empty."""
    if unit is None:
        return NO_UNIT
    return EMPTY_TEXT if has_texts else NO_TEXTS


class QtEmptyHint(QLabel):
    """Grey text over an empty table or tree saying why it is empty and what to do; it is hidden while
    the view has rows, so a view's owner can say the reason as soon as it knows it.

    It covers the viewport through a layout set on the viewport, so Qt keeps it the viewport's size in
    C++: a Python event filter on the viewport would run while Qt deletes the view's children, where
    Python may run deletions PySide queued from another thread's garbage collection and Qt deadlocks
    on its own lock. The layout holds only the hint: the view places its rows, editors and index
    widgets itself, and a hidden hint takes no room."""

    def __init__(self, view: QAbstractItemView):
        super().__init__(view.viewport())
        self.view = view
        self.setTextFormat(Qt.TextFormat.PlainText)  # kernel names from the log, never markup
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setMargin(12)
        self.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        cover = QVBoxLayout(view.viewport())
        cover.setContentsMargins(0, 0, 0, 0)
        cover.addWidget(self)
        model = view.model()
        for signal in (model.rowsInserted, model.rowsRemoved, model.modelReset):
            signal.connect(self._refresh)  # a slot of this label: no call once it is gone (the model outlives it)
        self.hide()

    def say(self, text: str) -> None:
        self.setText(text)
        self._refresh()

    def _refresh(self, *_rows) -> None:
        self.setVisible(bool(self.text()) and self.view.model().rowCount() == 0)


def unit_texts(unit: CompileUnit, units: list[CompileUnit] | None = None) -> list[tuple[str, object]]:
    """(label, source) of every text the pane can show for `unit`; source is a CodeArtifact or a loader."""
    entries: list[tuple[str, object]] = []
    for index, artifact in enumerate(unit.output_code):
        role = artifact.code.role
        entries.append((f"output code #{index + 1}" + (f" ({role})" if role else ""), artifact))
    entries += [(f"graph: {stage}", artifact.load_text) for stage, artifact in unit.graphs.items()]
    times: Counter[str] = Counter()
    for artifact in unit.artifacts:
        if artifact.name not in ("structured_graph",) and not artifact.name.startswith(("unknown:", "link:")):
            times[artifact.name] += 1  # a record logged again is told apart: create_symbol, create_symbol #2
            entries.append((artifact.name + (f" #{times[artifact.name]}" if times[artifact.name] > 1 else ""),
                            artifact.load_text))
    for ordinal, brk in enumerate(unit.breaks, 1):
        entries.append((f"graph break #{ordinal}", lambda text=brk.text: text))
    if unit.recompile:
        entries.append(("recompile reasons", lambda text=unit.recompile.raw: text))
    entries.append((PAGE_LABEL, lambda: compile_page(unit, units or ())))
    return entries


class QtCodeView(QWidget):
    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.unit: CompileUnit | None = None
        self.code = None  # the OutputCode on show, if the text is output code
        self.entries: list[tuple[str, object]] = []
        self._texts = LatestRequest(self)  # the latest text asked for: a slower earlier answer must not replace it
        self.texts = QComboBox()
        # as wide as a usual entry, not the longest one (an artifact name of 60 characters would squeeze
        # the find box and the nodes' origin out of the bar); the list itself opens as wide as it needs
        self.texts.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.texts.setMinimumContentsLength(28)
        self.texts.currentIndexChanged.connect(self._on_text_chosen)
        self.find = QLineEdit()
        self.find.setPlaceholderText("Find (Ctrl+F, Enter for next)")  # Ctrl+F: the window's Find in View
        self.find.returnPressed.connect(lambda: self.find_next(backward=False))
        previous, following = QPushButton("◀"), QPushButton("▶")
        previous.clicked.connect(lambda: self.find_next(backward=True))
        following.clicked.connect(lambda: self.find_next(backward=False))
        self.origin = QLabel("")
        # never narrower than its text
        self.origin.setSizePolicy(QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Preferred)
        bar = QHBoxLayout()
        for widget in (self.texts, self.find, previous, following, self.origin):
            bar.addWidget(widget)
        bar.setStretch(1, 1)
        self.outline = self._make_outline()
        self.outline_hint = QtEmptyHint(self.outline)
        self.editor = QtCodeEditor()
        self.nodes = self._make_nodes()
        self.nodes_hint = QtEmptyHint(self.nodes)
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.outline)
        left.addWidget(self.nodes)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(self.editor)
        split.setSizes([520, 800])
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(split, 1)  # the bar keeps its height; the code takes the rest
        model.sigUnitSelected.connect(self._on_unit_selected)
        model.sigKernelSelected.connect(self._on_kernel_selected)
        self._say_why_empty()

    def find_box(self) -> QLineEdit:
        return self.find

    def _make_outline(self) -> QTableWidget:
        """The kernel table: the name takes the width the other columns, sized to their content, leave
        (elided at its start, which every kernel of a kind shares — `triton_poi_fused_` — so the ops and the
        number that tell kernels apart stay on show: `…addmm_relu_sigmoid_0`; whole in its tooltip)."""
        outline = QTableWidget(0, 6)
        outline.setHorizontalHeaderLabels(["Kernel", "Kind", "µs/launch", "Share", "Nodes", "Compile"])
        outline.setColumnHidden(COMPILE_COLUMN, True)
        for column, tip in ((2, "Time per launch in the profile of this run, this unit's launches of this kernel only "
                                "(its tooltip: launches, total, each call site apart). — without a profile; "
                                "'not profiled' where the profile holds no call of this unit's code"),
                            (3, "Share of this unit's profiled time (its compiled graph calls in the profile): "
                                "the rows of one unit add up to at most 100%, the rest is time between kernels"),
                            (4, "How the kernel's FX nodes are known: exact (provenance tracking) or from "
                                "Inductor's comments (over-includes)"),
                            (COMPILE_COLUMN,
                             "Compiling the kernel, every config of it, as torch recorded it for Triton kernels "
                                "(its tooltip: the autotune cache, the configs benchmarked, the one it runs with)")):
            outline.horizontalHeaderItem(column).setToolTip(tip)
        outline.verticalHeader().setVisible(False)
        outline.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)  # a line a kernel
        outline.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        outline.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        outline.setWordWrap(False)
        outline.setTextElideMode(Qt.TextElideMode.ElideLeft)
        header = outline.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        outline.itemSelectionChanged.connect(self._on_outline_selection)
        return outline

    def _make_nodes(self) -> QTreeWidget:
        """The FX nodes of the picked kernel: name, target and file:line sized to their content, the
        line's code in the rest."""
        nodes = QTreeWidget()
        nodes.setHeaderLabels(["FX node", "Target", "Source", "Code"])
        nodes.setRootIsDecorated(False)
        nodes.setUniformRowHeights(True)
        header = nodes.header()
        for column in range(3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        nodes.itemActivated.connect(self._on_node_activated)
        return nodes

    def _say_why_empty(self, kernel: Kernel | None = None) -> None:
        """Tell each pane why it would be empty now (each shows it only while it has no rows)."""
        index = self.texts.currentIndex()
        source = self.entries[index][1] if 0 <= index < len(self.entries) else None
        self.outline_hint.say(kernels_hint(self.unit, source, self.code))
        self.nodes_hint.say(nodes_hint(self.unit, kernel))
        self.editor.setPlaceholderText(editor_hint(self.unit, bool(self.entries)))

    # --- what to show ---------------------------------------------------------------------------
    def _on_unit_selected(self, unit) -> None:
        if unit is self.unit:
            return
        self.unit = unit
        units = self.model.loaded.session.units if self.model.loaded is not None else None
        self.entries = unit_texts(unit, units) if unit is not None else []
        self.texts.blockSignals(True)
        self.texts.clear()
        self.texts.addItems([label for label, _ in self.entries]
                            or ["(no compile unit selected)" if unit is None else "(nothing recorded for this unit)"])
        self.texts.blockSignals(False)
        self._on_text_chosen(0)

    def _on_text_chosen(self, index: int) -> None:
        self.code = None
        self.outline.setRowCount(0)
        self.nodes.clear()
        self._say_why_empty()
        if not 0 <= index < len(self.entries):
            self.editor.show_text("", None)
            return
        label, source = self.entries[index]
        # reading the text (and splitting output code into kernels) happens off the UI thread
        unit = self.unit
        self._texts.run(lambda: self._prepare(label, source, unit), self._show_code, self._show_failure)

    def _show_failure(self, message: str, _traceback: str) -> None:
        self.editor.show_text(message, None)
        self.outline_hint.say(f"Could not read this text: {message}")

    @staticmethod
    def _prepare(label: str, source, unit: CompileUnit | None):
        """(OutputCode or None, text, highlighter, what compiling its kernels cost) for one entry of
        `unit_texts`."""
        if isinstance(source, CodeArtifact):
            code, text = source.code, source.text
            compiles = code_compiles(unit, source) if unit is not None else {}
            return code, text, LazyHighlighter.for_text(text, "python", code).lexed_ahead(), compiles
        text = source()
        language = "text" if label.startswith(("ir_", "graph break", "recompile", "compile:")) else "python"
        return None, text, LazyHighlighter.for_text(text, language).lexed_ahead(), {}

    def _show_code(self, prepared) -> None:
        self.code, text, highlighter, compiles = prepared
        self.editor.show_text(text, highlighter)
        if self.code is None:
            self.origin.setText("")
            self._say_why_empty()
            return
        table = self.model.loaded.kernel_time if self.model.loaded else None
        kernels = self.code.kernels
        origins = {kernel.source_origin for kernel in kernels}
        self.origin.setText("nodes: " + ", ".join(sorted(ORIGIN_WORDS[o] for o in origins)) if kernels
                            else "no kernels")
        self.outline.setRowCount(len(kernels))
        for row, kernel in enumerate(kernels):
            time = table.kernel_time(self.unit, kernel) if table is not None and self.unit is not None else None
            for column, (text, tip) in enumerate(kernel_cells(kernel, time, compiles.get(kernel.name), table)):
                item = QTableWidgetItem(text)
                item.setData(KERNEL_ROLE, kernel)
                item.setToolTip(tip)
                self.outline.setItem(row, column, item)
        # a column of dashes on every CPU log (torch records kernel compiles on a GPU) would take the names' room
        self.outline.setColumnHidden(COMPILE_COLUMN, not compiles)
        self._say_why_empty()

    # --- kernels and nodes ----------------------------------------------------------------------
    def _on_outline_selection(self) -> None:
        items = self.outline.selectedItems()
        if items and self.unit is not None:
            kernel = items[0].data(KERNEL_ROLE)
            if kernel is not self.model.kernel:
                self.model.select_kernel(self.unit, kernel)

    def _on_kernel_selected(self, unit, kernel) -> None:
        if unit is not self.unit:
            self._on_unit_selected(unit)
        if self.code is None or kernel not in self.code.kernels:
            # the outline fills when the code is ready; select then
            artifact = next((a for a in unit.output_code if kernel in a.code.kernels), None)
            if artifact is None:
                return
            index = next(i for i, (_label, source) in enumerate(self.entries) if source is artifact)
            self.texts.blockSignals(True)
            self.texts.setCurrentIndex(index)
            self.texts.blockSignals(False)
            self._texts.supersede()
            self._show_code(self._prepare(self.texts.itemText(index), artifact, unit))
        self.editor.go_to_line(kernel.start_line)
        row = self.code.kernels.index(kernel)
        if self.outline.currentRow() != row:
            self.outline.selectRow(row)
        self.nodes.clear()
        for origin in kernel_nodes(unit, kernel):
            where = f"{origin.file.rsplit('/', 1)[-1]}:{origin.line}" if origin.file else "—"
            item = QTreeWidgetItem(self.nodes, [origin.name, origin.target, where, origin.code or ""])
            item.setData(0, KERNEL_ROLE, origin)
            for column in (0, 1, 3):
                item.setToolTip(column, plain_tip(item.text(column)))
            item.setToolTip(2, plain_tip(f"{origin.file}:{origin.line}" if origin.file else "no source recorded"))
        self._say_why_empty(kernel)

    def _on_node_activated(self, item: QTreeWidgetItem, _column: int) -> None:
        origin = item.data(0, KERNEL_ROLE)
        if origin is not None and origin.file:
            self.model.show_location(origin.file, origin.line)

    def find_next(self, backward: bool) -> bool:
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        found = self.editor.find(self.find.text(), flags)
        if not found:  # wrap around
            cursor = self.editor.textCursor()
            cursor.movePosition(cursor.MoveOperation.End if backward else cursor.MoveOperation.Start)
            self.editor.setTextCursor(cursor)
            found = self.editor.find(self.find.text(), flags)
        return found
