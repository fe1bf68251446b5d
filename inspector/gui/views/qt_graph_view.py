"""FX graph view: the selected unit's graph at any stage, folded into groups (modules, else source
locations) and laid out by Graphviz off the UI thread; zoom, pan, fit, minimap; regex search; node
details with source line and kernel; upstream/downstream highlight; colour overlays; nodes next to a
graph break outlined; export to SVG and PNG."""

from __future__ import annotations

import re
from html import escape
from collections import deque
from pathlib import Path

from PySide6.QtCore import QLineF, QRectF, QSize, Qt, Signal
import numpy as np
from PySide6.QtGui import QColor, QFont, QImage, QPainter, QPen, QPicture
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import (
    QComboBox, QFileDialog, QGraphicsItem, QGraphicsScene, QGraphicsView, QHBoxLayout, QLabel, QSizePolicy,
    QLineEdit, QListWidget, QPushButton, QSplitter, QStyleOptionGraphicsItem, QTextBrowser, QVBoxLayout, QWidget,
)

from inspector.core.graphs.graph_hierarchy import all_group_keys, build_groups, initially_expanded, node_paths, visible_graph
from inspector.core.graphs.graph_layout import layout
from inspector.core.analysis.kernel_index import kernels_of_node
from inspector.gui.qt_background import run_in_background
from inspector.gui.qt_session_model import QtSessionModel
from inspector.gui.views.qt_break_map import QtBreakMap
from inspector.core.readers.safe_files import loads_json
from inspector.gui.qt_plain_text import plain_tip

OVERLAYS = ("op kind", "dtype", "fused kernel", "kernel time")
PALETTE = ("#2b7bb9", "#2e9d4f", "#e0a526", "#8e5bb6", "#d9822b", "#17a2b8", "#c0392b", "#7f8c8d", "#16a085", "#9b59b6")
TILE = 8192  # pixels per PNG tile on export
LABEL_MIN_PX = 40  # a box gets its text when it is at least this wide on screen
MAX_LABELS = 200
PICTURE_ABOVE = 1500  # boxes in view above which recorded bands (or, far out, merged boxes) are drawn
EDGE_PICTURE_ABOVE = 300  # lines in view above which recorded bands are replayed
BAND = 1500.0  # scene units per recorded band
SMALL_LOD = 0.2  # below this zoom, boxes lose their outline and short edges are dropped
MIN_EDGE_PX = 6.0


