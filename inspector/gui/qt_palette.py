"""Light or dark: the app follows the desktop's colour scheme (or `--theme`). The dark palette is
Qt's Fusion style with colours chosen for contrast (text on base at least 10:1, links and
highlights readable); views take their colours from the palette, so it is set before they are made."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

DARK = {QPalette.ColorRole.Window: "#2b2d31", QPalette.ColorRole.WindowText: "#e6e6e6",
        QPalette.ColorRole.Base: "#1e1f22", QPalette.ColorRole.AlternateBase: "#26282c",
        QPalette.ColorRole.ToolTipBase: "#3a3d42", QPalette.ColorRole.ToolTipText: "#f0f0f0",
        QPalette.ColorRole.Text: "#e6e6e6", QPalette.ColorRole.Button: "#33363b",
        QPalette.ColorRole.ButtonText: "#e6e6e6", QPalette.ColorRole.BrightText: "#ff6b6b",
        QPalette.ColorRole.Link: "#6cb6ff", QPalette.ColorRole.Highlight: "#2f6fb3",
        QPalette.ColorRole.HighlightedText: "#ffffff", QPalette.ColorRole.PlaceholderText: "#9aa0a6",
        QPalette.ColorRole.Mid: "#4a4d52", QPalette.ColorRole.Dark: "#17181a", QPalette.ColorRole.Light: "#45484d"}
DISABLED_TEXT = "#7a7f86"


def wants_dark(app: QApplication, theme: str) -> bool:
    if theme in ("dark", "light"):
        return theme == "dark"
    return app.styleHints().colorScheme() == Qt.ColorScheme.Dark


def apply_theme(app: QApplication, theme: str = "system") -> bool:
    """Set the dark palette when `theme` (light, dark or system) asks for it; True when dark."""
    if not wants_dark(app, theme):
        return False
    app.setStyle("Fusion")
    palette = QPalette()
    for role, colour in DARK.items():
        palette.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(DISABLED_TEXT))
    app.setPalette(palette)
    return True
