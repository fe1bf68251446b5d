"""FX graph view: the selected unit's graph at any stage, folded into groups (modules, else source
locations) and laid out by Graphviz off the UI thread; zoom, pan, fit, minimap; regex search; node
details with source line and kernel; upstream/downstream highlight; colour overlays; nodes next to a
graph break outlined; export to SVG and PNG."""

from __future__ import annotations

import re
from collections import deque
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor, QIcon, QKeySequence, QPixmap, QShortcut
from PySide6.QtWidgets import (
    QComboBox, QFileDialog, QGraphicsScene, QHBoxLayout, QLabel, QLineEdit, QListWidget, QListWidgetItem, QMenu,
    QPushButton, QSizePolicy, QSplitter, QToolButton, QToolTip, QVBoxLayout, QWidget,
)

from inspector.core.analysis.kernel_index import kernels_of_node, names_stage, naming_stage
from inspector.core.analysis.module_stacks import module_stacks
from inspector.core.graphs.graph_hierarchy import all_group_keys, build_groups, initially_expanded, stage_paths
from inspector.core.graphs.graph_layout import LaidOutGraph, lay_out_view
from inspector.core.graphs.item_ids import ItemKind, is_group, item_key, item_kind, toggled
from inspector.core.graphs.stage_graphs import StageGraphs
from inspector.core.gc_policy import freeze_alive
from inspector.gui.qt_background import LatestRequest
from inspector.gui.qt_plain_text import html_text, plain_tip
from inspector.gui.qt_shown_later import QtShownLater
from inspector.gui.qt_session_model import QtSessionModel
from inspector.gui.views.graph.qt_graph_export import write_png_tiles, write_svg
from inspector.gui.views.graph.qt_graph_layers import (
    BREAK_NEIGHBOUR_COLOUR, GROUP_FILL, KERNEL_NODES_COLOUR, OUTLINES, TRACED_COLOUR, NodeLayer, fill_scene,
)
from inspector.gui.views.graph.qt_graph_overlays import Overlay, overlay_colours
from inspector.gui.views.graph.qt_node_details import QtNodeDetails, node_details_html
from inspector.gui.views.graph.qt_graph_side_panel import QtSidePanel
from inspector.gui.views.graph.qt_zoom_view import QtMinimap, QtZoomView
from inspector.gui.views.qt_break_map import QtBreakMap


NO_NODE_SELECTED = "Click a node first: Upstream and Downstream outline what it is computed from and what uses it"
SEARCH_MIN_PX = 180  # the search box's least width: a regex like `sum|gt|addmm` and the placeholder fit
NODE_ROLE = Qt.ItemDataRole.UserRole  # a search hit's node name


def menu_button(text: str, actions) -> QPushButton:
    """A push button that opens a menu of (text, slot) actions."""
    button = QPushButton(text)
    menu = QMenu(button)
    for label, slot in actions:
        menu.addAction(label, slot)
    button.setMenu(menu)
    return button


