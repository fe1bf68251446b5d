"""A read-only code editor: line numbers, markers in the gutter, and lazy syntax highlighting (only
the blocks that come into view are formatted), shared by the source view and the code pane."""

from __future__ import annotations

from collections.abc import Iterator

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QPainter, QTextCharFormat, QTextCursor, QTextFormat, QTextLayout
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QToolTip, QWidget

from inspector.gui.code_highlight import LazyHighlighter
from inspector.gui.qt_background import in_turns
from inspector.gui.views.qt_status_icons import COLOURS
from inspector.gui.qt_plain_text import plain_tip

CHUNK_LINES = 8000
LIGHT = {"keyword": "#a626a4", "string": "#50a14f", "comment": "#8a8f98", "number": "#986801", "type": "#c18401",
         "function": "#4078f2", "decorator": "#c18401", "builtin": "#0184bc", "operator": "#56606d"}
DARK = {"keyword": "#c678dd", "string": "#98c379", "comment": "#7f848e", "number": "#d19a66", "type": "#e5c07b",
        "function": "#61afef", "decorator": "#e5c07b", "builtin": "#56b6c2", "operator": "#abb2bf"}


class _Gutter(QWidget):
    def __init__(self, editor: QtCodeEditor):
        super().__init__(editor)
        self.editor = editor

    def sizeHint(self) -> QSize:
        return QSize(self.editor.gutter_width(), 0)

    def paintEvent(self, event) -> None:
        self.editor.paint_gutter(event)

    def event(self, event) -> bool:
        if event.type() == QEvent.Type.ToolTip:
            tip = self.editor.marker_tooltip(event.pos().y())
            QToolTip.showText(event.globalPos(), plain_tip(tip), self) if tip else QToolTip.hideText()
            return True
        return super().event(event)