class TiledPictures:
    """Drawing commands cut into horizontal bands of the scene, each recorded once into a QPicture:
    a frame replays only the bands it shows, in C++, whatever the zoom."""

    def __init__(self, top, bottom, draw):
        self.top, self.bottom, self.draw = np.asarray(top), np.asarray(bottom), draw
        self.pictures: dict[int, QPicture] = {}

    def paint(self, painter: QPainter, exposed: QRectF) -> None:
        for band in range(int(exposed.top() // BAND), int(exposed.bottom() // BAND) + 1):
            picture = self.pictures.get(band)
            if picture is None:
                members = np.nonzero((self.bottom >= band * BAND) & (self.top <= (band + 1) * BAND))[0]
                picture = self.pictures[band] = QPicture()
                recorder = QPainter(picture)
                self.draw(recorder, members)
                recorder.end()
            painter.drawPicture(0, 0, picture)


class NodeLayer(QGraphicsItem):
    """Every node and folded group of the view in one item, painted from arrays: only boxes in the
    exposed area, batched by colour, text only where a box is wide enough on screen to hold it, and a
    cached picture when thousands are in view — so a frame costs about the same at 100 or 10,000."""

    def __init__(self, ids: list[str], kinds: list[str], labels: list[str], rects: list[tuple[float, float, float, float]]):
        super().__init__()
        self.ids, self.kinds, self.labels = ids, kinds, labels
        self.index = {item: position for position, item in enumerate(ids)}
        array = np.array(rects, dtype=float).reshape(-1, 4)
        self.x0, self.y0 = array[:, 0] - array[:, 2] / 2, array[:, 1] - array[:, 3] / 2
        self.x1, self.y1 = self.x0 + array[:, 2], self.y0 + array[:, 3]
        self.fills = ["#8a8f98"] * len(ids)
        self.tiles = TiledPictures(self.y0, self.y1, lambda painter, members: self._draw_boxes(painter, members))
        self.outline: dict[str, str] = {}
        self.selected: str | None = None
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        self._bounds = QRectF(float(self.x0.min()), float(self.y0.min()), float(self.x1.max() - self.x0.min()),
                              float(self.y1.max() - self.y0.min())) if ids else QRectF()

    def rect_of(self, item_id: str) -> QRectF:
        i = self.index[item_id]
        return QRectF(self.x0[i], self.y0[i], self.x1[i] - self.x0[i], self.y1[i] - self.y0[i])

    def item_at(self, point) -> str | None:
        hits = np.nonzero((self.x0 <= point.x()) & (self.x1 >= point.x()) & (self.y0 <= point.y()) & (self.y1 >= point.y()))[0]
        return self.ids[int(hits[-1])] if len(hits) else None

    def set_fills(self, fills: list[str]) -> None:
        self.fills = fills
        self.tiles.pictures.clear()
        self.update()

    def boundingRect(self) -> QRectF:
        return self._bounds.adjusted(-4, -4, 4, 4)

    def _draw_merged(self, painter: QPainter, chosen, lod: float) -> None:
        """Far out: boxes of one colour that touch on screen (same pixel column, gap under a pixel)
        are drawn as one rectangle — a column of a thousand ops becomes a few bars."""
        colours = np.array([self.fills[i] for i in chosen])
        column = np.floor(self.x0[chosen] * lod)
        order = np.lexsort((self.y0[chosen], column, colours))
        chosen, column, colours = chosen[order], column[order], colours[order]
        x0, y0, x1, y1 = self.x0[chosen], self.y0[chosen], self.x1[chosen], self.y1[chosen]
        gap = 1.0 / lod
        starts = np.ones(len(chosen), dtype=bool)
        starts[1:] = (colours[1:] != colours[:-1]) | (column[1:] != column[:-1]) | (y0[1:] > y1[:-1] + gap)
        index = np.nonzero(starts)[0]
        bottoms = np.maximum.reduceat(y1, index)
        lefts, rights = np.minimum.reduceat(x0, index), np.maximum.reduceat(x1, index)
        painter.setPen(Qt.PenStyle.NoPen)
        for colour in dict.fromkeys(colours[index]):
            painter.setBrush(QColor(str(colour)))
            painter.drawRects([QRectF(lefts[k], y0[i], rights[k] - lefts[k], bottoms[k] - y0[i])
                               for k, i in enumerate(index) if colours[i] == colour])

    def _draw_boxes(self, painter: QPainter, chosen, outlined: bool = True) -> None:
        by_colour: dict[str, list[QRectF]] = {}
        for i in chosen:
            colour = QColor(self.fills[i])
            key = colour.lighter(150).name() if self.kinds[i] == "group" else self.fills[i]
            by_colour.setdefault(key, []).append(QRectF(self.x0[i], self.y0[i], self.x1[i] - self.x0[i], self.y1[i] - self.y0[i]))
        for colour, rects in by_colour.items():
            painter.setPen(QPen(QColor(colour).darker(140), 0) if outlined else Qt.PenStyle.NoPen)
            painter.setBrush(QColor(colour))
            painter.drawRects(rects)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, _widget=None) -> None:
        exposed = option.exposedRect
        chosen = np.nonzero((self.x1 >= exposed.left()) & (self.x0 <= exposed.right())
                            & (self.y1 >= exposed.top()) & (self.y0 <= exposed.bottom()))[0]
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if lod < SMALL_LOD and len(chosen) > PICTURE_ABOVE:
            self._draw_merged(painter, chosen, lod)
        elif len(chosen) > PICTURE_ABOVE:
            self.tiles.paint(painter, exposed)
        else:
            self._draw_boxes(painter, chosen, outlined=lod >= SMALL_LOD)
        marked = [(item, colour, 3) for item, colour in self.outline.items() if item in self.index]
        if self.selected in self.index:
            marked.append((self.selected, "#111111", 3))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        for item, colour, width in marked:
            pen = QPen(QColor(colour), width)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.drawRect(self.rect_of(item))
        if len(chosen) and float((self.x1[chosen[0]] - self.x0[chosen[0]]) * lod) >= LABEL_MIN_PX:
            transform = painter.worldTransform()
            painter.save()
            painter.resetTransform()
            font = QFont()
            font.setPointSizeF(8)
            painter.setFont(font)
            painter.setPen(QColor("#111111"))
            line_height = painter.fontMetrics().height()
            for i in chosen[:MAX_LABELS]:
                rect = transform.mapRect(QRectF(self.x0[i], self.y0[i], self.x1[i] - self.x0[i], self.y1[i] - self.y0[i]))
                label = self.labels[i] if rect.height() >= 2 * line_height else self.labels[i].split("\n")[0]
                painter.drawText(rect.adjusted(4, 0, -4, 0), Qt.AlignmentFlag.AlignCenter, label)
            painter.restore()


class EdgeLayer(QGraphicsItem):
    """All edges in one item: the segments in the exposed area drawn as one batch of lines, or a
    cached picture of all of them when thousands are in view."""

    def __init__(self, edges: list[list[tuple[float, float]]], colour: QColor):
        super().__init__()
        segments = [(a[0], a[1], b[0], b[1]) for points in edges for a, b in zip(points, points[1:])]
        array = np.array(segments, dtype=float).reshape(-1, 4)
        self.ax, self.ay, self.bx, self.by = array.T
        self.pen = QPen(colour, 0)
        self.tiles = TiledPictures(np.minimum(self.ay, self.by), np.maximum(self.ay, self.by), self._record)
        self.setZValue(-0.5)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        if len(array):
            left, top = float(min(self.ax.min(), self.bx.min())), float(min(self.ay.min(), self.by.min()))
            self._bounds = QRectF(left, top, float(max(self.ax.max(), self.bx.max())) - left,
                                  float(max(self.ay.max(), self.by.max())) - top)
        else:
            self._bounds = QRectF()

    def boundingRect(self) -> QRectF:
        return self._bounds.adjusted(-2, -2, 2, 2)

    def _record(self, painter: QPainter, members) -> None:
        painter.setPen(self.pen)
        painter.drawLines(self._lines(members))

    def _lines(self, chosen) -> list[QLineF]:
        return [QLineF(self.ax[i], self.ay[i], self.bx[i], self.by[i]) for i in chosen]

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, _widget=None) -> None:
        exposed = option.exposedRect
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        chosen = np.nonzero((np.maximum(self.ax, self.bx) >= exposed.left()) & (np.minimum(self.ax, self.bx) <= exposed.right())
                            & (np.maximum(self.ay, self.by) >= exposed.top()) & (np.minimum(self.ay, self.by) <= exposed.bottom()))[0]
        if lod < SMALL_LOD:  # far out: an edge shorter than a few pixels joins boxes that already touch
            on_screen = np.hypot(self.bx[chosen] - self.ax[chosen], self.by[chosen] - self.ay[chosen]) * lod
            chosen = chosen[on_screen >= MIN_EDGE_PX]
            painter.setPen(self.pen)
            painter.drawLines(self._lines(chosen))
            return
        if len(chosen) > EDGE_PICTURE_ABOVE:
            self.tiles.paint(painter, exposed)
            return
        painter.setPen(self.pen)
        painter.drawLines(self._lines(chosen))


