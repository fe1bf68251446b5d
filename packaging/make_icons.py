"""Render the app icon (resources/icons/compile-inspector.svg) to the PNG sizes desktops look for.

    QT_QPA_PLATFORM=offscreen python packaging/make_icons.py
"""

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
SIZES = (16, 32, 48, 64, 128, 256)

app = QGuiApplication([])
renderer = QSvgRenderer(str(ICONS / "compile-inspector.svg"))
for size in SIZES:
    image = QImage(size, size, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    renderer.render(painter)
    painter.end()
    image.save(str(ICONS / f"compile-inspector-{size}.png"))
(ICONS / "compile-inspector.png").write_bytes((ICONS / "compile-inspector-256.png").read_bytes())
print("icons written to", ICONS)