class QtCodeEditor(QPlainTextEdit):
    def __init__(self):
        super().__init__()
        self.setReadOnly(True)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.markers: dict[int, tuple[str, str]] = {}  # line → (kind, tooltip)
        self.highlighter: LazyHighlighter | None = None
        self._rest: list[str] = []  # chunks of a long text still to append
        self._pending_line: int | None = None
        self._formatted: set[int] = set()
        self._formats = self._make_formats()
        self.gutter = _Gutter(self)
        self.blockCountChanged.connect(lambda _: self.setViewportMargins(self.gutter_width(), 0, 0, 0))
        self.updateRequest.connect(self._on_update_request)
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _make_formats(self) -> dict[str, QTextCharFormat]:
        colours = DARK if self.palette().base().color().lightness() < 128 else LIGHT
        formats = {}
        for category, colour in colours.items():
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(colour))
            if category in ("keyword", "function"):
                fmt.setFontWeight(QFont.Weight.DemiBold)
            if category == "comment":
                fmt.setFontItalic(True)
            formats[category] = fmt
        return formats

    def show_text(self, text: str, highlighter: LazyHighlighter | None, markers: dict | None = None) -> None:
        """Show `text` at once: a long text shows its first screens now and the rest follows in
        chunks between events, so the UI never waits on the whole document."""
        self.highlighter, self._formatted = highlighter, set()
        self.markers = markers or {}
        self._pending_line = None
        lines = text.split("\n") if len(text) > CHUNK_LINES * 40 else None
        if lines is None or len(lines) <= CHUNK_LINES:
            self._rest = []
            self.setPlainText(text)
        else:
            self._rest = [("\n".join(lines[i:i + CHUNK_LINES])) for i in range(CHUNK_LINES, len(lines), CHUNK_LINES)]
            self.setPlainText("\n".join(lines[:CHUNK_LINES]))
            in_turns(self._appending(), self)
        self._format_visible()

    @property
    def loading(self) -> bool:
        return bool(self._rest)

    def _appending(self) -> Iterator[None]:
        """The rest of a long text, a chunk a turn of the event loop (this turn showed its first screens)."""
        while self._rest:
            yield
            self._append_next_chunk()

    def _append_next_chunk(self) -> None:
        if not self._rest:
            return
        chunk = self._rest.pop(0)
        scroll = self.verticalScrollBar().value()
        self.appendPlainText(chunk)
        self.verticalScrollBar().setValue(scroll)
        if not self._rest and self._pending_line is not None:
            self.go_to_line(self._pending_line)

    def go_to_line(self, line: int, colour: str = COLOURS["warning"]) -> None:
        """Scroll to 1-based `line`, put the cursor there and tint the whole line (once it is loaded)."""
        if line > self.blockCount() and self._rest:
            self._pending_line = line
            return
        self.tint_lines([line], colour, move_cursor=True)

    def tint_lines(self, lines: list[int], colour: str = COLOURS["warning"], move_cursor: bool = False) -> None:
        """Tint each 1-based line of `lines` (none: clear the tint) and scroll to the first — the
        lines another pane's selected line maps to. The cursor stays where the user put it unless
        `move_cursor`, so a click on a tinted line still reads as a click."""
        dark = self.palette().base().color().lightness() < 128
        selections = []
        for line in lines:
            block = self.document().findBlockByNumber(max(0, line - 1))
            selection = QTextEdit.ExtraSelection()
            selection.format.setBackground(QColor(colour).darker(260) if dark else QColor(colour).lighter(170))
            selection.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
            selection.cursor = QTextCursor(block)
            selections.append(selection)
        if selections and move_cursor:
            self.setTextCursor(selections[0].cursor)
            self.centerCursor()
        elif selections:  # a plain text edit scrolls by lines
            visible = max(1, self.viewport().height() // max(1, self.fontMetrics().lineSpacing()))
            self.verticalScrollBar().setValue(max(0, lines[0] - 1 - visible // 2))
        self.setExtraSelections(selections)
        self._format_visible()

    # --- lazy highlighting ----------------------------------------------------------------------
    def _format_visible(self) -> None:
        if self.highlighter is None:
            return
        block = self.firstVisibleBlock()
        bottom = self.viewport().height()
        top = self.blockBoundingGeometry(block).translated(self.contentOffset()).top()
        while block.isValid() and top <= bottom + 200:
            number = block.blockNumber()
            if number not in self._formatted:
                self._formatted.add(number)
                ranges = []
                for column, length, category in self.highlighter.line_spans(number):
                    fmt = self._formats.get(category)
                    if fmt is not None:
                        rng = QTextLayout.FormatRange()
                        rng.start, rng.length, rng.format = column, length, fmt
                        ranges.append(rng)
                if ranges:
                    block.layout().setFormats(ranges)
                    self.document().markContentsDirty(block.position(), block.length())
            top += self.blockBoundingRect(block).height()
            block = block.next()

    # --- gutter --------------------------------------------------------------------------------
    def gutter_width(self) -> int:
        return 14 + self.fontMetrics().horizontalAdvance("9") * max(3, len(str(self.blockCount())))

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        rect = self.contentsRect()
        self.gutter.setGeometry(QRect(rect.left(), rect.top(), self.gutter_width(), rect.height()))
        self._format_visible()

    def _on_update_request(self, rect: QRect, dy: int) -> None:
        if dy:
            self.gutter.scroll(0, dy)
            self._format_visible()
        else:
            self.gutter.update(0, rect.y(), self.gutter.width(), rect.height())

    def paint_gutter(self, event) -> None:
        painter = QPainter(self.gutter)
        painter.fillRect(event.rect(), self.palette().alternateBase())
        if self.document().isEmpty():
            return  # no "1" beside a placeholder
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        height = self.fontMetrics().height()
        while block.isValid() and top <= event.rect().bottom():
            number = block.blockNumber() + 1
            marker = self.markers.get(number)
            if marker:
                painter.setBrush(QColor(COLOURS.get(marker[0], COLOURS["info"])))
                painter.setPen(Qt.PenStyle.NoPen)
                painter.drawEllipse(3, top + height // 2 - 4, 8, 8)
            painter.setPen(self.palette().placeholderText().color())
            painter.drawText(0, top, self.gutter.width() - 4, height, Qt.AlignmentFlag.AlignRight, str(number))
            block = block.next()
            top += round(self.blockBoundingRect(block).height()) if block.isValid() else height

    def marker_tooltip(self, y: int) -> str | None:
        marker = self.markers.get(self.cursorForPosition(QPoint(0, y)).blockNumber() + 1)
        return marker[1] if marker else None
