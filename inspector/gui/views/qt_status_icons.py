"""Small coloured icons: status dots for units, and kind letters on the severity's colour for problems."""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QIcon, QPainter, QPixmap

COLOURS = {
    "ok": "#2e9d4f", "cache_hit": "#2b7bb9", "graph_break": "#d9822b", "restart": "#c9a227",
    "failed": "#d64545", "empty_graph": "#8a8f98", "cut_mid_compile": "#a03c78",
    "error": "#d64545", "warning": "#d9822b", "info": "#2b7bb9",
}


# One letter per problem kind, on the severity's colour: a break and a recompile never look alike.
KIND_LETTERS = {"graph_break": "B", "recompile": "R", "fallback": "E", "failed": "!", "mismatch": "≠",
                "slower": "S", "unreadable": "?", "export": "X"}


def _painted(size: int, colour_key: str, draw) -> QIcon:
    """An icon of `size` px: antialiased, filled with the colour of `colour_key`, shaped by `draw`."""
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(COLOURS.get(colour_key, "#8a8f98")))
    painter.setPen(Qt.PenStyle.NoPen)
    draw(painter)
    painter.end()
    return QIcon(pixmap)


@lru_cache(maxsize=None)
def status_icon(status: str) -> QIcon:
    """A dot in the colour of a unit status or a severity."""
    return _painted(12, status, lambda painter: painter.drawEllipse(1, 1, 10, 10))


@lru_cache(maxsize=None)
def kind_icon(kind: str, severity: str) -> QIcon:
    """A problem's kind as a letter on its severity's colour: round for recompiles, square otherwise."""
    def draw(painter: QPainter) -> None:
        if kind == "recompile":
            painter.drawEllipse(QRectF(1, 1, 14, 14))
        else:
            painter.drawRoundedRect(QRectF(1, 1, 14, 14), 3, 3)
        font = QFont()
        font.setPixelSize(11)
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(QColor("white"))
        painter.drawText(QRectF(0, 0, 16, 16), Qt.AlignmentFlag.AlignCenter, KIND_LETTERS.get(kind, "•"))

    return _painted(16, severity, draw)
