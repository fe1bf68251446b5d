"""Side-by-side diff of two runs: the graphs of matching compile units in two panes with pan, zoom and
selection kept in step, removed nodes red on the left, added green on the right, changed amber on
both; a list of every difference with next/previous (F3 / Shift+F3); and what changed in the run —
breaks, recompiles, kernels, times. File ▸ Compare With… picks the other run."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox, QGraphicsScene, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPushButton, QSizePolicy,
    QSplitter, QStackedWidget, QTextBrowser, QVBoxLayout, QWidget,
)

from inspector.core.graphs.graph_diff import diff_graphs
from inspector.core.graphs.graph_hierarchy import all_group_keys, build_groups, node_paths
from inspector.core.graphs.graph_layout import lay_out_view
from inspector.core.analysis.run_diff import diff_runs
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.analysis.user_names import unit_title
from inspector.core.model.session import Session
from inspector.gui.qt_background import LatestRequest
from inspector.core.numbers import count
from inspector.core.outputs.diff_report import diff_sections
from inspector.core.outputs.sections import as_html
from inspector.gui.views.graph.qt_graph_layers import fill_scene
from inspector.gui.views.graph.qt_zoom_view import QtZoomView

COLOURS = {"removed": "#d64545", "added": "#2e9d4f", "changed": "#e0a526", "same": "#c5cad1"}
DIFF_ROLE = Qt.ItemDataRole.UserRole
GUIDANCE = ("<h3>Compare two runs</h3><p>Open a run, then <b>File ▸ Compare With…</b> (Ctrl+D) and pick a second "
            "one: a session folder, a TORCH_TRACE log or folder, a debug folder or a .tcinspect bundle.</p>"
            "<p>The open run is <b>A</b>, the other <b>B</b>. Here you then see each compile unit's graph from both "
            "side by side (removed nodes red, added green, changed amber), a list of every difference "
            "(F3 / Shift+F3), and what changed in the run: breaks, recompiles, kernels, times.</p>"
            "<p>From a terminal: <code>compile-inspector A --compare B</code>.</p>")


class QtElidedLabel(QLabel):
    """A one-line label that elides its text in the middle to the width it is given, whenever that
    changes, with the whole text in its tooltip: a pane's title never runs into the next pane's."""

    def __init__(self, text: str = ""):
        super().__init__()
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setMinimumWidth(40)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # its text never widens it
        self.full_text = ""
        self.set_full_text(text)

    def set_full_text(self, text: str) -> None:
        self.full_text = text
        self.setToolTip(text)
        self._elide()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        room = max(0, self.contentsRect().width() - 2 * self.margin() - 4)  # a gap before the next pane
        super().setText(self.fontMetrics().elidedText(self.full_text, Qt.TextElideMode.ElideMiddle, room))


def _prepare(graph):
    root = build_groups(graph, node_paths(graph))
    expanded = all_group_keys(root)  # every group open: a diff is about nodes
    return lay_out_view(graph, root, expanded)


class QtDiffView(QWidget):
    def __init__(self, model=None):
        super().__init__()
        self.model = model  # the session model: a run opened after a comparison ends it
        self.a: Session | None = None
        self.b: Session | None = None
        self.diff = None
        self.layers = [None, None]
        self._diffs, self._runs = LatestRequest(self), LatestRequest(self)  # only the latest answers are shown
        self.unit = QComboBox()
        self.unit.currentIndexChanged.connect(lambda _: self._compare())
        self.stage = QComboBox()
        self.stage.currentTextChanged.connect(lambda _: self._compare())
        self.summary = QLabel("File ▸ Compare With… opens a second run to diff against the open one.")
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        self.summary.setWordWrap(True)
        previous, following = QPushButton("◀ previous difference"), QPushButton("next difference ▶")
        previous.clicked.connect(lambda: self.step(-1))
        following.clicked.connect(lambda: self.step(1))
        QShortcut(QKeySequence("F3"), self, activated=lambda: self.step(1))
        QShortcut(QKeySequence("Shift+F3"), self, activated=lambda: self.step(-1))
        bar = QHBoxLayout()
        for widget in (QLabel("Unit"), self.unit, QLabel("Stage"), self.stage, previous, following):
            bar.addWidget(widget)
        bar.addStretch(1)
        self.scenes = [QGraphicsScene(self), QGraphicsScene(self)]
        self.views = [QtZoomView(scene) for scene in self.scenes]
        for index, view in enumerate(self.views):
            view.sigClicked.connect(lambda item, side=index: self.select(item, side))
            view.sigZoomed.connect(lambda factor, other=self.views[1 - index]: other.scale(factor, factor))
        self._syncing = False
        for source, target in ((0, 1), (1, 0)):
            for bar_of in (lambda v: v.horizontalScrollBar(), lambda v: v.verticalScrollBar()):
                bar_of(self.views[source]).valueChanged.connect(
                    lambda value, s=source, t=target, b=bar_of: self._sync_scroll(b(self.views[s]), b(self.views[t])))
        self.labels = [QtElidedLabel("A"), QtElidedLabel("B")]
        self.differences = QListWidget()
        self.differences.setWordWrap(True)
        self.differences.currentItemChanged.connect(lambda item, _old: self._on_difference(item))
        self.run = QTextBrowser()
        self.run.setOpenLinks(False)  # log text is escaped, but never follow a link out of this pane
        panes = QSplitter(Qt.Orientation.Horizontal)
        for label, view in zip(self.labels, self.views):
            pane = QWidget()
            column = QVBoxLayout(pane)
            column.setContentsMargins(0, 0, 0, 0)
            column.addWidget(label)
            column.addWidget(view, 1)
            panes.addWidget(pane)
        side = QSplitter(Qt.Orientation.Vertical)
        side.addWidget(self.differences)
        side.addWidget(self.run)
        main = QSplitter(Qt.Orientation.Horizontal)
        main.addWidget(panes)
        main.addWidget(side)
        main.setSizes([1000, 380])
        content = QWidget()
        outer = QVBoxLayout(content)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addLayout(bar)
        outer.addWidget(self.summary)
        outer.addWidget(main, 1)
        self.guidance = QLabel(GUIDANCE)
        self.guidance.setWordWrap(True)
        self.guidance.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.guidance.setMargin(40)
        self.pages = QStackedWidget()
        self.pages.addWidget(self.guidance)
        self.pages.addWidget(content)
        QVBoxLayout(self).addWidget(self.pages)
        self.layout().setContentsMargins(0, 0, 0, 0)

    # --- sessions -------------------------------------------------------------------------------
    def set_sessions(self, run_a: SessionAnalysis, run_b: SessionAnalysis) -> None:
        """Compare two analysed runs (their analyses are reused by the run diff, not computed again)."""
        self.a, self.b = a, b = run_a.session, run_b.session
        self.pages.setCurrentIndex(1)
        for side, label, session in (("A", self.labels[0], a), ("B", self.labels[1], b)):
            label.set_full_text(f"{side}: {session.source}")
        keys_b = {(u.rank, str(u.compile_id)) for u in b.units}
        self.pairs = [(ua, next(ub for ub in b.units if (ub.rank, str(ub.compile_id)) == (ua.rank, str(ua.compile_id))))
                      for ua in a.units if (ua.rank, str(ua.compile_id)) in keys_b]
        self.unit.blockSignals(True)
        self.unit.clear()
        self.unit.addItems([unit_title(ua) for ua, _ub in self.pairs] or ["(no compile unit in both runs)"])
        self.unit.blockSignals(False)
        self._runs.run(lambda: diff_runs(run_a, run_b), self._show_run, lambda message, _tb: self.run.setPlainText(message))
        self._compare()

    def _show_run(self, result: dict) -> None:
        self.run.setHtml(as_html(diff_sections(result)))

    # --- graphs ---------------------------------------------------------------------------------
    def _compare(self) -> None:
        index = self.unit.currentIndex()
        if self.a is None or not 0 <= index < len(self.pairs):
            return
        ua, ub = self.pairs[index]
        stages = [s for s in ua.graphs if s in ub.graphs]
        if self.stage.count() != len(stages) or [self.stage.itemText(i) for i in range(self.stage.count())] != stages:
            self.stage.blockSignals(True)
            self.stage.clear()
            self.stage.addItems(stages)
            preferred = next((s for s in ("dynamo", "post_grad") if s in stages), None)
            if preferred:
                self.stage.setCurrentText(preferred)
            self.stage.blockSignals(False)
        stage = self.stage.currentText()
        if not stage:
            self.summary.setText(f"{ua.compile_id}: no graph stage recorded in both runs")
            return
        artifact_a, artifact_b = ua.graphs[stage], ub.graphs[stage]

        def prepare():  # the graphs are parsed here, off the UI thread
            graph_a, graph_b = artifact_a.graph, artifact_b.graph
            return graph_a, graph_b, diff_graphs(graph_a, graph_b), _prepare(graph_a), _prepare(graph_b)

        self._diffs.run(prepare, self._show, lambda message, _tb: self.summary.setText(f"Could not diff: {message}"))

    def _show(self, result) -> None:
        graph_a, graph_b, self.diff, prepared_a, prepared_b = result
        colour = self.palette().placeholderText().color()
        for side, laid_out in enumerate((prepared_a, prepared_b)):
            self.layers[side] = fill_scene(self.scenes[side], laid_out.visible, laid_out.placed, colour)
        changed_a = {c.a for c in self.diff.changed}
        changed_b = {c.b for c in self.diff.changed}
        removed, added = set(self.diff.removed), set(self.diff.added)
        self.layers[0].set_fills([COLOURS["removed"] if i in removed else COLOURS["changed"] if i in changed_a
                                  else COLOURS["same"] for i in self.layers[0].ids])
        self.layers[1].set_fills([COLOURS["added"] if i in added else COLOURS["changed"] if i in changed_b
                                  else COLOURS["same"] for i in self.layers[1].ids])
        self.differences.clear()
        for name in self.diff.removed:
            self._add_difference(f"removed  {name}", ("a", name))
        for name in self.diff.added:
            self._add_difference(f"added  {name}", ("b", name))
        for change in self.diff.changed:
            self._add_difference(f"changed  {change.a} → {change.b}  ({', '.join(change.fields)})", ("both", change.a))
        if not self.differences.count():
            empty = QListWidgetItem("No differences: the two graphs match node for node at this stage.")
            empty.setFlags(Qt.ItemFlag.ItemIsEnabled)  # read, not selected
            empty.setToolTip(empty.text())
            self.differences.addItem(empty)
        self.summary.setText(f"{count(len(graph_a.nodes), 'node')} in A, {len(graph_b.nodes):,} in B: {len(self.diff.matched)} matched, "
                             f"{len(self.diff.changed)} changed, {len(self.diff.added)} added, {len(self.diff.removed)} "
                             f"removed; similarity {self.diff.similarity:.2f} (structure {self.diff.structural_similarity:.2f})")
        for view in self.views:
            view.open_readable()

    def _add_difference(self, text: str, where: tuple[str, str]) -> None:
        item = QListWidgetItem(text)
        item.setToolTip(text)
        item.setData(DIFF_ROLE, where)
        self.differences.addItem(item)

    def step(self, direction: int) -> None:
        rows = self.differences.count()
        if rows and self.differences.item(0).data(DIFF_ROLE) is not None:
            self.differences.setCurrentRow((self.differences.currentRow() + direction) % rows)

    def _on_difference(self, item: QListWidgetItem | None) -> None:
        if item is None or item.data(DIFF_ROLE) is None:
            return
        side, name = item.data(DIFF_ROLE)
        self.select(name, 0 if side in ("a", "both") else 1)

    def select(self, name: str, side: int) -> None:
        """Select `name` on one side and its partner on the other, centring both."""
        if self.diff is None:
            return
        partner = self.diff.matched.get(name) if side == 0 else next((a for a, b in self.diff.matched.items() if b == name), None)
        names = (name, partner) if side == 0 else (partner, name)
        for index, selected in enumerate(names):
            layer = self.layers[index]
            layer.selected = selected
            layer.update()
            if selected in layer.index:
                self.views[index].centerOn(layer.rect_of(selected).center())

    def _sync_scroll(self, source, target) -> None:
        if self._syncing:
            return
        self._syncing = True
        if source.maximum() and target.maximum():
            target.setValue(round(source.value() / source.maximum() * target.maximum()))
        self._syncing = False
