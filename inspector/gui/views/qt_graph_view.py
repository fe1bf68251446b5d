"""FX graph view: the selected unit's graph at any stage, folded into groups (modules, else source
locations) and laid out by Graphviz off the UI thread; zoom, pan, fit, minimap; regex search; node
details with source line and kernel; upstream/downstream highlight; colour overlays; nodes next to a
graph break outlined; export to SVG and PNG."""

from __future__ import annotations

import gc
import math
import re
from collections.abc import Mapping
from functools import lru_cache
from collections import deque
from pathlib import Path

from PySide6.QtCore import QEvent, QLineF, QRectF, QSize, Qt, Signal
import numpy as np
from PySide6.QtGui import QColor, QFont, QIcon, QImage, QPainter, QPalette, QPen, QPicture, QPixmap
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import (
    QApplication, QComboBox, QFileDialog, QGraphicsItem, QGraphicsScene, QGraphicsView, QHBoxLayout, QLabel, QSizePolicy,
    QLineEdit, QListWidget, QListWidgetItem, QMenu, QPushButton, QSplitter, QStyleOptionGraphicsItem, QTextBrowser, QToolTip,
    QVBoxLayout, QWidget,
)

from inspector.core.graphs.graph_hierarchy import all_group_keys, build_groups, initially_expanded, stage_paths
from inspector.core.graphs.graph_layout import PAD, LaidOutGraph, lay_out_view
from inspector.core.graphs.item_ids import ItemKind, is_group, item_key, item_kind, open_item, toggled
from inspector.core.analysis.kernel_index import kernels_by_node, kernels_of_node, names_stage, naming_stage
from inspector.gui.qt_background import LatestRequest
from inspector.gui.qt_session_model import QtSessionModel
from inspector.gui.views.qt_break_map import QtBreakMap
from inspector.core.readers import json_codec
from inspector.gui.qt_plain_text import html_text, plain_tip

OVERLAYS = ("op kind", "dtype", "fused kernel", "kernel time")
SEARCH_MIN_PX = 180  # the search box's least width: a regex like `sum|gt|addmm` and the placeholder fit
# what the node details pane says while no node is picked: an empty white pane does not say it is waiting for a click
DETAILS_HINT = ("Click a node to see its op, target, arguments, shape, dtype and stride, its inputs and users, "
                "its source line and the kernel it became.")
PALETTE = ("#2b7bb9", "#2e9d4f", "#e0a526", "#8e5bb6", "#d9822b", "#17a2b8", "#c0392b", "#7f8c8d", "#16a085", "#9b59b6")
TILE = 8192  # pixels per PNG tile on export
LABEL_MIN_PX = 40  # a box gets its text when it is at least this wide on screen
MAX_LABELS = 200
PICTURE_ABOVE = 1500  # boxes in view above which recorded cells (or, far out, merged boxes) are drawn
EDGE_PICTURE_ABOVE = 300  # lines in view above which recorded cells are replayed
CELL = 1500.0  # scene units a side of a recorded cell
SMALL_LOD = 0.2  # below this zoom, boxes lose their outline
FAR_EDGE_PX = 4.0  # far out, edges between groups shorter than this on screen are left out
FADE_LOD = 0.5  # below this zoom, edges between groups are drawn faint
NODE_ROLE = Qt.ItemDataRole.UserRole  # a search hit's node name
READABLE_SCALE = 0.6  # box labels at 7 px or more: the smallest scale a graph opens at
ARROW = 7.0  # scene units of an arrowhead's side
SELECTED_COLOUR, NEIGHBOUR_COLOUR = "#1f5fd1", "#e07b00"
BREAK_NEIGHBOUR_COLOUR, TRACED_COLOUR, KERNEL_NODES_COLOUR = "#8e44ad", "#d64545", "#111111"
# What each outline means, for the legend under the overlay's: one colour, one meaning.
OUTLINES = ((SELECTED_COLOUR, "selected"), (NEIGHBOUR_COLOUR, "its inputs and users"),
            (BREAK_NEIGHBOUR_COLOUR, "next to a graph break"), (TRACED_COLOUR, "traced up or down (u / d)"),
            (KERNEL_NODES_COLOUR, "the chosen kernel's nodes"))
TITLE_ROOM = PAD * 1.5  # scene units above an open group's content, where its title goes
# Op kinds, first match wins, each with a fixed colour: the same kind looks the same in every graph and fold state.
OP_KINDS = (
    ("input / weight", "#9fc5e8", re.compile(r"^$")),  # placeholders and get_attr, by op (see op_kind)
    ("output", "#cc4125", re.compile(r"^$")),
    ("matmul / linear", "#3d78d8", re.compile(r"(^|\.)(_?(add)?b?mm|linear|matmul|conv\w*|baddbmm|einsum|addmm)(\.|$)")),
    ("attention", "#8e5bb6", re.compile(r"scaled_dot_product|attention")),
    ("normalisation", "#16a085", re.compile(r"norm|var_mean|rsqrt")),
    ("reduction / softmax", "#d9822b", re.compile(r"(^|\.)_?(sum|mean|amax|amin|max|min|softmax|log_softmax|argmax|cumsum|any|all)(\.|$)")),
    ("view / layout", "#c9ccd1", re.compile(r"(^|\.)_?(view|reshape|permute|transpose|expand|unsqueeze|squeeze|slice|select|getitem|"
                                            r"split\w*|cat|stack|clone|contiguous|t|unsafe_view|flatten|narrow|chunk|alias|as_strided|"
                                            r"to|copy_?|size|dim|float|type_as)(\.|$)")),
    ("creation", "#e0c341", re.compile(r"(^|\.)_?(arange|zeros|ones|full|empty\w*|new_\w+|scalar_tensor|randn?|iota)(\.|$)")),
    ("elementwise", "#6aa84f", re.compile(r".")),
)
GROUP_FILL, NO_KERNEL, UNMEASURED = "#8a8f98", "#e3e6ea", "#b8bec7"


