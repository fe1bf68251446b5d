"""The zoomable view of a graph's scene (wheel and keys zoom, drag pans, hover describes, clicks
pick a box or a frame) and the minimap that shows where it is; the diff and XLA views reuse them."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRectF, QSize, Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QGraphicsScene, QGraphicsView, QToolTip

from inspector.gui.views.graph.qt_graph_layers import FrameLayer, NodeLayer

READABLE_SCALE = 0.6  # box labels at 7 px or more: the smallest scale a graph opens at


class RefitsWhenResized:
    """For a widget whose content fits its own size (`refit`): refitted whenever that size changes or
    it shows. Listed before the Qt class it mixes into, so its handlers run and then hand on."""

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.refit()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self.refit()


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
        readable scale from its top (its inputs), to scroll or Fit from (a whole graph of a hundred-odd
        nodes would open as a speck)."""
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
                QToolTip.showText(event.globalPos(), text, self.viewport())  # rich text, log text escaped in it
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


class QtMinimap(RefitsWhenResized, QGraphicsView):
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

    def drawForeground(self, painter: QPainter, _rect: QRectF) -> None:
        visible = self.main.mapToScene(self.main.viewport().rect()).boundingRect()
        painter.setPen(QPen(QColor("#d64545"), 0))
        painter.setBrush(QColor(214, 69, 69, 40))
        painter.drawRect(visible)

    def mousePressEvent(self, event) -> None:
        self.main.centerOn(self.mapToScene(event.position().toPoint()))
