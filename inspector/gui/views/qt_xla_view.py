"""XLA view: an XLA dump folder's modules (ops before optimisation, kernels after, K, fusions), the
kernels of the chosen module, its HLO as a graph with every fusion a group that opens on a
double-click, and — when a torch.compile run is open too — the fusion comparison of the two."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QComboBox, QGraphicsScene, QHBoxLayout, QLabel, QSplitter,
    QVBoxLayout, QWidget,
)
from PySide6.QtCore import Qt

from inspector.core.analysis.fusion_compare import compare_fusion
from inspector.core.graphs.graph_hierarchy import build_groups
from inspector.core.graphs.graph_layout import LaidOutGraph, lay_out_view
from inspector.core.graphs.hlo_graph import hlo_graph
from inspector.core.graphs.item_ids import group_item, item_key, toggled
from inspector.core.outputs.xla_summary import format_count, format_ratio, format_share, summarize_module
from inspector.core.readers.input_kind import Source
from inspector.core.readers.xla_dump import XlaDump
from inspector.gui.qt_background import LatestRequest, run_in_background
from inspector.gui.qt_session_model import QtSessionModel
from inspector.gui.views.graph.qt_graph_layers import fill_scene
from inspector.gui.views.graph.qt_zoom_view import QtZoomView
from inspector.gui.views.qt_tables import rows_table, table_item

STAGES = ("after optimisation", "before optimisation")


class QtXlaView(QWidget):
    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.dump: XlaDump | None = None
        self.module = None
        self.comparison: dict | None = None
        self.graph = self.root = self.layer = None
        self.expanded: set[str] = set()
        self._shown: tuple | None = None  # the module and stage on show: a new one opens readable from its top
        self._focus: str | None = None  # the group opened or folded last: the next drawing centres on it
        self._layouts, self._comparisons = LatestRequest(self), LatestRequest(self)  # only the latest are shown
        self.header = QLabel("Open a folder written with XLA_FLAGS=--xla_dump_to=DIR --xla_dump_hlo_as_text "
                             "(File ▸ Open Log, Bundle or Folder…, Ctrl+Shift+O).")
        self.header.setWordWrap(True)
        self.modules = rows_table(("module", "platform", "ops before", "kernels after", "K", "fusions"))
        self.modules.currentCellChanged.connect(lambda row, *_: self._on_module_chosen(row))
        self.kernels = rows_table(("kernel", "kind", "ops", "ops inside"))
        self.kernels.cellDoubleClicked.connect(self._on_kernel_activated)
        self.families = rows_table(("op family", "torch.compile fused / alone", "XLA fused / alone", "verdict"))
        self.compare_label = QLabel("")
        self.compare_label.setWordWrap(True)
        self.stage = QComboBox()
        self.stage.addItems(STAGES)
        self.stage.currentTextChanged.connect(lambda _: self._show_graph())
        self.graph_status = QLabel("")
        self.graph_status.setWordWrap(True)
        self.scene = QGraphicsScene(self)
        self.view = QtZoomView(self.scene)
        self.view.sigActivated.connect(self._on_graph_activated)
        comparison = QWidget()
        compare_layout = QVBoxLayout(comparison)
        compare_layout.setContentsMargins(0, 0, 0, 0)
        compare_layout.addWidget(self.compare_label)
        compare_layout.addWidget(self.families, 1)
        left_widget = QSplitter(Qt.Orientation.Vertical)
        for widget in (self.modules, self.kernels, comparison):
            left_widget.addWidget(widget)
        left_widget.setSizes([150, 300, 300])
        bar = QHBoxLayout()
        bar.addWidget(self.stage)
        bar.addWidget(self.graph_status, 1)
        right = QVBoxLayout()
        right.addLayout(bar)
        right.addWidget(self.view, 1)
        right_widget = QWidget()
        right_widget.setLayout(right)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left_widget)
        split.addWidget(right_widget)
        split.setSizes([600, 700])
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.header)
        outer.addWidget(split, 1)
        model.sigLoaded.connect(lambda _loaded: self._compare())

    # --- what to show ---------------------------------------------------------------------------
    def open(self, source: Source, opened=None, failed=None) -> None:
        """Read the dump the window detected off the UI thread; compare it with the open torch.compile
        run, if any (and call `opened`, if given, once it is shown, or `failed` with why it could not
        be read)."""
        self.header.setText(f"Opening {source.path}…")

        def show(dump) -> None:
            self.set_dump(dump)
            if opened is not None:
                opened()

        run_in_background(source.open, show, lambda message, _tb: self._on_failed(source, message, failed), self)

    def _on_failed(self, source: Source, message: str, failed) -> None:
        self.header.setText(f"Could not open {source.path}: {message}")
        if failed is not None:
            failed(message)

    def set_dump(self, dump: XlaDump) -> None:
        self.dump = dump
        problems = "; ".join(dump.problems.describe())
        self.header.setText(f"XLA dump {dump.source}: {len(dump.modules)} module(s)"
                            + (f" — could not read everything: {problems}" if problems else ""))
        self.modules.setRowCount(len(dump.modules))
        for row, module in enumerate(dump.modules):
            summary = summarize_module(module)
            for column, value in enumerate((module.label, module.platform or "", format_count(summary["ops_before"]),
                                            format_count(summary["kernels"]), format_ratio(summary["fusion_ratio"]),
                                            str(summary["fusions"]))):
                self.modules.setItem(row, column, table_item(value))
        main = dump.main_module
        self.modules.setCurrentCell(dump.modules.index(main) if main else -1, 0)
        self._compare()

    def _on_module_chosen(self, row: int) -> None:
        if self.dump is None or not 0 <= row < len(self.dump.modules):
            return
        self.module = self.dump.modules[row]
        kernels = self.module.kernels
        self.kernels.setRowCount(len(kernels))
        for index, kernel in enumerate(kernels):
            names = ", ".join(op.opcode for op in kernel.ops)
            for column, value in enumerate((kernel.name, kernel.fusion_kind or kernel.opcode, str(len(kernel.ops)),
                                            names)):
                self.kernels.setItem(index, column, table_item(value))
        self.expanded, self._focus = set(), None
        self._show_graph()
        self._compare()

    def _compare(self) -> None:
        loaded = self.model.loaded
        module = self.module
        if loaded is None or module is None:
            self.compare_label.setText("Open a torch.compile run of the same model to compare fusion."
                                       if module is not None else "")
            self.families.setRowCount(0)
            return
        source = str(self.dump.source)
        self._comparisons.run(lambda: compare_fusion(loaded.session, module, source), self.set_comparison,
                              lambda message, _tb: self.compare_label.setText(f"Could not compare: {message}"))

    def set_comparison(self, result: dict) -> None:
        self.comparison = result
        torch, xla = result["torch"], result["xla"]
        self.compare_label.setText(
            f"torch.compile ({Path(torch['source']).name}): {format_count(torch['ops_before'])} ops → "
            f"{format_count(torch['kernels'])} "
            f"kernels, K = {format_ratio(torch['fusion_ratio'])}.   XLA ({xla['module']}): "
            f"{format_count(xla['ops_before'])} ops → "
            f"{format_count(xla['kernels'])} kernels, K = {format_ratio(xla['fusion_ratio'])}.")
        self.families.setRowCount(len(result["families"]))
        for row, family in enumerate(result["families"]):
            for column, value in enumerate((family["family"], format_share(family["torch"]),
                                            format_share(family["xla"]),
                                            family["verdict"])):
                self.families.setItem(row, column, table_item(value))

    # --- graph ----------------------------------------------------------------------------------
    def _show_graph(self) -> None:
        module = self.module
        hlo = None if module is None else module.after if self.stage.currentText() == STAGES[0] else module.before
        self.scene.clear()
        self.layer = None
        if hlo is None or hlo.entry is None:
            self.graph_status.setText("No HLO for this stage in the dump.")
            self._shown = None
            return
        self.graph_status.setText("Laying out…")
        expanded = set(self.expanded)

        def prepare():
            graph, paths = hlo_graph(hlo)
            root = build_groups(graph, paths)
            return lay_out_view(graph, root, expanded)

        self._layouts.run(prepare, self._draw, lambda message,
                          _tb: self.graph_status.setText(f"Could not lay out: {message}"))

    def _draw(self, laid_out: LaidOutGraph) -> None:
        self.graph, self.root, self.expanded = laid_out.graph, laid_out.root, laid_out.expanded
        visible, placed = laid_out.visible, laid_out.placed
        self.layer = fill_scene(self.scene, visible, placed, self.palette().placeholderText().color())
        folded = sum(1 for kind in visible.items.values() if kind == "group")
        self.graph_status.setText(f"{len(self.graph.nodes)} instructions; {folded} folded fusions or called "
                                  f"computations (double-click one to open it, its frame to fold it)")
        shown, focus, self._focus = (self.module, self.stage.currentText()), self._focus, None
        if shown != self._shown:  # as the Graph tab: fitted whole into a 1280×720 pane, labels would be specks
            self._shown = shown
            self.view.open_readable()
        if focus is not None:  # an open or a fold keeps the user's zoom and shows the group where it is now
            self._centre_on(laid_out.placed.frames.get(focus), group_item(focus))

    def _centre_on(self, frame: tuple[float, float, float, float] | None, folded: str) -> None:
        """Centre on an opened group's frame (its top, when the frame is taller than the view) or on
        the box of a folded one."""
        if frame is not None:
            x, y, width, height = frame
            room = self.view.viewport().height() / self.view.transform().m22()
            self.view.centerOn(x + width / 2, y + min(height, room) / 2)
        elif self.layer is not None and folded in self.layer.index:
            self.view.centerOn(self.layer.rect_of(folded).center())

    def _on_graph_activated(self, item_id: str) -> None:
        expanded = toggled(self.expanded, item_id)
        if expanded is not None:
            self.expanded, self._focus = expanded, item_key(item_id)
            self._show_graph()

    def _on_kernel_activated(self, row: int, _column: int) -> None:
        """Open the kernel's fusion in the graph (after optimisation)."""
        if self.module is None or not 0 <= row < len(self.module.kernels):
            return
        self.expanded, self._focus = self.expanded | {self.module.kernels[row].name}, self.module.kernels[row].name
        if self.stage.currentText() != STAGES[0]:
            self.stage.setCurrentText(STAGES[0])  # redraws
        else:
            self._show_graph()