class FrameItem(QGraphicsItem):
    """The frame of an open group, titled with its module path; double-click folds it."""

    def __init__(self, key: str, rect: QRectF):
        super().__init__()
        self.item_id, self.rect = f"open:{key}", rect
        self.label = key
        self.setZValue(-1)
        self.setToolTip(plain_tip(f"{key} (double-click the frame to fold it)"))

    def boundingRect(self) -> QRectF:
        return self.rect

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, _widget=None) -> None:
        painter.setPen(QPen(QColor("#8a8f98"), 1, Qt.PenStyle.DashLine))
        painter.setBrush(QColor(138, 143, 152, 25))
        painter.drawRoundedRect(self.rect, 8, 8)
        if option.levelOfDetailFromTransform(painter.worldTransform()) > 0.3:
            painter.setPen(QColor("#56606d"))
            painter.drawText(self.rect.adjusted(8, 4, -8, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, self.label)


class QtZoomView(QGraphicsView):
    sigActivated = Signal(str)  # item id double-clicked
    sigClicked = Signal(str)
    sigZoomed = Signal(float)  # the factor, for views that follow this one

    def __init__(self, scene: QGraphicsScene):
        super().__init__(scene)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)  # no antialiasing: thousands of boxes stay fast
        self.setOptimizationFlags(QGraphicsView.OptimizationFlag.DontSavePainterState
                                  | QGraphicsView.OptimizationFlag.DontAdjustForAntialiasing)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.MinimalViewportUpdate)
        self.setCacheMode(QGraphicsView.CacheModeFlag.CacheBackground)

    def wheelEvent(self, event) -> None:
        self.zoom(1.2 if event.angleDelta().y() > 0 else 1 / 1.2)

    def zoom(self, factor: float) -> None:
        self.scale(factor, factor)
        self.sigZoomed.emit(factor)

    def fit(self) -> None:
        """The whole graph in view, but never blown up past its natural size."""
        bounds = self.scene().itemsBoundingRect()
        self.fitInView(bounds, Qt.AspectRatioMode.KeepAspectRatio)
        if self.transform().m11() > 1.0:
            self.resetTransform()
            self.centerOn(bounds.center().x(), bounds.top() + self.viewport().height() / 2)

    def keyPressEvent(self, event) -> None:
        key = event.key()
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom(1.25)
        elif key == Qt.Key.Key_Minus:
            self.zoom(0.8)
        elif key == Qt.Key.Key_0:
            self.fit()
        else:
            super().keyPressEvent(event)

    def _item_at(self, event) -> str | None:
        point = self.mapToScene(event.position().toPoint())
        layer = next((item for item in self.scene().items() if isinstance(item, NodeLayer)), None)
        hit = layer.item_at(point) if layer is not None else None
        if hit:
            return hit
        frame = next((item for item in self.scene().items(point) if isinstance(item, FrameItem)), None)
        return frame.item_id if frame is not None else None

    def mousePressEvent(self, event) -> None:
        super().mousePressEvent(event)
        item = self._item_at(event)
        if item:
            self.sigClicked.emit(item)

    def mouseDoubleClickEvent(self, event) -> None:
        item = self._item_at(event)
        if item:
            self.sigActivated.emit(item)


