"""Source view: the user's script with graph-break and recompile markers in the gutter."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFontDatabase, QPainter, QTextCursor, QTextFormat
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from inspector.gui.qt_session_model import LoadedSession, QtSessionModel
from inspector.gui.views.qt_status_icons import COLOURS

MAX_SOURCE_BYTES = 4 << 20


class _Gutter(QWidget):
    def __init__(self, view: QtSourceView):
        super().__init__(view)
        self.view = view

    def sizeHint(self) -> QSize:
        return QSize(self.view.gutter_width(), 0)

    def paintEvent(self, event) -> None:
        self.view.paint_gutter(event)

    def event(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            tip = self.view.marker_tooltip(event.pos().y())
            if tip:
                QToolTip.showText(event.globalPos(), tip, self)
            else:
                QToolTip.hideText()
            return True
        return super().event(event)


class QtSourceView(QPlainTextEdit):
    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.setReadOnly(True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.model = model
        self.path: str | None = None
        self.markers: dict[str, dict[int, tuple[str, str]]] = {}  # file → line → (kind, tooltip)
        self.gutter = _Gutter(self)
        self.blockCountChanged.connect(lambda _: self.setViewportMargins(self.gutter_width(), 0, 0, 0))
        self.updateRequest.connect(self._on_update_request)
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)
        self.setPlaceholderText("The model's source appears here once a session is open.")
        model.sigLoaded.connect(self._on_loaded)
        model.sigUnitSelected.connect(self._on_unit_selected)
        model.sigLocationRequested.connect(self.show_location)

    # --- model ----------------------------------------------------------------------------------
    def _on_loaded(self, loaded: LoadedSession) -> None:
        self.markers = {}
        for brk in loaded.session.breaks:
            if brk.location:
                self.markers.setdefault(brk.location.file, {})[brk.location.line or 0] = (
                    "graph_break", f"graph break: {brk.reason}")
        for recompile in loaded.session.recompiles:
            unit = next(u for u in loaded.session.units if u.recompile is recompile)
            if unit.location and unit.location.line:
                plain = recompile.failed_guards[0].plain if recompile.failed_guards else "recompiled"
                self.markers.setdefault(unit.location.file, {}).setdefault(unit.location.line, ("restart", f"recompile: {plain}"))
        self.path = None
        script = (loaded.session.manifest or {}).get("script")
        first = next((f for f in self.markers if Path(f).is_file()), None)
        self.show_location(script or first or "", 0)

    def _on_unit_selected(self, unit) -> None:
        if unit is not None and unit.location and unit.location.file != self.path:
            self.show_location(unit.location.file, unit.location.line or 0)

    def show_location(self, file: str, line: int) -> None:
        if file != self.path:
            self.path = file
            self.setPlainText(self._read(file))
        if line > 0:
            block = self.document().findBlockByNumber(line - 1)
            cursor = QTextCursor(block)
            self.setTextCursor(cursor)
            self.centerCursor()
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(QColor(COLOURS["warning"]).lighter(170))
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selection.cursor = cursor
            self.setExtraSelections([selection])
        self.gutter.update()

    @staticmethod
    def _read(file: str) -> str:
        path = Path(file)
        try:
            if path.stat().st_size > MAX_SOURCE_BYTES:
                return f"{file} is too large to show here."
            return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return f"{file}\n\nThis file is not on this machine (the session was captured elsewhere)." if file else ""

    # --- gutter ---------------------------------------------------------------------------------
    def gutter_width(self) -> int:
        return 14 + self.fontMetrics().horizontalAdvance("9") * max(3, len(str(self.blockCount())))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        rect = self.contentsRect()
        self.gutter.setGeometry(QRect(rect.left(), rect.top(), self.gutter_width(), rect.height()))

    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self.gutter.scroll(0, dy)
        else:
            self.gutter.update(0, rect.y(), self.gutter.width(), rect.height())

    def paint_gutter(self, event) -> None:
        painter = QPainter(self.gutter)
        painter.fillRect(event.rect(), self.palette().alternateBase())
        markers = self.markers.get(self.path or "", {})
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            number = block.blockNumber() + 1
            marker = markers.get(number)
            if marker:
                painter.setBrush(QColor(COLOURS[marker[0]]))
                painter.setPen(Qt.PenStyle.NoPen)
                painter.drawEllipse(3, top + height // 2 - 4, 8, 8)
            painter.setPen(self.palette().placeholderText().color())
            painter.drawText(0, top, self.gutter.width() - 4, height, Qt.AlignmentFlag.AlignRight, str(number))
            block = block.next()
            top += round(self.blockBoundingRect(block).height()) if block.isValid() else height

    def marker_lines(self) -> dict[int, str]:
        """Line → marker kind for the file on show (what the gutter draws)."""
        return {line: kind for line, (kind, _tip) in self.markers.get(self.path or "", {}).items()}

    def marker_tooltip(self, y: int) -> str | None:
        cursor = self.cursorForPosition(QPoint(0, y))
        marker = self.markers.get(self.path or "", {}).get(cursor.blockNumber() + 1)
        return marker[1] if marker else None
