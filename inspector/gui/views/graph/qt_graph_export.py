"""The graph scene as files: SVG (vector) and PNG, the PNG cut into numbered tiles when it is larger
than one, so a graph of any size can be saved. Apart from the pane because it needs only the scene."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import QGraphicsScene

TILE = 8192  # pixels per PNG tile on export


def write_svg(scene: QGraphicsScene, path: str) -> None:
    rect = scene.itemsBoundingRect()
    generator = QSvgGenerator()
    generator.setFileName(path)
    generator.setSize(rect.size().toSize())
    generator.setViewBox(rect)
    painter = QPainter(generator)
    scene.render(painter, QRectF(0, 0, rect.width(), rect.height()), rect)
    painter.end()


def write_png_tiles(scene: QGraphicsScene, path: str, scale: float = 1.0) -> list[str]:
    """The whole graph at `scale`; larger than one tile, it is written as numbered tiles
    (`graph_r0_c1.png`…), so there is no size cap."""
    rect = scene.itemsBoundingRect()
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
            scene.render(painter, QRectF(0, 0, tile_w, tile_h), source)
            painter.end()
            name = path if rows * columns == 1 else str(Path(path).with_name(f"{Path(path).stem}_r{row}_c{column}.png"))
            image.save(name)
            written.append(name)
    return written
