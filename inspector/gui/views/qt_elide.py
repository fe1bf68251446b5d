"""Names too long for their cell, shortened where a reader can still recognise them: at a dot, slash,
underscore or space, never inside a word (`forward (resumed …` rather than `forw…ine 19)`), with the
whole name a hover away. Used by the Session tree, the Timeline's stage table and the Kernels charts' row labels."""

from __future__ import annotations

import re

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QStyledItemDelegate, QToolTip

from inspector.gui.qt_plain_text import plain_tip

ELLIPSIS = "…"
PATH_MARKS = re.compile(r"[./]")  # a dotted or slashed name: its last parts say the most
BOUNDARY = re.compile(r"(?=[ (\[])|(?<=[._/:,-])")  # a cut falls before a space or bracket, after a dot or dash


def elide_at_boundary(text: str, metrics: QFontMetrics, width: int, balanced: bool = False) -> str:
    """`text` if it fits `width` pixels, else its longest whole-part head (words) or tail (a dotted
    path: `…h.0.attn`) with an ellipsis; a name with no boundary that fits is cut at the right.
    `balanced`: only a head of whole words that closes every bracket it opens, for a chart's row label
    (`extern_kernels.addmm line 103 …`, not half a share `(54% …`); without it a frame keeps the
    bracket's first words (`forward (resumed …`), which say what it is."""
    if metrics.horizontalAdvance(text) <= width:
        return text
    parts = [part for part in BOUNDARY.split(text) if part]
    if len(parts) > 1:
        from_end = bool(PATH_MARKS.search(text)) and " " not in text
        for keep in range(len(parts) - 1, 0, -1):
            if balanced and not _closed_words(parts, keep):
                continue
            shown = (ELLIPSIS + "".join(parts[-keep:]).lstrip("._/")) if from_end \
                else ("".join(parts[:keep]).rstrip() + " " + ELLIPSIS if " " in text else "".join(parts[:keep])
                      + ELLIPSIS)
            if metrics.horizontalAdvance(shown) <= width:
                return shown
    return metrics.elidedText(text, Qt.TextElideMode.ElideRight, width)


def _closed_words(parts: list[str], keep: int) -> bool:
    """The first `keep` parts end before a space (a whole word) and close every bracket they open."""
    head = "".join(parts[:keep])
    return parts[keep].startswith(" ") and all(head.count(start) == head.count(end) for start, end in ("()", "[]"))


class QtBoundaryElideDelegate(QStyledItemDelegate):
    """Draws a cell's text elided at a boundary; its tooltip, where the cell has none, is the whole text
    whenever the text is shortened."""

    def initStyleOption(self, option, index) -> None:
        super().initStyleOption(option, index)
        room = option.rect.width() - 8 - (option.decorationSize.width() + 4 if not option.icon.isNull() else 0)
        option.text = elide_at_boundary(option.text, option.fontMetrics, max(10, room))

    def helpEvent(self, event, view, option, index) -> bool:
        text = str(index.data(Qt.ItemDataRole.DisplayRole) or "")
        if not index.data(Qt.ItemDataRole.ToolTipRole) and text:
            copy = type(option)(option)
            self.initStyleOption(copy, index)
            if copy.text != text:
                QToolTip.showText(event.globalPos(), plain_tip(text), view)
                return True
        return super().helpEvent(event, view, option, index)