class QtMinimap(QGraphicsView):
    """The whole graph small, with the main view's visible area drawn on it; click to go there."""

    def __init__(self, scene: QGraphicsScene, main: QtZoomView):
        super().__init__(scene)
        self.main = main
        self.setInteractive(False)
        self.setFixedSize(QSize(220, 160))
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        main.horizontalScrollBar().valueChanged.connect(self.viewport().update)
        main.verticalScrollBar().valueChanged.connect(self.viewport().update)

    def refit(self) -> None:
        self.fitInView(self.scene().itemsBoundingRect(), Qt.AspectRatioMode.KeepAspectRatio)

    def drawForeground(self, painter: QPainter, _rect: QRectF) -> None:
        visible = self.main.mapToScene(self.main.viewport().rect()).boundingRect()
        painter.setPen(QPen(QColor("#d64545"), 0))
        painter.setBrush(QColor(214, 69, 69, 40))
        painter.drawRect(visible)

    def mousePressEvent(self, event) -> None:
        self.main.centerOn(self.mapToScene(event.position().toPoint()))


class QtGraphView(QWidget):
    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.unit = None
        self.graph = None
        self.root = None
        self.expanded: set[str] = set()
        self.visible = None
        self.layer: NodeLayer | None = None
        self._request = 0
        self._pending_reveal: str | None = None
        self.stage = QComboBox()
        self.stage.currentTextChanged.connect(self._on_stage_chosen)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search nodes (regex over name, op, target, shape, source)")
        self.search.returnPressed.connect(self.run_search)
        self.search.setMinimumWidth(260)
        self.overlay = QComboBox()
        self.overlay.addItems(OVERLAYS)
        self.overlay.currentTextChanged.connect(lambda _: self._paint_overlay())
        buttons = []
        for text, slot in (("Fit", lambda: self.view.fit()), ("Upstream", lambda: self.highlight_flow(up=True)),
                           ("Downstream", lambda: self.highlight_flow(up=False)), ("Clear", self._clear_highlight),
                           ("Expand all", self.expand_all), ("Fold all", self.fold_all),
                           ("SVG…", self.ask_export_svg), ("PNG…", self.ask_export_png)):
            button = QPushButton(text)
            button.clicked.connect(slot)
            buttons.append(button)
        bar = QHBoxLayout()
        for widget in (self.stage, self.search, self.overlay, *buttons):
            bar.addWidget(widget)
        bar.setStretch(1, 1)
        self.scene = QGraphicsScene(self)
        self.view = QtZoomView(self.scene)
        self.view.sigActivated.connect(self._on_activated)
        self.view.sigClicked.connect(self._on_clicked)
        self.minimap = QtMinimap(self.scene, self.view)
        self.details = QTextBrowser()
        self.details.setOpenLinks(False)
        self.details.anchorClicked.connect(lambda url: self.model.show_location(url.path(), int(url.fragment() or 0)))
        self.results = QListWidget()
        self.results.itemActivated.connect(lambda item: self.reveal(item.text().split("  ")[0]))
        self.status = QLabel("")
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # parse errors quote the log
        self.status.setWordWrap(True)
        self.legend = QLabel("")
        self.legend.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)  # long legends never widen the window
        side = QVBoxLayout()
        for widget in (self.minimap, self.results, self.details):
            side.addWidget(widget)
        side_widget = QWidget()
        side_widget.setLayout(side)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.view)
        split.addWidget(side_widget)
        split.setSizes([1000, 320])
        layout_ = QVBoxLayout(self)
        layout_.setContentsMargins(0, 0, 0, 0)
        layout_.addLayout(bar)
        self.break_map = QtBreakMap(model)
        layout_.addWidget(self.break_map)
        layout_.addWidget(self.status)
        layout_.addWidget(self.legend)
        layout_.addWidget(split, 1)
        model.sigUnitSelected.connect(self._on_unit_selected)
        model.sigKernelSelected.connect(self._on_kernel_selected)

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
        self.scene.clear()
        self.layer = None
        self.graph = None
        if not stage or self.unit is None or stage not in self.unit.graphs:
            self.status.setText("No graph was recorded for this compile unit.")
            return
        self.status.setText("Parsing and laying out…")
        self._request += 1
        request, unit = self._request, self.unit
        stacks = _module_stacks(unit) if stage == "dynamo" else None

        def prepare():
            graph = unit.graphs[stage].graph
            root = build_groups(graph, node_paths(graph, stacks))
            expanded = initially_expanded(root, len(graph.nodes))
            visible = visible_graph(graph, root, expanded)
            return graph, root, expanded, visible, layout(graph, root, expanded, visible)

        run_in_background(prepare, lambda result: self._show(result) if request == self._request else None,
                          lambda message, _tb: self.status.setText(f"Could not lay out: {message}"), self)

    def _relayout(self) -> None:
        self._request += 1
        request = self._request
        graph, root, expanded = self.graph, self.root, set(self.expanded)

        def prepare():
            visible = visible_graph(graph, root, expanded)
            return graph, root, expanded, visible, layout(graph, root, expanded, visible)

        run_in_background(prepare, lambda result: self._show(result) if request == self._request else None,
                          lambda message, _tb: self.status.setText(f"Could not lay out: {message}"), self)

    def _show(self, prepared) -> None:
        self.graph, self.root, self.expanded, self.visible, placed = prepared
        self.layer = fill_scene(self.scene, self.visible, placed, self.palette().placeholderText().color())
        nodes, folded = len(self.graph.nodes), sum(1 for kind in self.visible.items.values() if kind == "group")
        unreadable = f"; {len(self.graph.unreadable)} line(s) could not be read" if self.graph.unreadable else ""
        if self.graph.empty:
            self.status.setText("Empty graph: Dynamo captured no operations for this unit.")
        else:
            self.status.setText(f"{nodes} nodes, {len(self.visible.items)} items on screen ({folded} folded groups — "
                                f"double-click one to open it); layout: {placed.engine}"
                                + (f" — {'; '.join(dict.fromkeys(placed.notes))}" if placed.notes else "") + unreadable)
        self._paint_overlay()
        self._mark_break_neighbours()
        self.view.fit()
        self.minimap.refit()
        if self._pending_reveal:
            name, self._pending_reveal = self._pending_reveal, None
            self.reveal(name)

    # --- interaction ----------------------------------------------------------------------------
    def _on_activated(self, item_id: str) -> None:
        if item_id.startswith("open:"):  # double-click an open group's frame: fold it again
            key = item_id[len("open:"):]
            self.expanded = {k for k in self.expanded if k != key and not k.startswith(key + "/")}
            self._relayout()
        elif item_id.startswith("group:"):
            self.expanded.add(item_id[len("group:"):])
            self._relayout()
        else:
            node = self.graph.node(item_id)
            if node is not None and node.source:
                self.model.show_location(node.source.file, node.source.line)

    def _on_clicked(self, item_id: str) -> None:
        if item_id.startswith(("group:", "open:")) or self.graph is None:
            return
        node = self.graph.node(item_id)
        if node is None:
            return
        kernels = kernels_of_node(self.unit, node.name)
        times = self.model.loaded.kernel_times if self.model.loaded else {}
        source = (f"<a href='file://{_html(node.source.file)}#{node.source.line}'>{_html(Path(node.source.file).name)}:{node.source.line}</a>"
                  f"<br><code>{_html(node.source.code)}</code>" if node.source else "no source recorded")
        kernel_text = ", ".join(f"{k.name} ({times[k.name].us_per_call:.1f} µs/call)" if k.name in times else k.name
                                for k in kernels) or "—"
        self.details.setHtml(
            f"<b>{_html(node.name)}</b> <i>{node.op}</i><br>target: <code>{_html(node.target)}</code><br>"
            f"args: <code>{_html(node.args[:300])}</code><br>shape {node.shape} dtype {node.dtype} stride {node.stride}"
            f"<br>inputs: {', '.join(node.inputs) or '—'}<br>users: {', '.join(self.graph.users(node.name)) or '—'}"
            f"<br>source: {source}<br>kernel: {_html(kernel_text)}")

    def reveal(self, name: str) -> None:
        """Open the groups holding `name`, then centre on it and select it."""
        owner = self.visible.owner.get(name) if self.visible else None
        if owner and owner.startswith("group:"):
            key = owner[len("group:"):]
            parts = key.split("/")
            self.expanded |= {"/".join(parts[:i]) for i in range(1, len(parts) + 1)}
            self._pending_reveal = name
            self._relayout()
            return
        if self.layer is not None and name in self.layer.index:
            self.layer.selected = name
            self.layer.update()
            self.view.centerOn(self.layer.rect_of(name).center())
            self._on_clicked(name)

    def run_search(self) -> list[str]:
        self.results.clear()
        if self.graph is None:
            return []
        try:
            pattern = re.compile(self.search.text(), re.IGNORECASE)
        except re.error as error:
            self.status.setText(f"Search: not a regular expression ({error})")
            return []
        hits = []
        for node in self.graph.nodes:
            fields = (node.name, node.op, node.target, str(node.shape), node.dtype or "",
                      f"{node.source.file}:{node.source.line}" if node.source else "", node.source.code if node.source else "")
            if any(pattern.search(field) for field in fields):
                hits.append(node.name)
                self.results.addItem(f"{node.name}  {node.target}")
        self.status.setText(f"{len(hits)} node(s) match")
        if hits:
            self.reveal(hits[0])
        return hits

    def highlight_flow(self, up: bool) -> set[str]:
        if self.layer is None or self.layer.selected is None or self.graph is None:
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
        self.layer.outline = {item: "#d64545" for item in owners if item in self.layer.index}
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
        if unit is not self.unit or self.graph is None:
            return
        owners = {self.visible.owner.get(name) for name in kernel.source_nodes if self.graph.node(name) is not None}
        self.layer.outline = {item: "#111111" for item in owners if item in self.layer.index}
        self.layer.update()

    # --- colour ---------------------------------------------------------------------------------
    def _paint_overlay(self) -> None:
        if self.graph is None or self.layer is None:
            return
        mode = self.overlay.currentText()
        times = self.model.loaded.kernel_times if self.model.loaded else {}
        kernel_of = {name: kernel for kernel in (self.unit.kernels if self.unit else []) for name in kernel.source_nodes}
        keys: dict[str, str] = {}
        slowest = max((t.us_per_call for t in times.values()), default=0.0) or 1.0
        fills = []
        for item_id, kind in zip(self.layer.ids, self.layer.kinds):
            node = self.graph.node(item_id) if kind == "node" else None
            if node is None:
                fills.append("#8a8f98")
                continue
            kernel = kernel_of.get(item_id)
            if mode == "kernel time":
                share = times[kernel.name].us_per_call / slowest if kernel and kernel.name in times else None
                fills.append(QColor.fromHsvF(0.0, min(1.0, share), 1.0).name() if share is not None else "#d0d4d9")
                continue
            key = {"dtype": node.dtype or "none", "fused kernel": kernel.name if kernel else "no kernel"}.get(mode, node.op)
            keys.setdefault(key, "#d0d4d9" if key in ("no kernel", "none") else PALETTE[len(keys) % len(PALETTE)])
            fills.append(keys[key])
        self.layer.set_fills(fills)
        if mode == "kernel time":
            self.legend.setText("Colour: kernel time per call, white → red (slowest); grey: not measured")
        else:
            self.legend.setText("Colour by " + mode + ": " + ", ".join(
                f"<span style='color:{colour}'>■</span> {_html(key[:48])}" for key, colour in list(keys.items())[:10]))

    def _mark_break_neighbours(self) -> None:
        """The last ops before a graph break (what the graph returns) and the first after it
        (a resume function's inputs), outlined in the break colour."""
        if self.graph is None or self.unit is None:
            return
        near: set[str] = set()
        if self.unit.breaks:
            output = next((node for node in self.graph.nodes if node.op == "output"), None)
            near |= set(output.inputs) if output else set()
        if (self.unit.function or "").startswith("torch_dynamo_resume_in_"):
            near |= {node.name for node in self.graph.nodes if node.op == "placeholder" and "parameters" not in node.name}
        for name in near:
            owner = self.visible.owner.get(name)
            if self.layer is not None and owner in self.layer.index:
                self.layer.outline.setdefault(owner, "#d9822b")
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
        rect = self.scene.itemsBoundingRect()
        generator = QSvgGenerator()
        generator.setFileName(path)
        generator.setSize(rect.size().toSize())
        generator.setViewBox(rect)
        painter = QPainter(generator)
        self.scene.render(painter, QRectF(0, 0, rect.width(), rect.height()), rect)
        painter.end()

    def export_png(self, path: str, scale: float = 1.0) -> list[str]:
        """The whole graph at `scale`; larger than one tile, it is written as numbered tiles
        (`graph_r0_c1.png`…), so there is no size cap."""
        rect = self.scene.itemsBoundingRect()
        width, height = int(rect.width() * scale) + 1, int(rect.height() * scale) + 1
        written = []
        rows, columns = (height + TILE - 1) // TILE, (width + TILE - 1) // TILE
        for row in range(rows):
            for column in range(columns):
                tile_w, tile_h = min(TILE, width - column * TILE), min(TILE, height - row * TILE)
                image = QImage(tile_w, tile_h, QImage.Format.Format_ARGB32)
                image.fill(QColor("white"))
                painter = QPainter(image)
                painter.setRenderHint(QPainter.RenderHint.Antialiasing)
                source = QRectF(rect.left() + column * TILE / scale, rect.top() + row * TILE / scale,
                                tile_w / scale, tile_h / scale)
                self.scene.render(painter, QRectF(0, 0, tile_w, tile_h), source)
                painter.end()
                name = path if rows * columns == 1 else str(Path(path).with_name(f"{Path(path).stem}_r{row}_c{column}.png"))
                image.save(name)
                written.append(name)
        return written


