"""Side-by-side diff of two runs: the graphs of matching compile units in two panes with pan, zoom and
selection kept in step, removed nodes red on the left, added green on the right, changed amber on
both; a list of every difference with next/previous (F3 / Shift+F3); and what changed in the run —
breaks, recompiles, kernels, times. File ▸ Compare With… picks the other run. A key under the toolbar says
what each colour means, and hovering a box says what it is in full (name, op, target, shape) and how it
differs from its partner. The open run is A: when another run is opened, the comparison ends and the tab
goes back to its guidance, saying which comparison was closed."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QComboBox, QGraphicsScene, QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QPushButton, QSizePolicy,
    QSplitter, QStackedWidget, QTextBrowser, QVBoxLayout, QWidget,
)

from inspector.core.graphs.graph_diff import GraphDiff, diff_graphs
from inspector.core.graphs.graph_hierarchy import all_group_keys, build_groups, node_paths
from inspector.core.graphs.graph_layout import lay_out_view
from inspector.core.graphs.item_ids import ItemKind, item_key, item_kind
from inspector.core.analysis.run_diff import diff_runs
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.analysis.user_names import unit_title
from inspector.core.model.fx_graph_text import FxGraph
from inspector.core.model.session import Session
from inspector.core.readers.session_loader import close_session
from inspector.gui.qt_background import LatestRequest
from inspector.gui.qt_plain_text import html_text
from inspector.core.numbers import count
from inspector.core.outputs.diff_report import diff_sections
from inspector.core.outputs.sections import as_html
from inspector.gui.views.graph.qt_graph_layers import fill_scene
from inspector.gui.views.graph.qt_zoom_view import QtZoomView
from inspector.gui.views.qt_elide import QtBoundaryElideDelegate

COLOURS = {"removed": "#d64545", "added": "#2e9d4f", "changed": "#e0a526", "same": "#c5cad1"}
# What each colour means, in the key above the panes and in a box's hover text.
MEANINGS = {"removed": "only in A", "added": "only in B", "changed": "in both, but different", "same": "in both, alike"}
CHANGED_FIELDS = {"target": "target", "shape": "shape", "dtype": "dtype", "args": "inputs"}
DIFF_ROLE = Qt.ItemDataRole.UserRole
NO_DIFFERENCES = "No differences at this stage"
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


def legend_html() -> str:
    """The key to the panes' colours: a swatch of each COLOURS entry and what it means."""
    return "&nbsp;&nbsp;&nbsp;".join(
        f"<span style='background-color:{COLOURS[kind]}'>&nbsp;&nbsp;&nbsp;&nbsp;</span>&nbsp;<b>{kind}</b> "
        f"({MEANINGS[kind]})" for kind in COLOURS)


def counts_text(diff: GraphDiff, nodes_a: int, nodes_b: int) -> str:
    """The diff's counts, worded so they visibly add up: A's nodes are the matched and the removed ones,
    B's the matched and the added ones; the changed ones are some of the matched."""
    matched, changed = len(diff.matched), len(diff.changed)
    of_them = "" if not matched else " (none of them changed)" if not changed else f" ({changed:,} of them changed)"
    return (f"{count(nodes_a, 'node')} in A, {nodes_b:,} in B: {matched:,} matched{of_them}, "
            f"{len(diff.removed):,} removed (only in A), {len(diff.added):,} added (only in B); "
            f"similarity {diff.similarity:.2f} (structure {diff.structural_similarity:.2f})")