class TiledPictures:
    """Drawing commands cut into square cells of the scene (CELL units a side), each recorded once into
    a QPicture: a frame replays only the cells it shows, in C++, whatever the zoom. Each shape belongs to
    the cell of its top-left corner and must be smaller than a cell (the owner draws larger ones itself),
    so a frame replays the cells it touches and one more row and column up and left. The owner passes
    its drawing function with each call rather than this holding it: no reference cycle, so a scene's
    layers are freed as soon as the next layout replaces them, even once frozen out of the collector's
    sight."""

    def __init__(self, left, top):
        column, row = np.floor(np.asarray(left) / CELL).astype(np.int64), np.floor(np.asarray(top) / CELL).astype(np.int64)
        self.column0, self.row0 = (int(column.min()), int(row.min())) if len(column) else (0, 0)
        self.columns = int(column.max()) - self.column0 + 1 if len(column) else 1
        key = (row - self.row0) * self.columns + (column - self.column0)
        self.order = np.argsort(key, kind="stable")
        self.keys = key[self.order]
        self.pictures: dict[int, QPicture] = {}

    def paint(self, painter: QPainter, exposed: QRectF, draw) -> None:
        first_column = max(self.column0, int(exposed.left() // CELL) - 1)
        last_column = min(self.column0 + self.columns - 1, int(exposed.right() // CELL))
        for row in range(max(self.row0, int(exposed.top() // CELL) - 1), int(exposed.bottom() // CELL) + 1):
            for column in range(first_column, last_column + 1):
                cell = (row - self.row0) * self.columns + (column - self.column0)
                picture = self.pictures.get(cell)
                if picture is None:
                    low, high = np.searchsorted(self.keys, (cell, cell + 1))
                    picture = self.pictures[cell] = QPicture()
                    if high > low:
                        recorder = QPainter(picture)
                        draw(recorder, self.order[low:high])
                        recorder.end()
                if not picture.isNull():
                    painter.drawPicture(0, 0, picture)


class NodeLayer(QGraphicsItem):
    """Every node and folded group of the view in one item, painted from arrays: only boxes in the
    exposed area, batched by colour, text only where a box is wide enough on screen to hold it, and a
    cached picture when thousands are in view — so a frame costs about the same at 100 or 10,000.
    A box may have several fills (a node split over several kernels): drawn as vertical stripes."""

    def __init__(self, ids: list[str], kinds: list[str], labels: list[str], rects: list[tuple[float, float, float, float]]):
        super().__init__()
        self.ids, self.kinds, self.labels = ids, kinds, labels
        self.index = {item: position for position, item in enumerate(ids)}
        array = np.array(rects, dtype=float).reshape(-1, 4)
        self.x0, self.y0 = array[:, 0] - array[:, 2] / 2, array[:, 1] - array[:, 3] / 2
        self.x1, self.y1 = self.x0 + array[:, 2], self.y0 + array[:, 3]
        self.rects = list(map(QRectF, self.x0.tolist(), self.y0.tolist(), array[:, 2].tolist(),
                              array[:, 3].tolist()))  # built once, drawn many times
        self.fills: list[list[str] | str] = [["#8a8f98"]] * len(ids)
        self.stripes: list[list[str]] = self.fills  # each box's colours, as a list
        self.primary = np.zeros(len(ids), dtype=np.int32)  # each box's first fill (into self.colours), far out
        self.colours = [QColor("#8a8f98")]
        self._merged: list | None = None  # bars of the far-out drawing
        self.tiles = TiledPictures(self.x0, self.y0)
        self.outline: dict[str, str] = {}
        self.selected: str | None = None
        self.neighbours: set[str] = set()  # items feeding or fed by the selected one
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        self._bounds = QRectF(float(self.x0.min()), float(self.y0.min()), float(self.x1.max() - self.x0.min()),
                              float(self.y1.max() - self.y0.min())) if ids else QRectF()

    def rect_of(self, item_id: str) -> QRectF:
        return QRectF(self.rects[self.index[item_id]])

    def item_at(self, point) -> str | None:
        hits = np.nonzero((self.x0 <= point.x()) & (self.x1 >= point.x()) & (self.y0 <= point.y()) & (self.y1 >= point.y()))[0]
        return self.ids[int(hits[-1])] if len(hits) else None

    def set_fills(self, fills: list[list[str] | str]) -> None:
        """One colour per box, or several (stripes); `fills` keeps what was given."""
        self.fills = fills
        self.stripes = [[fill] if isinstance(fill, str) else fill for fill in fills]
        self._merged = None
        names, self.primary = np.unique(np.array([fill[0] for fill in self.stripes] or [GROUP_FILL]), return_inverse=True)
        self.primary = self.primary[:len(self.stripes)].astype(np.int32)
        self.colours = [QColor(str(name)) for name in names]
        self.tiles.pictures.clear()
        self.update()

    def boundingRect(self) -> QRectF:
        return self._bounds.adjusted(-4, -4, 4, 4)

    def _draw_merged(self, painter: QPainter, exposed: QRectF) -> None:
        """Far out (below SMALL_LOD): boxes of one colour that touch (same column, gap under a pixel
        at SMALL_LOD, so under a pixel at every zoom below it) are drawn as one rectangle without outline.
        Worked out once for all far-out zooms, so zooming and panning far out only cull and draw."""
        if self._merged is None:
            self._merged = _long_lived(self._merge(SMALL_LOD))
        left, top, right, bottom = exposed.left(), exposed.top(), exposed.right(), exposed.bottom()
        painter.setPen(Qt.PenStyle.NoPen)
        for colour, rects, (x0, y0, x1, y1) in self._merged:
            shown = np.nonzero((x1 >= left) & (x0 <= right) & (y1 >= top) & (y0 <= bottom))[0]
            if len(shown):
                painter.setBrush(colour)
                painter.drawRects(rects if len(shown) == len(rects) else [rects[k] for k in shown.tolist()])

    def _merge(self, lod: float) -> list[tuple[QColor, list[QRectF], tuple]]:
        colours = self.primary
        column = np.floor(self.x0 * lod)
        order = np.lexsort((self.y0, column, colours))
        column, colours = column[order], colours[order]
        x0, y0, x1, y1 = self.x0[order], self.y0[order], self.x1[order], self.y1[order]
        starts = np.ones(len(order), dtype=bool)
        starts[1:] = (colours[1:] != colours[:-1]) | (column[1:] != column[:-1]) | (y0[1:] > y1[:-1] + 1.0 / lod)
        index = np.nonzero(starts)[0]
        if not len(index):
            return []
        bottoms = np.maximum.reduceat(y1, index)
        lefts, rights = np.minimum.reduceat(x0, index), np.maximum.reduceat(x1, index)
        run_colours, tops = colours[index], y0[index]
        merged = []
        for colour in np.unique(run_colours).tolist():
            runs = run_colours == colour
            x0, y0, x1, y1 = lefts[runs], tops[runs], rights[runs], bottoms[runs]
            merged.append((self.colours[colour], list(map(QRectF, x0.tolist(), y0.tolist(), (x1 - x0).tolist(),
                                                          (y1 - y0).tolist())), (x0, y0, x1, y1)))
        return merged

    def _draw_boxes(self, painter: QPainter, chosen, outlined: bool = True) -> None:
        by_colour: dict[str, list[QRectF]] = {}
        outlines: list[QRectF] = []
        for i in chosen.tolist():
            fills, rect = self.stripes[i], self.rects[i]
            group = self.kinds[i] == "group"
            if len(fills) == 1 and not group:
                by_colour.setdefault(fills[0], []).append(rect)
                continue
            part = rect.width() / len(fills)
            for k, fill in enumerate(fills):
                key = _lighter(fill) if group else fill
                by_colour.setdefault(key, []).append(QRectF(rect.x() + k * part, rect.y(), part, rect.height()))
            outlines.append(rect)
        for colour, rects in by_colour.items():
            painter.setPen(QPen(QColor(colour).darker(140), 0) if outlined else Qt.PenStyle.NoPen)
            painter.setBrush(QColor(colour))
            painter.drawRects(rects)
        if outlined and outlines:  # one frame around a striped box or a folded group
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QPen(QColor("#3d4450"), 0))
            painter.drawRects(outlines)

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, _widget=None) -> None:
        exposed = option.exposedRect
        chosen = np.nonzero((self.x1 >= exposed.left()) & (self.x0 <= exposed.right())
                            & (self.y1 >= exposed.top()) & (self.y0 <= exposed.bottom()))[0]
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if lod < SMALL_LOD and len(chosen) > PICTURE_ABOVE:
            self._draw_merged(painter, exposed)
        elif len(chosen) > PICTURE_ABOVE:
            self.tiles.paint(painter, exposed, self._draw_boxes)
        else:
            self._draw_boxes(painter, chosen, outlined=lod >= SMALL_LOD)
        self._draw_marks(painter)
        wide = chosen[(self.x1[chosen] - self.x0[chosen]) * lod >= LABEL_MIN_PX]
        if len(wide) and len(wide) <= MAX_LABELS * 4:
            self._draw_labels(painter, wide, lod)

    def _draw_marks(self, painter: QPainter) -> None:
        """Outlines (highlights, break neighbours), the selected box's inputs and users, and the selected
        box itself, thick and tinted: all cosmetic pens, so they read at any zoom."""
        marked = [(item, colour, 3) for item, colour in self.outline.items() if item in self.index]
        marked += [(item, NEIGHBOUR_COLOUR, 3) for item in self.neighbours if item in self.index]
        painter.setBrush(Qt.BrushStyle.NoBrush)
        for item, colour, width in marked:
            pen = QPen(QColor(colour), width)
            pen.setCosmetic(True)
            painter.setPen(pen)
            painter.drawRect(self.rect_of(item))
        if self.selected in self.index:
            pen = QPen(QColor(SELECTED_COLOUR), 4)
            pen.setCosmetic(True)
            painter.setPen(pen)
            tint = QColor(SELECTED_COLOUR)
            tint.setAlpha(60)
            painter.setBrush(tint)
            painter.drawRect(self.rect_of(self.selected))

    def _draw_labels(self, painter: QPainter, chosen, lod: float) -> None:
        """Text in screen pixels that grows with the zoom (7–16 px), each line elided in the middle
        ("l_self_mod…weight_") to the box's width, so both ends of a name stay readable."""
        transform = painter.worldTransform()
        painter.save()
        painter.resetTransform()
        font = QFont()
        font.setPixelSize(int(min(16, max(7, 11 * lod))))
        painter.setFont(font)
        painter.setPen(QColor("#111111"))
        metrics = painter.fontMetrics()
        line_height = metrics.height()
        for i in chosen[:MAX_LABELS].tolist():
            rect = transform.mapRect(self.rects[i])
            lines = self.labels[i].split("\n")
            lines = lines[:max(1, int(rect.height() // line_height))]
            width = int(rect.width()) - 6
            text = "\n".join(metrics.elidedText(line, Qt.TextElideMode.ElideMiddle, width) for line in lines)
            painter.drawText(rect.adjusted(3, 0, -3, 0), Qt.AlignmentFlag.AlignCenter, text)
        painter.restore()


class EdgeLayer(QGraphicsItem):
    """All edges in one item, each ending in an arrowhead: edges inside a group follow dot's own route;
    edges between groups are straight and drawn faint when zoomed out, so the structure of each group
    stays readable. Segments in the exposed area are drawn as one batch of lines, or, when hundreds are in
    view, short ones replayed from cached pictures of cells of the scene and long ones (a rotary embedding
    or attention mask feeding every layer) drawn from one list, so no cell records a line that crosses
    the whole graph. Far out only the edges between groups are drawn, without heads."""

    def __init__(self, edges: list[list[tuple[float, float]]], routed: list[bool], colour: QColor):
        super().__init__()
        self.segments, self.cross, self.arrow = _segments(edges, routed)
        array = self.segments
        self.ax, self.ay, self.bx, self.by = array.T
        self.x0, self.x1 = np.minimum(self.ax, self.bx), np.maximum(self.ax, self.bx)
        self.y0, self.y1 = np.minimum(self.ay, self.by), np.maximum(self.ay, self.by)
        short = (self.x1 - self.x0 < CELL) & (self.y1 - self.y0 < CELL)
        self.short = np.nonzero(short)[0]
        self.long = _Culled(self, np.nonzero(~short)[0])  # drawn directly, never recorded into cells
        self.far = _Culled(self, np.nonzero(self.cross & ~self.arrow)[0])  # far out: edges between groups, no heads
        self.pen = QPen(colour, 0)
        faint = QColor(colour)  # blended with white beforehand: an opaque pen draws long lines much faster
        faint.setRgbF(*(0.3 * c + 0.7 for c in (faint.redF(), faint.greenF(), faint.blueF())))
        self.faint_pen = QPen(faint, 0)
        self.tiles = TiledPictures(self.x0[self.short], self.y0[self.short])
        self.setZValue(-0.5)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        if len(array):
            left, upper = float(self.x0.min()), float(self.y0.min())
            self._bounds = QRectF(left, upper, float(self.x1.max()) - left, float(self.y1.max()) - upper)
        else:
            self._bounds = QRectF()

    def boundingRect(self) -> QRectF:
        return self._bounds.adjusted(-2, -2, 2, 2)

    def _lines(self, chosen) -> list[QLineF]:
        """QLineFs made when drawn (once per recorded cell), not for all segments up front: building
        400k of them cost a second when everything was opened."""
        return list(map(QLineF, *self.segments[chosen].T.tolist()))

    def _record(self, painter: QPainter, members) -> None:
        self._draw(painter, self.short[members], faint_cross=True)

    def _draw(self, painter: QPainter, chosen, faint_cross: bool) -> None:
        cross = self.cross[chosen]
        for pen, part in ((self.faint_pen if faint_cross else self.pen, chosen[cross]), (self.pen, chosen[~cross])):
            if len(part):
                painter.setPen(pen)
                painter.drawLines(self._lines(part))

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, _widget=None) -> None:
        exposed = option.exposedRect
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if lod < SMALL_LOD:  # far out, boxes are a few pixels: only the edges between groups, faint, no heads
            self.far.draw(painter, exposed, self.faint_pen, self.faint_pen, shortest=FAR_EDGE_PX / lod)
            return
        chosen = np.nonzero((self.x1 >= exposed.left()) & (self.x0 <= exposed.right())
                            & (self.y1 >= exposed.top()) & (self.y0 <= exposed.bottom()))[0]
        if len(chosen) > EDGE_PICTURE_ABOVE:  # many in view: short ones from the recorded cells (cross-group faint)
            self.tiles.paint(painter, exposed, self._record)
            self.long.draw(painter, exposed, self.faint_pen, self.pen)
            return
        self._draw(painter, chosen, faint_cross=lod < FADE_LOD)


def _segments(edges: list[list[tuple[float, float]]], routed: list[bool]):
    """Every edge's polyline cut into segments (zero-length ones left out), then a V at each edge's head
    along its last segment: (segments as x0, y0, x1, y1 rows; whether each belongs to an edge between
    groups; whether it is part of an arrowhead). With arrays, not a loop: 400k segments on a 54k-node graph."""
    counts = np.fromiter(map(len, edges), dtype=np.int64, count=len(edges))
    points = np.array([point for polyline in edges for point in polyline], dtype=float).reshape(-1, 2)
    owner = np.repeat(np.arange(len(edges)), counts)
    moving = np.nonzero((owner[:-1] == owner[1:]) & np.any(points[:-1] != points[1:], axis=1))[0]
    lines, owner = np.hstack([points[moving], points[moving + 1]]), owner[moving]
    last = np.ones(len(owner), dtype=bool)
    last[:-1] = owner[:-1] != owner[1:]
    ax, ay, bx, by = lines[last].T
    length = np.maximum(np.hypot(bx - ax, by - ay), 1e-6)
    dx, dy = (bx - ax) / length, (by - ay) / length
    heads = [np.column_stack([bx - ARROW * dx + side * ARROW * 0.45 * dy, by - ARROW * dy - side * ARROW * 0.45 * dx, bx, by])
             for side in (1, -1)]
    between = ~np.array(routed, dtype=bool).reshape(-1)[owner] if len(owner) else np.zeros(0, dtype=bool)
    return (np.vstack([lines, *heads]).reshape(-1, 4), np.concatenate([between, between[last], between[last]]),
            np.concatenate([np.zeros(len(lines), dtype=bool), np.ones(2 * len(ax), dtype=bool)]))


class _Culled:
    """Some of an EdgeLayer's segments, drawn directly with only those crossing the exposed area (and,
    far out, only those at least a few pixels long); their QLineFs made on the first frame that draws them."""

    def __init__(self, layer: EdgeLayer, members):
        self.members, self.cross = members, layer.cross[members]
        self.x0, self.y0, self.x1, self.y1 = layer.x0[members], layer.y0[members], layer.x1[members], layer.y1[members]
        self.length = np.maximum(self.x1 - self.x0, self.y1 - self.y0)
        self.segments, self.lines = layer.segments[members], None  # not the layer itself: no reference cycle

    def draw(self, painter: QPainter, exposed: QRectF, cross_pen: QPen, pen: QPen, shortest: float = 0.0) -> None:
        shown = np.nonzero((self.x1 >= exposed.left()) & (self.x0 <= exposed.right()) & (self.y1 >= exposed.top())
                           & (self.y0 <= exposed.bottom()) & (self.length >= shortest))[0]
        if not len(shown):
            return
        if self.lines is None:
            self.lines = _long_lived(list(map(QLineF, *self.segments.T.tolist())))
        cross = self.cross[shown]
        for line_pen, part in ((cross_pen, shown[cross]), (pen, shown[~cross])):
            if len(part):
                painter.setPen(line_pen)
                painter.drawLines([self.lines[k] for k in part.tolist()])


def _frame_shade(base: QColor, level: int, dark: bool) -> QColor:
    """The fill of a module frame `level` deep: a shade further from the background per level."""
    if dark:
        return QColor.fromRgbF(*(min(1.0, c + 0.045 * (level + 1)) for c in (base.redF(), base.greenF(), base.blueF())))
    return QColor.fromRgbF(*(1.0 - 0.035 * (level + 1) * tint for tint in (1.0, 0.98, 0.94)))


class FrameLayer(QGraphicsItem):
    """The frames of all open groups in one item, titled with their module paths (double-click a frame
    to fold it): far out, plain tinted rectangles drawn as one batch; closer, rounded dashed frames with
    titles in screen pixels that grow with the zoom, only for frames in view."""

    def __init__(self, frames: dict[str, tuple[float, float, float, float]]):
        super().__init__()
        self.keys = list(frames)
        array = np.array([frames[key] for key in self.keys], dtype=float).reshape(-1, 4)
        self.x0, self.y0 = array[:, 0], array[:, 1]
        self.x1, self.y1 = self.x0 + array[:, 2], self.y0 + array[:, 3]
        self.depth = np.array([key.count("/") for key in self.keys], dtype=int)
        self.rects = list(map(QRectF, self.x0.tolist(), self.y0.tolist(), array[:, 2].tolist(), array[:, 3].tolist()))
        # opaque fills, a shade further from the background per level (parents are drawn first): no alpha
        # blending of large areas; on a dark palette lighter per level, on a light one darker
        base = QApplication.palette().color(QPalette.ColorRole.Base)
        self.dark = base.lightnessF() < 0.5
        self.title_colour = QApplication.palette().color(QPalette.ColorRole.Text) if self.dark else QColor("#2d3440")
        self.shades = [_frame_shade(base, level, self.dark) for level in range(12)]
        self.setZValue(-1)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption)
        self._bounds = QRectF(float(self.x0.min()), float(self.y0.min()), float(self.x1.max() - self.x0.min()),
                              float(self.y1.max() - self.y0.min())) if self.keys else QRectF()

    def boundingRect(self) -> QRectF:
        return self._bounds

    def _shade(self, i: int) -> QColor:
        return self.shades[min(int(self.depth[i]), len(self.shades) - 1)]

    def frame_at(self, point) -> str | None:
        """The item id of the innermost open group whose frame holds `point`."""
        hits = np.nonzero((self.x0 <= point.x()) & (self.x1 >= point.x()) & (self.y0 <= point.y()) & (self.y1 >= point.y()))[0]
        if not len(hits):
            return None
        innermost = hits[np.argmin((self.x1[hits] - self.x0[hits]) * (self.y1[hits] - self.y0[hits]))]
        return open_item(self.keys[int(innermost)])

    def paint(self, painter: QPainter, option: QStyleOptionGraphicsItem, _widget=None) -> None:
        exposed = option.exposedRect
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        chosen = np.nonzero((self.x1 >= exposed.left()) & (self.x0 <= exposed.right())
                            & (self.y1 >= exposed.top()) & (self.y0 <= exposed.bottom())
                            & ((self.x1 - self.x0) * lod >= 4))[0]
        if lod < SMALL_LOD or len(chosen) > 300:
            painter.setPen(Qt.PenStyle.NoPen)
            depth = self.depth[chosen]
            for level in np.unique(depth).tolist():  # parents first, one batch per level
                painter.setBrush(self.shades[min(level, len(self.shades) - 1)])
                painter.drawRects([self.rects[i] for i in chosen[depth == level].tolist()])
            return
        chosen = chosen.tolist()
        painter.setPen(QPen(QColor("#8a8f98"), 0, Qt.PenStyle.DashLine))
        for i in chosen:
            painter.setBrush(self._shade(i))
            painter.drawRoundedRect(self.rects[i], 8, 8)
        size = min(18.0, max(9.0, 13 * lod), TITLE_ROOM * lod - 2)  # grows with the zoom, within the frame's top margin
        if size < 7:
            return
        transform = painter.worldTransform()
        painter.save()
        painter.resetTransform()
        font = QFont()
        font.setPixelSize(int(max(7.0, size)))
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(self.title_colour)
        metrics = painter.fontMetrics()
        for i in chosen:  # the title in screen pixels, bold, elided in the middle to the frame's width
            screen = transform.mapRect(self.rects[i])
            title = metrics.elidedText(self.keys[i], Qt.TextElideMode.ElideMiddle, int(screen.width()) - 12)
            painter.drawText(screen.adjusted(6, 2, -6, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, title)
        painter.restore()


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
        self.describe = None  # item id → hover text (rich text), set by the owner

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

    def open_readable(self) -> None:
        """How a graph first shows: whole when that leaves its labels readable, else at the smallest
        readable scale from its top (its inputs), to scroll or Fit from (a whole 160-node graph was a
        speck until Fit)."""
        self.fit()
        if self.transform().m11() < READABLE_SCALE:
            bounds = self.scene().itemsBoundingRect()
            self.resetTransform()
            self.scale(READABLE_SCALE, READABLE_SCALE)
            self.centerOn(bounds.center().x(), bounds.top() + self.viewport().height() / (2 * READABLE_SCALE))

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

    def viewportEvent(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip and self.describe is not None:
            item = self.item_at(event.pos())
            text = self.describe(item) if item else ""
            if text:
                QToolTip.showText(event.globalPos(), plain_tip(text), self.viewport())
            else:
                QToolTip.hideText()
            return True
        return super().viewportEvent(event)

    def _item_at(self, event) -> str | None:
        return self.item_at(event.position().toPoint())

    def item_at(self, position) -> str | None:
        """The box or open group's frame under a viewport position."""
        point = self.mapToScene(position)
        layer = next((item for item in self.scene().items() if isinstance(item, NodeLayer)), None)
        hit = layer.item_at(point) if layer is not None else None
        if hit:
            return hit
        frames = next((item for item in self.scene().items() if isinstance(item, FrameLayer)), None)
        return frames.frame_at(point) if frames is not None else None

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
        self.setMinimumSize(QSize(160, 120))
        self.setMaximumHeight(200)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        main.horizontalScrollBar().valueChanged.connect(self.viewport().update)
        main.verticalScrollBar().valueChanged.connect(self.viewport().update)

    def refit(self) -> None:
        """Always the whole graph: refitted after each layout and whenever the minimap's size changes."""
        self.fitInView(self.scene().sceneRect(), Qt.AspectRatioMode.KeepAspectRatio)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.refit()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.refit()

    def drawForeground(self, painter: QPainter, _rect: QRectF) -> None:
        visible = self.main.mapToScene(self.main.viewport().rect()).boundingRect()
        painter.setPen(QPen(QColor("#d64545"), 0))
        painter.setBrush(QColor(214, 69, 69, 40))
        painter.drawRect(visible)

    def mousePressEvent(self, event) -> None:
        self.main.centerOn(self.mapToScene(event.position().toPoint()))


class QtNodeDetails(QTextBrowser):
    """The clicked node's details; while there are none (before a click, or cleared for another unit or
    stage) it says what a click shows. Painted here: QTextEdit cuts its own placeholder to one line."""

    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        if self.document().isEmpty():
            painter = QPainter(self.viewport())
            painter.setPen(self.palette().placeholderText().color())
            margin = round(self.document().documentMargin())
            painter.drawText(self.viewport().rect().adjusted(margin, margin, -margin, -margin),
                             Qt.AlignmentFlag.AlignTop | Qt.TextFlag.TextWordWrap, DETAILS_HINT)


def menu_button(text: str, actions) -> QPushButton:
    """A push button that opens a menu of (text, slot) actions."""
    button = QPushButton(text)
    menu = QMenu(button)
    for label, slot in actions:
        menu.addAction(label, slot)
    button.setMenu(menu)
    return button


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
        self._layouts = LatestRequest(self)  # only the latest graph, stage and fold state is shown
        self._pending_reveal: str | None = None
        self._search_again = False  # a search was on show when the graph changed: run it on the new graph
        self._paths: dict[str, tuple[str, ...]] = {}  # node → module path of the graph shown
        self._overlay = None  # (graph, mode) → overlay_colours(), kept while groups fold and open
        self.stage = QComboBox()
        self.stage.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.stage.setSizePolicy(QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Fixed)  # never cut ("post_gra"): the search box gives way
        self.stage.currentTextChanged.connect(self._on_stage_chosen)
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search nodes (regex)")
        self.search.setToolTip("A regular expression matched against each node's name, op, target, shape and source line")
        self.search.returnPressed.connect(self.run_search)
        self.search.setMinimumWidth(SEARCH_MIN_PX)
        self.overlay = QComboBox()
        self.overlay.addItems(OVERLAYS)
        self.overlay.currentTextChanged.connect(lambda _: self._paint_overlay())
        buttons = []
        for text, slot in (("Fit", lambda: self.view.fit()), ("Upstream", lambda: self.highlight_flow(up=True)),
                           ("Downstream", lambda: self.highlight_flow(up=False)), ("Clear", self._clear_highlight)):
            button = QPushButton(text)
            button.clicked.connect(slot)
            buttons.append(button)
        # the rarer actions two to a menu button, so the toolbar fits beside the Session column at 1280 px
        self.groups = menu_button("Groups", (("Expand every module group", self.expand_all),
                                             ("Fold every module group", self.fold_all)))
        self.export = menu_button("Export", (("SVG (vector)…", self.ask_export_svg), ("PNG (image)…", self.ask_export_png)))
        bar = QHBoxLayout()
        for widget in (self.stage, self.search, self.overlay, *buttons, self.groups, self.export):
            bar.addWidget(widget)
        bar.setStretch(1, 1)
        self.scene = QGraphicsScene(self)
        self.view = QtZoomView(self.scene)
        self.view.sigActivated.connect(self._on_activated)
        self.view.sigClicked.connect(self._on_clicked)
        self.minimap = QtMinimap(self.scene, self.view)
        self.details = QtNodeDetails()
        self.details.setOpenLinks(False)
        self.details.anchorClicked.connect(lambda url: self.model.show_location(url.path(), int(url.fragment() or 0)))
        self.results = QListWidget()
        self.results.itemActivated.connect(lambda item: self.reveal(item.data(NODE_ROLE)))
        self.status = QLabel("")
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # parse errors quote the log
        self.status.setWordWrap(True)
        self.view.describe = self.hover_text
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
        side = QSplitter(Qt.Orientation.Vertical)
        for widget in (self.minimap, legend_box, self.results, self.details):
            side.addWidget(widget)
        side.setStretchFactor(3, 3)
        side.setSizes([170, 170, 120, 500])
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
        layout_.addWidget(split, 1)
        model.sigUnitSelected.connect(self._on_unit_selected)
        model.sigKernelSelected.connect(self._on_kernel_selected)

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
            stacks = _module_stacks(unit)
            graph = unit.graphs[stage].graph
            graphs = StageGraphs(unit)
            paths = stage_paths(graphs, stage, stacks)  # parses only the stages it links through
            gc.freeze()  # the parsed graphs live as long as the session: later collections skip them (2× faster here)
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
        self.graph, self.root, self.expanded, self.visible = laid_out.graph, laid_out.root, laid_out.expanded, laid_out.visible
        self._paths, placed = laid_out.paths, laid_out.placed
        self.layer = fill_scene(self.scene, self.visible, placed, self.palette().placeholderText().color())
        gc.freeze()  # the layout and the scene's arrays (acyclic: freed by reference counting on the next layout)
        # stay out of the collector's full passes, which otherwise stall a frame for ~200 ms on a 50k-node graph
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
        node = self.graph.node(item_id)
        if node is None:
            return
        kernels = kernels_of_node(self.unit, node.name, self.stage.currentText())
        times = self.model.loaded.kernel_times if self.model.loaded else {}
        source = (f"<a href='file://{html_text(node.source.file)}#{node.source.line}'>{html_text(Path(node.source.file).name)}:{node.source.line}</a>"
                  f"<br><code>{html_text(node.source.code)}</code>" if node.source else "no source recorded")
        kernel_text = ", ".join(f"{k.name} ({times[k.name].us_per_call:.1f} µs/call)" if k.name in times else k.name
                                for k in kernels) or "—"
        self.details.setHtml(
            f"<b>{html_text(node.name)}</b> <i>{html_text(node.op)}</i><br>target: <code>{html_text(node.target)}</code><br>"
            f"args: <code>{html_text(node.args[:300])}</code><br>shape {html_text(node.shape)} dtype {html_text(node.dtype)} "
            f"stride {html_text(node.stride)}<br>inputs: {html_text(', '.join(node.inputs) or '—')}"
            f"<br>users: {html_text(', '.join(self.graph.users(node.name)) or '—')}"
            f"<br>source: {source}<br>kernel: {html_text(kernel_text)}")

    def reveal(self, name: str) -> None:
        """Open the groups holding `name`, then centre on it and select it."""
        owner = self.visible.owner.get(name) if self.visible else None
        if owner and item_kind(owner) is ItemKind.GROUP:
            parts = item_key(owner).split("/")
            self.expanded |= {"/".join(parts[:i]) for i in range(1, len(parts) + 1)}
            self._pending_reveal = name
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
            group = next((child for child in group.children.values() if key == child.key or key.startswith(child.key + "/")),
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
            return f"<b>{html_text(key)}</b><br>{size if size is not None else 'open'}{' nodes' if size is not None else ''} — {action}"
        node = self.graph.node(item_id)
        if node is None:
            return ""
        shape = f"{node.dtype or ''}[{', '.join(node.shape)}]" if node.shape is not None else (node.dtype or "—")
        source = (f"{html_text(Path(node.source.file).name)}:{node.source.line} <code>{html_text(node.source.code.strip()[:120])}</code>"
                  if node.source else "no source recorded")
        module = "/".join(self._paths.get(node.name, ())) or "(top level)"
        kernels = ", ".join(k.name for k in kernels_of_node(self.unit, node.name, self.stage.currentText())) or "—"
        return (f"<b>{html_text(node.name)}</b><br>op: {node.op}<br>target: <code>{html_text(node.target)}</code><br>"
                f"shape: {html_text(shape)}<br>module: {html_text(module)}<br>source: {source}<br>kernels: {html_text(kernels)}")

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
                hit = QListWidgetItem(f"{node.name}  {node.target}")
                hit.setData(NODE_ROLE, node.name)  # the node, not read back from the text shown
                self.results.addItem(hit)
        self.results.setVisible(bool(hits))
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
    def overlay_colours(self) -> tuple[dict[str, list[str]], list[tuple[str, str, str]]]:
        """The current overlay: node → its fill(s) (a node in several kernels gets one stripe per kernel),
        and the legend as (colour, label, tooltip). Keys and their colours come from the whole graph, so a
        node's colour never changes when groups fold or open."""
        mode = self.overlay.currentText()
        stage = self.stage.currentText()
        by_node = kernels_by_node(self.unit, stage) if self.unit is not None else {}
        nodes = self.graph.nodes
        fills: dict[str, list[str]] = {}
        legend: list[tuple[str, str, str]] = []
        if mode == "kernel time":
            times = self.model.loaded.kernel_times if self.model.loaded else {}
            measured = {k.name: times[k.name].us_per_call for ks in by_node.values() for k in ks if k.name in times}
            slowest = max(measured.values(), default=0.0) or 1.0
            for node in nodes:
                fills[node.name] = [_heat(measured[name] / slowest) if name in measured else UNMEASURED
                                    for name in dict.fromkeys(k.name for k in by_node.get(node.name, []))] or [NO_KERNEL]
            legend = [(_heat(step / 5), f"{slowest * step / 5:.1f} µs per call", "") for step in range(5, -1, -1)] \
                if measured else []
            legend += [(UNMEASURED, "kernel not in the profile", ""), (NO_KERNEL, "no kernel", "")]
            return fills, legend
        if mode == "fused kernel":
            names = sorted({k.name for ks in by_node.values() for k in ks})
            colour = {name: _colour(position) for position, name in enumerate(names)}
            for node in nodes:
                fills[node.name] = [colour[name] for name in dict.fromkeys(k.name for k in by_node.get(node.name, []))] \
                    or [NO_KERNEL]
            legend = [(colour[name], name, name) for name in names] + [(NO_KERNEL, "no kernel (at this stage)", "")]
            return fills, legend
        if mode == "op kind":
            colour = {kind: fill for kind, fill, _pattern in OP_KINDS}
            kinds = {node.name: op_kind(node) for node in nodes}
            present = set(kinds.values())
            return ({name: [colour[kind]] for name, kind in kinds.items()},
                    [(fill, kind, "") for kind, fill, _pattern in OP_KINDS if kind in present])
        keys = sorted({node.dtype or "none" for node in nodes})
        colour = {key: _colour(position) for position, key in enumerate(keys)}
        return {node.name: [colour[node.dtype or "none"]] for node in nodes}, [(colour[key], key, "") for key in keys]

    def _paint_overlay(self) -> None:
        if self.graph is None or self.layer is None:
            return
        key = (id(self.graph), self.overlay.currentText(), self.model.loaded is not None)
        if self._overlay is None or self._overlay[0] != key:  # a node's colours depend on the graph, not on folding
            self._overlay = (key, self.overlay_colours())
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
            near |= {node.name for node in self.graph.nodes if node.op == "placeholder" and "parameters" not in node.name}
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


class StageGraphs(Mapping):
    """A unit's graphs by stage, parsed only when asked for (grouping one stage links through two others)."""

    def __init__(self, unit):
        self.unit = unit

    def __getitem__(self, stage: str):
        return self.unit.graphs[stage].graph

    def __iter__(self):
        return iter(self.unit.graphs)

    def __len__(self) -> int:
        return len(self.unit.graphs)


def fill_scene(scene: QGraphicsScene, visible, placed, edge_colour: QColor) -> NodeLayer:
    """Put a laid-out graph into `scene` (frames of open groups, edges, boxes); returns the box layer."""
    scene.clear()
    if placed.frames:
        scene.addItem(FrameLayer(placed.frames))
    scene.addItem(EdgeLayer(list(placed.edges.values()), [edge in placed.routed for edge in placed.edges], edge_colour))
    ids = list(placed.boxes)
    layer = NodeLayer(ids, [visible.items[i] for i in ids], [visible.labels[i] for i in ids],
                      [placed.boxes[i] for i in ids])
    scene.addItem(layer)
    scene.setSceneRect(scene.itemsBoundingRect().adjusted(-40, -40, 40, 40))
    return layer


def _long_lived(value):
    """`value`, a cache that lives as long as the scene (thousands of Qt value objects, no reference
    cycles), moved with everything else alive out of the collector's full passes (gc.freeze), which
    otherwise rescan it and stall a frame for 50–200 ms on a 50k-node graph."""
    gc.freeze()
    return value


def _module_stacks(unit) -> dict[str, list[str]] | None:
    """node → module path list, from the structured graph a capture recorded (exact nn_module_stack)."""
    recorded = next((a for a in unit.artifacts if a.name == "structured_graph"), None)
    if recorded is None:
        return None
    try:  # a session may come from anyone: any shape of JSON, at any depth, falls back to no stacks
        nodes = json_codec.loads(recorded.text)["nodes"]
        return {node["name"]: [entry[1] for entry in node.get("nn_module_stack") or []] for node in nodes}
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        return None


def op_kind(node) -> str:
    """What a node does, in the words of OP_KINDS (matmul, attention, normalisation, view …)."""
    if node.op in ("placeholder", "get_attr"):
        return "input / weight"
    if node.op == "output":
        return "output"
    return _target_kind(node.target)


@lru_cache(maxsize=4096)
def _target_kind(target: str) -> str:
    target = target.lower()
    return next(kind for kind, _fill, pattern in OP_KINDS[2:] if pattern.search(target))


@lru_cache(maxsize=1024)
def _lighter(colour: str) -> str:
    """A folded group's fill: its colour, lighter."""
    return QColor(colour).lighter(150).name()


def _colour(position: int) -> str:
    """The palette, then evenly spread hues: enough distinct colours for every kernel of a unit."""
    if position < len(PALETTE):
        return PALETTE[position]
    return QColor.fromHsvF(((position - len(PALETTE)) * 0.618034) % 1.0, 0.55, 0.85).name()


def _heat(share: float) -> str:
    """Kernel time colour: pale yellow (fast) → dark red (slowest)."""
    share = min(1.0, max(0.0, share))
    return QColor.fromHsvF(0.15 * (1 - share), 0.25 + 0.75 * share, 1.0 - 0.35 * share).name()

