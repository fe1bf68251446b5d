"""Break map: every compiled region of the run in program order, one row per compilation, with the
graph breaks between them as red gaps (reason, hint and file:line on hover); click a region to
select its compile unit."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QToolTip, QWidget

from inspector.core.analysis.break_map import Gap, Region, break_map
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel
from inspector.gui.qt_plain_text import plain_tip

ROW_H, GAP_W, LABEL_W = 22, 14, 78


class QtBreakMap(QWidget):
    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.rows: list[list[Region | Gap]] = []
        self.hit_boxes: list[tuple[QRectF, Region | Gap]] = []
        self.setMouseTracking(True)
        model.sigLoaded.connect(self._on_loaded)
        model.sigUnitSelected.connect(lambda _unit: self.update())

    def sizeHint(self) -> QSize:
        return QSize(800, ROW_H * max(1, min(4, len(self.rows))) + 6)

    def _on_loaded(self, loaded: LoadedSession) -> None:
        self.rows = break_map(loaded.session)
        self.setFixedHeight(ROW_H * max(1, min(4, len(self.rows))) + 6)
        self.update()

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        self.hit_boxes = []
        width = self.width() - LABEL_W - 4
        for index, row in enumerate(self.rows[:4]):
            y = index * ROW_H + 3
            painter.setPen(self.palette().text().color())
            painter.drawText(QRectF(0, y, LABEL_W, ROW_H), Qt.AlignmentFlag.AlignVCenter,
                             f"compile {index}")
            regions = [part for part in row if isinstance(part, Region)]
            total = sum(region.seconds or 0 for region in regions) or 1.0
            gaps = sum(1 for part in row if isinstance(part, Gap))
            scale = max(1.0, width - gaps * GAP_W) / total
            x = LABEL_W
            for part in row:
                if isinstance(part, Gap):
                    rect = QRectF(x, y + 2, GAP_W - 2, ROW_H - 4)
                    painter.fillRect(rect, QColor("#d64545"))
                    x += GAP_W
                else:
                    span = max(24.0, (part.seconds or 0) * scale)
                    rect = QRectF(x, y + 2, span - 2, ROW_H - 4)
                    selected = part.unit is self.model.unit
                    painter.fillRect(rect, QColor("#2b7bb9" if part.measured else "#6b8fb3"))
                    if selected:
                        painter.setPen(QColor("#111111"))
                        painter.drawRect(rect)
                    painter.setPen(QColor("white"))
                    painter.drawText(rect.adjusted(3, 0, -3, 0), Qt.AlignmentFlag.AlignVCenter,
                                     f"{part.unit.compile_id} {part.unit.function or ''}")
                    x += span
                self.hit_boxes.append((rect, part))
        painter.end()

    def _part_at(self, position) -> Region | Gap | None:
        return next((part for rect, part in self.hit_boxes if rect.contains(position)), None)

    def mouseMoveEvent(self, event) -> None:
        part = self._part_at(event.position())
        if isinstance(part, Gap):
            brk = part.brk
            QToolTip.showText(event.globalPosition().toPoint(), plain_tip(f"graph break at {brk.site}\n{brk.reason}")
                              + (f"\nHint: {brk.hints[0]}" if brk.hints else ""), self)
        elif isinstance(part, Region):
            what = "run time per call" if part.measured else "compile time (run time not measured)"
            seconds = f"{part.seconds:.4g} s" if part.seconds is not None else "n/a"
            QToolTip.showText(event.globalPosition().toPoint(), plain_tip(f"{part.unit.title}\n{what}: {seconds}"), self)
        else:
            QToolTip.hideText()

    def mousePressEvent(self, event) -> None:
        part = self._part_at(event.position())
        if isinstance(part, Region):
            self.model.select_unit(part.unit)
        elif isinstance(part, Gap) and part.brk.location:
            self.model.show_location(part.brk.location.file, part.brk.location.line)
