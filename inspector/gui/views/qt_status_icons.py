"""Small coloured status dots, shared by the views that show unit status or problem severity."""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap

COLOURS = {
    "ok": "#2e9d4f", "cache_hit": "#2b7bb9", "graph_break": "#d9822b", "restart": "#c9a227",
    "failed": "#d64545", "empty_graph": "#8a8f98", "cut_mid_compile": "#a03c78",
    "error": "#d64545", "warning": "#d9822b", "info": "#2b7bb9",
}


@lru_cache(maxsize=None)
def status_icon(status: str) -> QIcon:
    pixmap = QPixmap(12, 12)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(COLOURS.get(status, "#8a8f98")))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(1, 1, 10, 10)
    painter.end()
    return QIcon(pixmap)
