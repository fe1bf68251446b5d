"""The drawn layers of a laid-out graph: every box, every edge and every open group's frame, each
one QGraphicsItem painted from arrays, so a frame costs about the same at 100 or 10,000 nodes."""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from PySide6.QtCore import QLineF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPalette, QPen, QPicture
from PySide6.QtWidgets import QApplication, QGraphicsItem, QGraphicsScene, QStyleOptionGraphicsItem

from inspector.core.graphs.graph_layout import PAD
from inspector.core.graphs.item_ids import open_item
from inspector.core.gc_policy import freeze_alive

LABEL_MIN_PX = 40  # a box gets its text when it is at least this wide on screen
MAX_LABELS = 200
PICTURE_ABOVE = 1500  # boxes in view above which recorded cells (or, far out, merged boxes) are drawn
EDGE_PICTURE_ABOVE = 300  # lines in view above which recorded cells are replayed
CELL = 1500.0  # scene units a side of a recorded cell
SMALL_LOD = 0.2  # below this zoom, boxes lose their outline
FAR_EDGE_PX = 4.0  # far out, edges between groups shorter than this on screen are left out
FADE_LOD = 0.5  # below this zoom, edges between groups are drawn faint
ARROW = 7.0  # scene units of an arrowhead's side
SELECTED_COLOUR, NEIGHBOUR_COLOUR = "#1f5fd1", "#e07b00"
BREAK_NEIGHBOUR_COLOUR, TRACED_COLOUR, KERNEL_NODES_COLOUR = "#8e44ad", "#d64545", "#111111"
# What each outline means, for the legend under the overlay's: one colour, one meaning.
OUTLINES = ((SELECTED_COLOUR, "selected"), (NEIGHBOUR_COLOUR, "its inputs and users"),
            (BREAK_NEIGHBOUR_COLOUR, "next to a graph break"), (TRACED_COLOUR, "traced up or down (u / d)"),
            (KERNEL_NODES_COLOUR, "the chosen kernel's nodes"))
TITLE_ROOM = PAD * 1.5  # scene units above an open group's content, where its title goes
GROUP_FILL = "#8a8f98"


class TiledPictures:
    """Drawing commands cut into square cells of the scene (CELL units a side), each recorded once into
    a QPicture: a frame replays only the cells it shows, in C++, whatever the zoom. Each shape belongs to
    the cell of its top-left corner and must be smaller than a cell (the owner draws larger ones itself),
    so a frame replays the cells it touches and one more row and column up and left. The owner passes
    its drawing function with each call rather than this holding it: no reference cycle, so a scene's
    layers are freed as soon as the next layout replaces them, even once frozen out of the collector's
    sight."""

    def __init__(self, left, top):
        column = np.floor(np.asarray(left) / CELL).astype(np.int64)
        row = np.floor(np.asarray(top) / CELL).astype(np.int64)
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

    def __init__(self, ids: list[str], kinds: list[str], labels: list[str],
                 rects: list[tuple[float, float, float, float]]):
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
        hits = np.nonzero((self.x0 <= point.x()) & (self.x1 >= point.x()) & (self.y0 <= point.y())
                          & (self.y1 >= point.y()))[0]
        return self.ids[int(hits[-1])] if len(hits) else None

    def set_fills(self, fills: list[list[str] | str]) -> None:
        """One colour per box, or several (stripes); `fills` keeps what was given."""
        self.fills = fills
        self.stripes = [[fill] if isinstance(fill, str) else fill for fill in fills]
        self._merged = None
        names, self.primary = np.unique(np.array([fill[0] for fill in self.stripes] or [GROUP_FILL]),
                                        return_inverse=True)
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
            self._merged = freeze_alive(self._merge(SMALL_LOD))
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
        hundreds of thousands of them when everything is opened stalls the expand (docs/benchmarks.md,
        "FX graph view")."""
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
    heads = [np.column_stack([bx - ARROW * dx + side * ARROW * 0.45 * dy, by - ARROW * dy - side * ARROW * 0.45 * dx,
                              bx, by])
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
            self.lines = freeze_alive(list(map(QLineF, *self.segments.T.tolist())))
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
        hits = np.nonzero((self.x0 <= point.x()) & (self.x1 >= point.x()) & (self.y0 <= point.y())
                          & (self.y1 >= point.y()))[0]
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
            painter.drawText(screen.adjusted(6, 2, -6, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
                             title)
        painter.restore()



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




@lru_cache(maxsize=1024)
def _lighter(colour: str) -> str:
    """A folded group's fill: its colour, lighter."""
    return QColor(colour).lighter(150).name()
