"""The Source view's line about where the text on show comes from: the capture's copy of the file
(and whether the file on disk has changed since), or the file on disk read now. Where both exist and
differ, a button shows the other one. Floats at the top right of the code, over no line number."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton

from inspector.core.readers.source_snapshot import CAPTURED, SourceText


class QtSourceNotice(QFrame):
    sigShowOther = Signal()  # show the other text of the file (on disk ↔ as captured)

    def __init__(self, editor: QPlainTextEdit):
        super().__init__(editor.viewport())
        self.editor = editor
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAutoFillBackground(True)
        self.setBackgroundRole(QPalette.ColorRole.ToolTipBase)
        self.label = QLabel("")
        self.label.setTextFormat(Qt.TextFormat.PlainText)  # file names from a session, never markup
        self.label.setWordWrap(True)
        self.label.setForegroundRole(QPalette.ColorRole.ToolTipText)
        self.other = QPushButton("")
        self.other.clicked.connect(self.sigShowOther)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(6, 2, 2, 2)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.other)
        editor.viewport().installEventFilter(self)
        self.hide()

    def say(self, shown: SourceText | None) -> None:
        if shown is None or not shown.note:
            self.hide()
            return
        self.label.setText(shown.note)
        self.other.setVisible(shown.changed)
        self.other.setText("Show the file on disk" if shown.shown == CAPTURED else "Show the captured copy")
        self.show()
        self._place()

    def _place(self) -> None:
        viewport = self.editor.viewport()
        width = min(viewport.width() - 8, max(360, viewport.width() // 2))
        self.setFixedWidth(max(width, 120))
        self.adjustSize()
        self.move(viewport.width() - self.width() - 4, 4)
        self.raise_()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and self.isVisible():
            self._place()
        return False