class QtGraphView(QWidget):
    """The FX graph pane: a toolbar (stage, search, overlay, highlight, groups, export) above the break
    map, a status line and the selected node's module path; the graph beside the minimap, the overlay's
    legend, the search hits and the node details."""

    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.unit = None
        self.graph = None
        self.root = None
        self.expanded: set[str] = set()
        self.visible = None
        self.layer: NodeLayer | None = None
        self._layouts = LatestRequest(self)  # only the latest graph, stage and fold state is shown
        self._pending_reveal: str | None = None
        self._reveal_opens = True  # False: a fold from the breadcrumb keeps a hidden node's group selected
        self._search_again = False  # a search was on show when the graph changed: run it on the new graph
        self._paths: dict[str, tuple[str, ...]] = {}  # node → module path of the graph shown
        self._overlay = None  # (graph, mode) → overlay_colours(), kept while groups fold and open
        bar = self._toolbar()
        self._graph_canvas()
        self._node_panes()
        side = self._side_panel()
        self._lay_out(model, bar, side)
        self._follow_selection(model)

    def _toolbar(self) -> QHBoxLayout:
        """Stage, search, overlay, the highlight buttons (each with its key) and the Groups and Export menus."""
        self.stage = QComboBox()
        self.stage.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        # never cut ("post_gra"): the search box gives way
        self.stage.setSizePolicy(QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Fixed)
        self.stage.currentTextChanged.connect(self._on_stage_chosen)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search nodes (regex)")
        self.search.setToolTip("A regular expression matched against each node's name, op, target and shape (listed "
                               "first), then its source line (after). Enter shows the next hit, Shift+Enter the one "
                               "before")
        self.search.returnPressed.connect(self.next_hit)
        QShortcut(QKeySequence("Shift+Return"), self.search, activated=lambda: self.next_hit(-1),
                  context=Qt.ShortcutContext.WidgetShortcut)
        self._searched: str | None = None  # the text whose hits the list shows (Enter again: the next one)
        self.search.setMinimumWidth(SEARCH_MIN_PX)
        self.overlay = QComboBox()
        self.overlay.addItems([overlay.value for overlay in Overlay])
        self.overlay.currentTextChanged.connect(lambda _: self._paint_overlay())
        buttons = []
        self.flow_buttons: dict[str, QPushButton] = {}  # by their words; Upstream and Downstream say when no node is
        for text, slot, key, tip in (
                ("Fit", lambda: self.view.fit(), "0", "Show the whole graph (0; + and − zoom)"),
                ("Upstream", lambda: self.highlight_flow(up=True), "U",
                 "Outline every node the selected one is computed from (U)"),
                ("Downstream", lambda: self.highlight_flow(up=False), "D",
                 "Outline every node computed from the selected one (D)"),
                ("Clear", self._clear_highlight, "Esc", "Clear the up- and downstream outlines (Esc)")):
            button = QPushButton(text)
            button.clicked.connect(slot)
            button.setToolTip(tip)
            self.flow_buttons[text] = button
            if key != "0":  # the zoom view handles 0 itself
                QShortcut(QKeySequence(key), self, activated=slot,
                          context=Qt.ShortcutContext.WidgetWithChildrenShortcut)
            buttons.append(button)
        # the rarer actions two to a menu button, so the toolbar fits beside the Session column at 1280 px
        self.groups = menu_button("Groups", (("Expand every module group", self.expand_all),
                                             ("Fold every module group", self.fold_all)))
        self.groups.setToolTip("Open or fold every module group at once")
        self.export = menu_button("Export", (("SVG (vector)…", self.ask_export_svg),
                                             ("PNG (image)…", self.ask_export_png)))
        self.export.setToolTip("Save the graph as drawn: SVG or a PNG image")
        bar = QHBoxLayout()
        for widget in (self.stage, self.search, self.overlay, *buttons, self.groups, self.export):
            bar.addWidget(widget)
        bar.setStretch(1, 1)
        return bar

    def _graph_canvas(self) -> None:
        """The scene, the zoomable view that shows it and its minimap."""
        self.scene = QGraphicsScene(self)
        self.view = QtZoomView(self.scene)
        self.view.sigActivated.connect(self._on_activated)
        self.view.sigClicked.connect(self._on_clicked)
        self.minimap = QtMinimap(self.scene, self.view)
        self.view.describe = self.hover_text

    def _node_panes(self) -> None:
        """The node details (a source link opens the line), the search hits and the status line."""
        self.details = QtNodeDetails()
        self.details.setOpenLinks(False)
        self.details.anchorClicked.connect(lambda url: self.model.show_location(url.path(), int(url.fragment() or 0)))
        self.results = QListWidget()
        self.results.currentItemChanged.connect(  # one click or an arrow key shows a hit; no double-click needed
            lambda item, _before: self.reveal(item.data(NODE_ROLE)) if item is not None else None)
        self.status = QLabel("")
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # parse errors quote the log
        self.status.setWordWrap(True)

    def _side_panel(self) -> QSplitter:
        """Minimap, the overlay's legend (and what the outlines mean), search hits and details, stacked."""
        self.legend = QListWidget()  # every colour of the overlay, full names; scrolls, never widens the window
        self.legend.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.legend_title = QLabel("")
        self.legend_title.setWordWrap(True)
        legend_box = QWidget()
        legend_layout = QVBoxLayout(legend_box)
        legend_layout.setContentsMargins(0, 0, 0, 0)
        legend_layout.addWidget(self.legend_title)
        legend_layout.addWidget(self.legend, 1)
        self.outline_legend = QLabel("Outlines: " + "  ".join(
            f"<span style='color:{colour}'>■</span>&nbsp;{html_text(meaning)}" for colour, meaning in OUTLINES))
        self.outline_legend.setWordWrap(True)
        legend_layout.addWidget(self.outline_legend)
        self.results.setVisible(False)  # shown when a search has results
        side = QtSidePanel(self.legend, (self.minimap, legend_box, self.results, self.details))
        # the details get the height the minimap and legend do not need: more than four lines at 1280×720
        self.legend.setMinimumHeight(self.legend.fontMetrics().height() * 2 + 8)
        for index, stretch in enumerate((0, 0, 1, 3)):
            side.setStretchFactor(index, stretch)
        side.setSizes([120, 130, 120, 600])
        self.side = side
        return side

    def _lay_out(self, model: QtSessionModel, bar: QHBoxLayout, side: QSplitter) -> None:
        """Toolbar, break map, status and module path above the graph and its side panel."""
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.view)
        split.addWidget(side)
        split.setSizes([1000, 340])
        layout_ = QVBoxLayout(self)
        layout_.setContentsMargins(0, 0, 0, 0)
        layout_.addLayout(bar)
        self.break_map = QtBreakMap(model)
        layout_.addWidget(self.break_map)
        layout_.addWidget(self.status)
        self.breadcrumb = QWidget()  # the selected node's module path; a segment folds or opens its group
        self.breadcrumb.setLayout(QHBoxLayout())
        self.breadcrumb.layout().setContentsMargins(0, 0, 0, 0)
        self.breadcrumb.layout().setSpacing(2)
        self.breadcrumb.hide()
        layout_.addWidget(self.breadcrumb)
        layout_.addWidget(split, 1)

    def _follow_selection(self, model: QtSessionModel) -> None:
        """The unit and the kernel selected anywhere in the app, shown here."""
        # a unit chosen while the tab is hidden is laid out when it is opened: laying out and drawing a
        # graph nobody looks at would cost every selection, and the UI thread's time as a session arrives
        self._when_shown = QtShownLater(self)
        model.sigUnitSelected.connect(lambda unit: self._when_shown.run(lambda: self._on_unit_selected(unit)))
        model.sigKernelSelected.connect(lambda unit, kernel: self._when_shown.run(
            lambda: (self._on_unit_selected(unit), self._on_kernel_selected(unit, kernel))))

    def showEvent(self, event) -> None:  # noqa: N802 (Qt's name)
        self._when_shown.shown()
        super().showEvent(event)

    def find_box(self) -> QLineEdit:
        return self.search

    # --- what to show ---------------------------------------------------------------------------
    def _on_unit_selected(self, unit) -> None:
        if unit is self.unit:
            return
        self.unit = unit
        self.stage.blockSignals(True)
        self.stage.clear()
        self.stage.addItems(list(unit.graphs) if unit is not None else [])
        self.stage.blockSignals(False)
        preferred = next((s for s in ("post_grad", "dynamo") if unit is not None and s in unit.graphs), None)
        if preferred:
            self.stage.setCurrentText(preferred)
        self._on_stage_chosen(self.stage.currentText())

    def _on_stage_chosen(self, stage: str) -> None:
        """Another unit or stage: what was found in, or picked from, the graph before goes with it (a
        search on show runs again on the new graph once it is laid out)."""
        self.scene.clear()
        self.layer = None
        self.graph = None
        self._pending_reveal = None
        self._search_again = self._search_again or (self.results.count() > 0 and bool(self.search.text()))
        self.results.clear()
        self.results.setVisible(False)
        self.details.clear()
        if not stage or self.unit is None or stage not in self.unit.graphs:
            self.status.setText("No graph was recorded for this compile unit.")
            return
        self.status.setText("Parsing and laying out…")
        unit = self.unit

        def prepare():
            stacks = module_stacks(unit)
            graph = unit.graphs[stage].graph
            graphs = StageGraphs(unit)
            paths = stage_paths(graphs, stage, stacks)  # parses only the stages it links through
            # the parsed graphs live as long as the session: later collections skip them
            freeze_alive()
            root = build_groups(graph, paths)
            expanded = initially_expanded(root, len(graph.nodes))
            return lay_out_view(graph, root, expanded, paths)

        self._layouts.run(prepare, self._show, self._layout_failed)

    def _relayout(self) -> None:
        if self.graph is None:  # nothing on show yet (or its layout is still on its way)
            return
        graph, root, expanded, paths = self.graph, self.root, set(self.expanded), self._paths
        self._layouts.run(lambda: lay_out_view(graph, root, expanded, paths), self._show, self._layout_failed)

    def _layout_failed(self, message: str, _traceback: str) -> None:
        self.status.setText(f"Could not lay out: {message}")

    def _show(self, laid_out: LaidOutGraph) -> None:
        self.graph, self.root = laid_out.graph, laid_out.root
        self.expanded, self.visible = laid_out.expanded, laid_out.visible
        self._paths, placed = laid_out.paths, laid_out.placed
        self.layer = fill_scene(self.scene, self.visible, placed, self.palette().placeholderText().color())
        freeze_alive()  # the layout and the scene's arrays (acyclic: freed by reference counting on the next layout)
        # stay out of the collector's full passes, which stall a big graph's frames (docs/benchmarks.md, FX graph view)
        nodes, folded = len(self.graph.nodes), sum(1 for kind in self.visible.items.values() if kind == "group")
        unreadable = f"; {len(self.graph.unreadable)} line(s) could not be read" if self.graph.unreadable else ""
        if not any(node.is_op for node in self.graph.nodes):
            self.status.setText("Empty graph: Dynamo captured no operations for this unit.")
        else:
            self.status.setText(f"{nodes} nodes, {len(self.visible.items)} items on screen ({folded} folded groups — "
                                f"double-click one to open it); layout: {placed.engine}"
                                + (f" — {'; '.join(dict.fromkeys(placed.notes))}" if placed.notes else "") + unreadable)
        self._paint_overlay()
        self._mark_break_neighbours()
        self.view.open_readable()
        self.minimap.refit()
        if self._search_again:
            self._search_again = False
            self.run_search()
        elif self._pending_reveal:
            name, self._pending_reveal = self._pending_reveal, None
            owner = self.visible.owner.get(name)
            if not self._reveal_opens and owner is not None and is_group(owner) and item_kind(owner) is ItemKind.GROUP:
                self._on_clicked(owner)  # folded from the breadcrumb: its group is selected, not opened again
            else:
                self.reveal(name)

    # --- interaction ----------------------------------------------------------------------------
    def _on_activated(self, item_id: str) -> None:
        expanded = toggled(self.expanded, item_id)
        if expanded is not None:
            self.expanded = expanded
            self._relayout()
        else:
            node = self.graph.node(item_id)
            if node is not None and node.source:
                self.model.show_location(node.source.file, node.source.line)

    def select(self, item_id: str) -> None:
        """Mark `item_id` selected and the boxes feeding it and fed by it as its neighbours."""
        if self.layer is None or item_id not in self.layer.index or self.graph is None:
            return
        members = self._members_of(item_id)
        near = {self.visible.owner.get(other) for name in members for other in
                [*(self.graph.node(name).inputs if self.graph.node(name) else []), *self.graph.users(name)]}
        self.layer.selected = item_id
        self.layer.neighbours = {item for item in near if item and item != item_id}
        self.layer.update()

    def _on_clicked(self, item_id: str) -> None:
        if item_kind(item_id) is ItemKind.OPEN or self.graph is None:
            return
        self.select(item_id)
        self._show_breadcrumb(item_id)
        node = self.graph.node(item_id)
        if node is None:
            return
        self.details.setHtml(node_details_html(self.unit, self.graph, node, self.stage.currentText(),
                                               self._kernel_time()))

    def _show_breadcrumb(self, item_id: str) -> None:
        """`(graph) › layer1 › 0 › conv1`: the modules the node (or folded group) sits in, each segment a
        button that folds its group (open) or opens it (folded), as a double-click on it would."""
        layout = self.breadcrumb.layout()
        while layout.count():
            widget = layout.takeAt(0).widget()
            if widget is not None:
                widget.setParent(None)  # gone now, not only at the next turn of the loop
                widget.deleteLater()
        path = tuple(item_key(item_id).split("/")) if is_group(item_id) else self._paths.get(item_id, ())
        self.breadcrumb_keys = ["/".join(path[:depth]) for depth in range(1, len(path) + 1)]
        layout.addWidget(QLabel("Module:"))
        for depth, key in enumerate(self.breadcrumb_keys):
            if depth:
                layout.addWidget(QLabel("›"))
            button = QToolButton()
            button.setAutoRaise(True)
            button.setText(path[depth])
            opened = key in self.expanded
            button.setToolTip(f"{key}: {'open — click to fold it' if opened else 'folded — click to open it'}")
            button.clicked.connect(lambda _=False, k=key: self.toggle_group(k))
            layout.addWidget(button)
        if not path:
            layout.addWidget(QLabel("(top level: in no module)"))
        layout.addStretch(1)
        self.breadcrumb.show()

    def toggle_group(self, key: str) -> None:
        """Fold an open group (and the groups inside it) or open a folded one (and the groups holding it);
        the node selected stays selected where it is still drawn."""
        selected = self.layer.selected if self.layer is not None else None
        if key in self.expanded:
            self.expanded = {k for k in self.expanded if k != key and not k.startswith(key + "/")}
        else:
            parts = key.split("/")
            self.expanded = self.expanded | {"/".join(parts[:i]) for i in range(1, len(parts) + 1)}
        self._pending_reveal = selected if selected and not is_group(selected) else None
        self._reveal_opens = False
        self._relayout()

    def reveal(self, name: str) -> None:
        """Open the groups holding `name`, then centre on it and select it."""
        owner = self.visible.owner.get(name) if self.visible else None
        if owner and item_kind(owner) is ItemKind.GROUP:
            parts = item_key(owner).split("/")
            self.expanded |= {"/".join(parts[:i]) for i in range(1, len(parts) + 1)}
            self._pending_reveal, self._reveal_opens = name, True  # a nested group opens on the next layout
            self._relayout()
            return
        if self.layer is not None and name in self.layer.index:
            self.view.centerOn(self.layer.rect_of(name).center())
            self._on_clicked(name)

    def _members_of(self, item_id: str) -> tuple[str, ...]:
        """The graph nodes a visible item shows: a node itself, a folded group all nodes inside it."""
        if not is_group(item_id) or self.root is None:
            return (item_id,)
        group, key = self.root, item_key(item_id)
        while group.key != key:
            group = next((child for child in group.children.values() if key == child.key
                          or key.startswith(child.key + "/")),
                         None)
            if group is None:
                return ()
        return group.members

    def hover_text(self, item_id: str) -> str:
        """What the box under the mouse is, in full: a node's name, op, target, shape and dtype, module,
        source line and kernels; a group's path and size."""
        if self.graph is None or self.visible is None:
            return ""
        if is_group(item_id):
            key = item_key(item_id)
            size = len(self._members_of(item_id)) if item_kind(item_id) is ItemKind.GROUP else None
            action = "double-click to open" if size is not None else "double-click the frame to fold it"
            return (f"<b>{html_text(key)}</b><br>{size if size is not None else 'open'}"
                    f"{' nodes' if size is not None else ''} — {action}")
        node = self.graph.node(item_id)
        if node is None:
            return ""
        source = (f"{html_text(Path(node.source.file).name)}:{node.source.line} "
                  f"<code>{html_text(node.source.code.strip()[:120])}</code>"
                  if node.source else "no source recorded")
        module = "/".join(self._paths.get(node.name, ())) or "(top level)"
        kernels = ", ".join(k.name for k in kernels_of_node(self.unit, node.name, self.stage.currentText())) or "—"
        return (f"<b>{html_text(node.name)}</b><br>op: {node.op}<br>target: <code>{html_text(node.target)}</code><br>"
                f"shape: {html_text(node.shape_text)}<br>module: {html_text(module)}<br>source: {source}<br>kernels: "
                f"{html_text(kernels)}")

    def run_search(self) -> list[str]:
        """Every node the pattern matches: those whose name, op, target, shape or dtype match first (what
        a user typing `tanh` means), then those only whose source line matches; the first is shown."""
        self.results.blockSignals(True)
        self.results.clear()
        self.results.blockSignals(False)
        self._searched = self.search.text()
        if self.graph is None:
            return []
        try:
            pattern = re.compile(self.search.text(), re.IGNORECASE)
        except re.error as error:
            self.status.setText(f"Search: not a regular expression ({error})")
            return []
        own, by_source = [], []
        for node in self.graph.nodes:
            if any(pattern.search(field)
                   for field in (node.name, node.op, node.target, str(node.shape), node.dtype or "")):
                own.append(node)
            elif node.source and (pattern.search(f"{node.source.file}:{node.source.line}")
                                  or pattern.search(node.source.code)):
                by_source.append(node)
        for node in own:
            self._add_hit(f"{node.name}  {node.target}", node.name)
        for node in by_source:
            self._add_hit(f"{node.name}  {node.target}  (source line {node.source.line})", node.name)
        hits = [node.name for node in (*own, *by_source)]
        self.results.setVisible(bool(hits))
        self.status.setText("0 node(s) match" if not hits else
                            f"{len(own)} node(s) match by name, op or target"
                            + (f", {len(by_source)} more by their source line" if by_source else "")
                            + (" — Enter shows the next" if len(hits) > 1 else ""))
        if hits:
            self.results.setCurrentRow(0)  # shows it
        return hits

    def _add_hit(self, text: str, name: str) -> None:
        hit = QListWidgetItem(text)
        hit.setData(NODE_ROLE, name)  # the node, not read back from the text shown
        self.results.addItem(hit)

    def next_hit(self, step: int = 1) -> None:
        """Enter in the search box: a new text is searched; the same text again shows its next hit."""
        if self.search.text() != self._searched or not self.results.count():
            self.run_search()
            return
        self.results.setCurrentRow((self.results.currentRow() + step) % self.results.count())

    def highlight_flow(self, up: bool) -> set[str]:
        if self.layer is None or self.layer.selected is None or self.graph is None:
            if self.graph is not None:  # a click that outlines nothing says why, beside the button
                button = self.flow_buttons["Upstream" if up else "Downstream"]
                QToolTip.showText(button.mapToGlobal(QPoint(0, button.height())), NO_NODE_SELECTED, button)
            return set()
        start = self.layer.selected
        reached, queue = {start}, deque([start])
        while queue:
            name = queue.popleft()
            node = self.graph.node(name)
            following = (node.inputs if up else self.graph.users(name)) if node else []
            for other in following:
                if other not in reached:
                    reached.add(other)
                    queue.append(other)
        owners = {self.visible.owner.get(name) for name in reached}
        self.layer.outline = {item: TRACED_COLOUR for item in owners if item in self.layer.index}
        self.layer.update()
        return reached

    def _clear_highlight(self) -> None:
        if self.layer is not None:
            self.layer.outline = {}
            self.layer.update()
        self._mark_break_neighbours()

    def expand_all(self) -> None:
        if self.root is not None:
            self.expanded = all_group_keys(self.root)
            self._relayout()

    def fold_all(self) -> None:
        self.expanded = set()
        self._relayout()

    def _on_kernel_selected(self, unit, kernel) -> None:
        if unit is not self.unit or self.graph is None or self.layer is None:
            return
        if not names_stage(kernel, self.stage.currentText()):
            stage = naming_stage(unit, kernel)
            self.status.setText(f"{kernel.name}'s nodes are named in another stage's graph: choose {stage} to see them"
                                if stage else f"{kernel.name}'s nodes are named in a graph this log does not hold")
            return
        owners = {self.visible.owner.get(name) for name in kernel.source_nodes if self.graph.node(name) is not None}
        self.layer.outline = {item: KERNEL_NODES_COLOUR for item in owners if item in self.layer.index}
        self.layer.update()

    # --- colour ---------------------------------------------------------------------------------
    def _paint_overlay(self) -> None:
        if self.graph is None or self.layer is None:
            return
        key = (id(self.graph), self.overlay.currentText(), self.model.loaded is not None)
        if self._overlay is None or self._overlay[0] != key:  # a node's colours depend on the graph, not on folding
            self._overlay = (key, overlay_colours(Overlay(self.overlay.currentText()), self.unit,
                                                  self.stage.currentText(), self.graph, self._kernel_time))
        fills, legend = self._overlay[1]
        self.layer.set_fills([fills.get(item_id, [GROUP_FILL]) for item_id in self.layer.ids])
        self.legend.clear()
        for colour, label, tip in legend:
            swatch = QPixmap(12, 12)
            swatch.fill(QColor(colour))
            entry = QListWidgetItem(QIcon(swatch), label)
            entry.setToolTip(plain_tip(tip or label))
            self.legend.addItem(entry)
        self.legend_title.setText(f"Colour by {self.overlay.currentText()} ({len(legend)} entries)")
        self.side.refit()

    def _kernel_time(self):
        """The session's kernel-time table (None without a profile or a session)."""
        return self.model.loaded.kernel_time if self.model.loaded else None

    def _mark_break_neighbours(self) -> None:
        """The last ops before a graph break (what the graph returns) and the first after it
        (a resume function's inputs), outlined in their own colour (not the selection's neighbours')."""
        if self.graph is None or self.unit is None:
            return
        near: set[str] = set()
        if self.unit.breaks:
            output = next((node for node in self.graph.nodes if node.op == "output"), None)
            near |= set(output.inputs) if output else set()
        if (self.unit.function or "").startswith("torch_dynamo_resume_in_"):
            near |= {node.name for node in self.graph.nodes if node.op == "placeholder"
                     and "parameters" not in node.name}
        for name in near:
            owner = self.visible.owner.get(name)
            if self.layer is not None and owner in self.layer.index:
                self.layer.outline.setdefault(owner, BREAK_NEIGHBOUR_COLOUR)
        if self.layer is not None:
            self.layer.update()

    # --- export ---------------------------------------------------------------------------------
    def ask_export_svg(self) -> None:
        target, _ = QFileDialog.getSaveFileName(self, "Export graph as SVG", "graph.svg", "SVG (*.svg)")
        if target:
            self.export_svg(target)

    def ask_export_png(self) -> None:
        target, _ = QFileDialog.getSaveFileName(self, "Export graph as PNG", "graph.png", "PNG (*.png)")
        if target:
            self.export_png(target)

    def export_svg(self, path: str) -> None:
        write_svg(self.scene, path)

    def export_png(self, path: str, scale: float = 1.0) -> list[str]:
        """The whole graph at `scale`, as one PNG or numbered tiles (qt_graph_export.write_png_tiles)."""
        return write_png_tiles(self.scene, path, scale)
