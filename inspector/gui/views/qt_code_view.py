"""Code pane: the output code of the selected compile unit (wrapper plus Triton or C++ kernels),
highlighted, with line numbers, find, and a kernel outline with each kernel's time and share; picking
a kernel shows its code and the FX nodes it came from with their source lines. The same pane shows
the unit's other texts: graphs at every stage, guards, IR before and after fusion, break and
recompile reasons."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import (
    QComboBox, QHBoxLayout, QLabel, QLineEdit, QPushButton, QSizePolicy, QSplitter, QTableWidget, QTableWidgetItem, QTreeWidget,
    QTreeWidgetItem, QVBoxLayout, QWidget,
)

from inspector.gui.code_highlight import LazyHighlighter
from inspector.core.analysis.kernel_index import kernel_nodes
from inspector.core.model.session import CompileUnit
from inspector.core.numbers import number
from inspector.gui.qt_background import LatestRequest
from inspector.gui.qt_session_model import QtSessionModel
from inspector.gui.views.qt_code_editor import QtCodeEditor
from inspector.gui.qt_plain_text import plain_tip

ORIGIN_WORDS = {"provenance": "exact (provenance)", "comment": "from comments (over-includes)", None: "unknown"}
KERNEL_ROLE = Qt.ItemDataRole.UserRole


def unit_texts(unit: CompileUnit) -> list[tuple[str, object]]:
    """(label, source) of every text the pane can show for `unit`; source is a CodeArtifact or a loader."""
    entries: list[tuple[str, object]] = []
    for index, artifact in enumerate(unit.output_code):
        role = artifact.code.role
        entries.append((f"output code #{index + 1}" + (f" ({role})" if role else ""), artifact))
    entries += [(f"graph: {stage}", artifact.load_text) for stage, artifact in unit.graphs.items()]
    for artifact in unit.artifacts:
        if artifact.name not in ("structured_graph",) and not artifact.name.startswith(("unknown:", "link:")):
            entries.append((artifact.name, artifact.load_text))
    for number, brk in enumerate(unit.breaks, 1):
        entries.append((f"graph break #{number}", lambda text=brk.text: text))
    if unit.recompile:
        entries.append(("recompile reasons", lambda text=unit.recompile.raw: text))
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
        self.origin.setSizePolicy(QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Preferred)  # never narrower than its text
        bar = QHBoxLayout()
        for widget in (self.texts, self.find, previous, following, self.origin):
            bar.addWidget(widget)
        bar.setStretch(1, 1)
        self.outline = QTableWidget(0, 5)
        self.outline.setHorizontalHeaderLabels(["Kernel", "Kind", "µs/call", "Share", "Nodes"])
        self.outline.verticalHeader().setVisible(False)
        self.outline.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.outline.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        for column, width in enumerate((200, 50, 60, 55, 130)):
            self.outline.setColumnWidth(column, width)
        self.outline.itemSelectionChanged.connect(self._on_outline_selection)
        self.editor = QtCodeEditor()
        self.nodes = QTreeWidget()
        self.nodes.setHeaderLabels(["FX node", "Target", "Source", "Code"])
        self.nodes.setColumnWidth(0, 140)
        self.nodes.setColumnWidth(1, 200)
        self.nodes.setColumnWidth(2, 200)
        self.nodes.itemActivated.connect(self._on_node_activated)
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

    # --- what to show ---------------------------------------------------------------------------
    def _on_unit_selected(self, unit) -> None:
        if unit is self.unit:
            return
        self.unit = unit
        self.entries = unit_texts(unit) if unit is not None else []
        self.texts.blockSignals(True)
        self.texts.clear()
        self.texts.addItems([label for label, _ in self.entries] or ["(nothing recorded for this unit)"])
        self.texts.blockSignals(False)
        self._on_text_chosen(0)

    def _on_text_chosen(self, index: int) -> None:
        self.code = None
        self.outline.setRowCount(0)
        self.nodes.clear()
        if not 0 <= index < len(self.entries):
            self.editor.show_text("", None)
            return
        label, source = self.entries[index]
        # reading the text (and splitting output code into kernels) happens off the UI thread
        self._texts.run(lambda: self._prepare(label, source), self._show_code,
                        lambda message, _tb: self.editor.show_text(message, None))

    @staticmethod
    def _prepare(label: str, source):
        """(OutputCode or None, text, highlighter) for one entry of `unit_texts`."""
        if hasattr(source, "code"):
            code = source.code
            return code, code.text, LazyHighlighter.for_text(code.text, "python", code)
        text = source()
        language = "text" if label.startswith(("ir_", "graph break", "recompile")) else "python"
        return None, text, LazyHighlighter.for_text(text, language)

    def _show_code(self, prepared) -> None:
        self.code, text, highlighter = prepared
        self.editor.show_text(text, highlighter)
        if self.code is None:
            self.origin.setText("")
            return
        times = self.model.loaded.kernel_times if self.model.loaded else {}
        kernels = self.code.kernels
        origins = {kernel.source_origin for kernel in kernels}
        self.origin.setText("nodes: " + ", ".join(sorted(ORIGIN_WORDS[o] for o in origins)) if kernels else "no kernels")
        self.outline.setRowCount(len(kernels))
        for row, kernel in enumerate(kernels):
            time = times.get(kernel.name)
            flag = " ⚠" if time and time.suspect else ""
            cells = [kernel.name, kernel.kind, number(time.us_per_call) + flag if time else "—",
                     f"{time.share:.1%}" if time else "—", ORIGIN_WORDS[kernel.source_origin]]
            for column, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(KERNEL_ROLE, kernel)
                if time and time.suspect:
                    item.setToolTip(plain_tip(time.suspect))
                elif time and time.shared_by_units:
                    item.setToolTip(plain_tip(f"profiled as {time.matched_by}; the same name runs in several "
                                              "compile units (times added)"))
                elif not time:
                    item.setToolTip("no profiler event with this kernel's name (not measured, or CPU kernel "
                                    "profiling off)")
                else:
                    item.setToolTip(text)
                self.outline.setItem(row, column, item)

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
            self._show_code(self._prepare(self.texts.itemText(index), artifact))
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