def fill_scene(scene: QGraphicsScene, visible, placed, edge_colour: QColor) -> NodeLayer:
    """Put a laid-out graph into `scene` (frames of open groups, edges, boxes); returns the box layer."""
    scene.clear()
    for key, (x, y, w, h) in placed.frames.items():
        scene.addItem(FrameItem(key, QRectF(x, y, w, h)))
    scene.addItem(EdgeLayer(list(placed.edges.values()), edge_colour))
    ids = list(placed.boxes)
    layer = NodeLayer(ids, [visible.items[i] for i in ids], [visible.labels[i] for i in ids],
                      [placed.boxes[i] for i in ids])
    scene.addItem(layer)
    scene.setSceneRect(scene.itemsBoundingRect().adjusted(-40, -40, 40, 40))
    return layer


def _module_stacks(unit) -> dict[str, list[str]] | None:
    """node → module path list, from the structured graph a capture recorded (exact nn_module_stack)."""
    recorded = next((a for a in unit.artifacts if a.name == "structured_graph"), None)
    if recorded is None:
        return None
    try:  # a session may come from anyone: any shape of JSON, at any depth, falls back to no stacks
        nodes = loads_json(recorded.text)["nodes"]
        return {node["name"]: [entry[1] for entry in node.get("nn_module_stack") or []] for node in nodes}
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None


def _html(text) -> str:
    return escape("" if text is None else str(text))
