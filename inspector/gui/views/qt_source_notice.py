"""The Source view's line about where the text on show comes from: the capture's copy of the file
(and whether the file on disk has changed since), or the file on disk read now. Where both exist and
differ, a button shows the other one. Floats at the top right of the code, over no line number.

Its owner, the editor, re-places it from its own resizeEvent (a scroll area's resizeEvent is its
viewport's): not from an event filter on the viewport, which Qt calls while it deletes the viewport's
children, where Python may run deletions PySide queued from another thread's garbage collection and Qt
deadlocks on its own lock. Not a layout on the viewport either: its width follows the viewport's by a
rule (half, at least NOTICE_MIN_WIDTH) no layout states."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton

from inspector.core.readers.source_snapshot import CAPTURED, SourceText

NOTICE_MIN_WIDTH = 360  # where the viewport has room: half a narrow one would wrap the line into a column
NOTICE_INSET = 4  # px from the viewport's top and right edges (and its left one, where the viewport is narrow)


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
        self.hide()

    def say(self, shown: SourceText | None) -> None:
        if shown is None or not shown.note:
            self.hide()
            return
        self.label.setText(shown.note)
        self.other.setVisible(shown.changed)
        self.other.setText("Show the file on disk" if shown.shown == CAPTURED else "Show the captured copy")
        self.show()
        self.follow_viewport()

    def follow_viewport(self) -> None:
        """Half the viewport's width (at least NOTICE_MIN_WIDTH, at most the viewport less an inset each
        side, never under 120 px), at its top right corner: the editor calls it as its viewport resizes."""
        if self.isHidden():
            return  # placed when next said (a notice merely in a hidden tab still follows)
        viewport = self.editor.viewport()
        width = min(viewport.width() - 2 * NOTICE_INSET, max(NOTICE_MIN_WIDTH, viewport.width() // 2))
        self.setFixedWidth(max(width, 120))
        self.adjustSize()
        self.move(viewport.width() - self.width() - NOTICE_INSET, NOTICE_INSET)
        self.raise_()