def node_tip(graph: FxGraph, name: str, side: int, diff: GraphDiff, other: FxGraph | None) -> str:
    """A box's hover text (rich text, every value escaped): the node's full name, what it is in the
    diff, its op, target, shape and source line, and for a changed node each differing field on both sides."""
    if item_kind(name) is not ItemKind.NODE:
        return f"<b>{html_text(item_key(name))}</b><br>module"
    node = graph.node(name)
    if node is None:
        return ""
    this, that = ("A", "B") if side == 0 else ("B", "A")
    partner = diff.matched.get(name) if side == 0 else next((a for a, b in diff.matched.items() if b == name), None)
    change = next((c for c in diff.changed if (c.a if side == 0 else c.b) == name), None)
    if partner is None:
        kind = "removed" if side == 0 else "added"
        status = f"only in {this}"
    else:
        kind = "changed" if change else "same"
        differing = [CHANGED_FIELDS.get(f, f) for f in change.fields] if change else []
        status = f"matched to {that}'s <b>{html_text(partner)}</b>" + (
            f"; its {' and '.join(differing)} {'differ' if len(differing) > 1 else 'differs'}" if change else ", alike")
    lines = [f"<b>{html_text(node.name)}</b>",
             f"<span style='color:{COLOURS[kind]}'>■</span> {kind}: {status}",
             f"op: {html_text(node.op)}", f"target: <code>{html_text(node.target)}</code>",
             f"shape: {html_text(node.shape_text)}"]
    if node.source:
        lines.append(f"source: {html_text(Path(node.source.file).name)}:{node.source.line} "
                     f"<code>{html_text(node.source.code.strip()[:120])}</code>")
    partner_node = other.node(partner) if change and other is not None else None
    if partner_node is not None:
        values = {"target": lambda n: n.target, "shape": lambda n: n.shape_text, "dtype": lambda n: n.dtype or "—",
                  "args": lambda n: n.args}
        pair = (node, partner_node) if side == 0 else (partner_node, node)
        for field in change.fields:
            value = values.get(field)
            if value is not None:
                lines.append(f"{CHANGED_FIELDS.get(field, field)} in A: "
                             f"<code>{html_text(value(pair[0])[:160])}</code>, "
                             f"in B: <code>{html_text(value(pair[1])[:160])}</code>")
    return "<br>".join(lines)


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
        self.anchor: str | None = None  # where the other pane shows a node only one side has
        self.note = ""  # why the last comparison ended, shown above the guidance
        self.graphs: tuple[FxGraph | None, FxGraph | None] = (None, None)
        self.pairs = []
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
        self.legend = QLabel(legend_html())  # the key to the colours: fixed text, no log text in it
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setToolTip("Each box of the two graphs is coloured by what became of it from A to B; "
                               "hover a box for its full name, op and target and what differs.")
        self.scenes = [QGraphicsScene(self), QGraphicsScene(self)]
        self.views = [QtZoomView(scene) for scene in self.scenes]
        for index, view in enumerate(self.views):
            view.describe = lambda item, side=index: self.hover_text(item, side)  # shown as rich text
            view.sigClicked.connect(lambda item, side=index: self.select(item, side))
            view.sigZoomed.connect(lambda factor, other=self.views[1 - index]: other.scale(factor, factor))
        self._syncing = False
        for source, target in ((0, 1), (1, 0)):
            for bar_of in (lambda v: v.horizontalScrollBar(), lambda v: v.verticalScrollBar()):
                bar_of(self.views[source]).valueChanged.connect(
                    lambda value, s=source, t=target, b=bar_of: self._sync_scroll(b(self.views[s]), b(self.views[t])))
        self.labels = [QtElidedLabel("A"), QtElidedLabel("B")]
        self.differences = QListWidget()
        # one line each, a long node name cut at a word or underscore (whole in the tooltip), no side scrolling
        self.differences.setItemDelegate(QtBoundaryElideDelegate(self.differences))
        self.differences.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
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
        main.setStretchFactor(0, 1)  # the panes take what the window gains; the list keeps its width
        main.setStretchFactor(1, 0)
        main.setSizes([1000, 260])
        content = QWidget()
        outer = QVBoxLayout(content)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addLayout(bar)
        outer.addWidget(self.legend)
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
        if model is not None:
            model.sigLoaded.connect(self._on_loaded)

    # --- sessions -------------------------------------------------------------------------------
    def set_sessions(self, run_a: SessionAnalysis, run_b: SessionAnalysis) -> None:
        """Compare two analysed runs (their analyses are reused by the run diff, not computed again)."""
        open_run = self.model.loaded if self.model is not None else None
        if open_run is not None and run_a.session is not open_run.session:  # another run opened while B was read
            self._end_comparison(run_a.session, run_b.session, open_run.session, finished_late=True)
            return
        if self.b is not None and self.b is not run_b.session:
            self._let_go(self.b)
        self.a, self.b = a, b = run_a.session, run_b.session
        self.note = ""
        self.guidance.setText(GUIDANCE)
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
        self._runs.run(lambda: diff_runs(run_a, run_b), self._show_run,
                       lambda message, _tb: self.run.setPlainText(message))
        self._compare()

    def _on_loaded(self, loaded) -> None:
        """Another run was opened: it is the new A, so the comparison of the previous one ends."""
        if self.a is not None and loaded.session is not self.a:
            self._end_comparison(self.a, self.b, loaded.session)

    def _end_comparison(self, a: Session, b: Session, opened: Session, finished_late: bool = False) -> None:
        """Back to the guidance, saying which comparison was closed and why: its A is not the open run."""
        self._diffs.supersede()
        self._runs.supersede()  # answers still on their way are not shown
        if b is not None:
            self._let_go(b)
        self.a = self.b = self.diff = None
        self.graphs, self.pairs, self.layers = (None, None), [], [None, None]
        for scene in self.scenes:
            scene.clear()
        for combo in (self.unit, self.stage):
            combo.blockSignals(True)
            combo.clear()
            combo.blockSignals(False)
        self.differences.clear()
        self.run.clear()
        self.summary.setText("File ▸ Compare With… opens a second run to diff against the open one.")
        for side, label in zip("AB", self.labels):
            label.set_full_text(side)
        compared = f"the comparison of A: {a.source} with B: {b.source}"
        self.note = ((f"{opened.source} was opened while B was being read, so {compared} is not shown" if finished_late
                      else f"You opened {opened.source}, so {compared} was closed")
                     + " (the open run is always A). File ▸ Compare With… compares it with another run.")
        self.guidance.setText(f"<p style='color:#b35c00'><b>Comparison closed.</b> {html_text(self.note)}</p>"
                              + GUIDANCE)
        self.pages.setCurrentWidget(self.guidance)

    def _let_go(self, session: Session) -> None:
        """B is this view's own: a bundle's extracted folder goes with it (never the open run's)."""
        loaded = self.model.loaded if self.model is not None else None
        if session is not self.a and (loaded is None or session is not loaded.session):
            close_session(session)

    def hover_text(self, item: str, side: int) -> str:
        """What the box under the mouse in pane `side` (0 = A, 1 = B) is, in full, as rich text."""
        graph, other = self.graphs[side], self.graphs[1 - side]
        if graph is None or self.diff is None:
            return ""
        return node_tip(graph, item, side, self.diff, other)

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
        self.graphs = (graph_a, graph_b)
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
            # short enough to be read whole in the list beside two graphs at 1280 wide
            empty = QListWidgetItem(NO_DIFFERENCES)
            empty.setFlags(Qt.ItemFlag.ItemIsEnabled)  # read, not selected
            empty.setToolTip("The two graphs match node for node at this stage.")
            self.differences.addItem(empty)
        self.summary.setText(counts_text(self.diff, len(graph_a.nodes), len(graph_b.nodes)))
        for view in self.views:
            view.open_readable()
        self._same_scale()

    def _same_scale(self) -> None:
        """Both panes at one scale, the smaller of the two first views (each readable): a node is as big
        on the left as on the right, and a zoom in one pane (mirrored) keeps them so."""
        scale = min(view.transform().m11() for view in self.views)
        for view in self.views:
            if abs(view.transform().m11() - scale) > 1e-6:
                centre = view.mapToScene(view.viewport().rect().center())
                view.resetTransform()
                view.scale(scale, scale)
                view.centerOn(centre)

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
        partner = self._partner(name, side)
        names = (name, partner) if side == 0 else (partner, name)
        # a node only on one side: the other pane shows where it would be, beside the partner of its
        # nearest neighbour that is in both (outlined there as its neighbour)
        anchor = self._anchor(name, side) if partner is None else None
        self.anchor = anchor
        for index, selected in enumerate(names):
            layer = self.layers[index]
            layer.selected = selected
            layer.neighbours = {anchor} if anchor is not None and index != side else set()
            layer.update()
            shown = selected if selected in layer.index else anchor if index != side else None
            if shown in layer.index:
                self.views[index].centerOn(layer.rect_of(shown).center())

    def _partner(self, name: str, side: int) -> str | None:
        if side == 0:
            return self.diff.matched.get(name)
        return next((a for a, b in self.diff.matched.items() if b == name), None)

    def _anchor(self, name: str, side: int) -> str | None:
        """The other side's partner of the nearest node around `name` (inputs and users, breadth first)
        that both graphs hold."""
        graph = self.graphs[side]
        if graph is None:
            return None
        seen, queue = {name}, [name]
        while queue:
            current = queue.pop(0)
            node = graph.node(current)
            for other in [*(node.inputs if node is not None else []), *graph.users(current)]:
                if other in seen:
                    continue
                partner = self._partner(other, side)
                if partner is not None:
                    return partner
                seen.add(other)
                queue.append(other)
        return None

    def _sync_scroll(self, source, target) -> None:
        if self._syncing:
            return
        self._syncing = True
        if source.maximum() and target.maximum():
            target.setValue(round(source.value() / source.maximum() * target.maximum()))
        self._syncing = False
