"""Break map: every compiled region of the run in program order, one row per compilation, with the
graph breaks between them as red gaps (reason, hint and file:line on hover); click a region to
select its compile unit. A label too long for its place is elided, whole in the tooltip. In a
distributed run it shows the rank of the selected unit, named in each row's label. A run with more
compilations than the rows shown says "compile i of N" and scrolls with the mouse wheel."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QToolTip, QWidget

from inspector.core.analysis.break_map import CompiledRegion, Gap, break_map
from inspector.core.model.session import Rank
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel
from inspector.core.analysis.user_names import unit_title
from inspector.gui.qt_plain_text import plain_tip

ROW_H, GAP_W, LABEL_W = 22, 14, 78
SHOWN_ROWS = 4


def region_label(region: CompiledRegion) -> str:
    """What a region says on the map (elided to its width; the whole text is in its tooltip)."""
    return unit_title(region.unit)


def gap_tip(gap: Gap) -> str:
    """A break's tooltip: where and why, the hint, and the resume function that goes on after it."""
    brk = gap.brk
    lines = [f"graph break at {brk.site}", brk.reason, *([f"Hint: {brk.hints[0]}"] if brk.hints else [])]
    if gap.resume is not None:
        lines.append(f"Then resumes in {unit_title(gap.resume)} ({gap.resume.function}): double-click to select "
                     "it (its code, as Dynamo wrote it, is in the Code tab)")
    return "\n".join(lines)


class QtBreakMap(QWidget):
    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.rows: list[list[CompiledRegion | Gap]] = []
        self.rank: Rank | None = None  # the rank shown (None: a single-process run, all of it)
        self.first_row = 0  # the first row drawn, when there are more rows than SHOWN_ROWS
        self.label_width = LABEL_W  # the row labels' column, as last painted
        self.hit_boxes: list[tuple[QRectF, CompiledRegion | Gap]] = []
        # what the last paint wrote: where, the text shown, the whole text
        self.drawn_labels: list[tuple[QRectF, str, str]] = []
        self.setMouseTracking(True)
        model.on_each_session(self._on_loaded)
        model.sigUnitSelected.connect(self._on_unit_selected)

    def sizeHint(self) -> QSize:
        return QSize(800, ROW_H * max(1, min(SHOWN_ROWS, len(self.rows))) + 6)

    def _on_loaded(self, loaded: LoadedSession) -> None:
        self.rank = None
        self._show(None)

    def _on_unit_selected(self, unit) -> None:
        """Another rank's unit brings that rank's map."""
        loaded = self.model.loaded
        if loaded is not None and len(loaded.session.ranks) > 1 and unit is not None:
            rank = next((rank for rank in loaded.session.ranks if any(u is unit for u in rank.units)), None)
            if rank is not self.rank:
                self._show(rank)
        self._bring_selected_into_view()
        self.update()

    def _show(self, rank: Rank | None) -> None:
        loaded = self.model.loaded
        self.rank = rank
        if loaded is None:
            self.rows = []
        elif len(loaded.session.ranks) > 1:
            self.rank = rank or loaded.session.ranks[0]
            self.rows = break_map(loaded.session, self.rank)
        else:
            self.rows = break_map(loaded.session)
        self.setFixedHeight(ROW_H * max(1, min(SHOWN_ROWS, len(self.rows))) + 6)
        self.first_row = 0
        self._bring_selected_into_view()
        self.update()

    def row_label(self, index: int) -> str:
        """"compile i" (numbered from 0, like the recompile count in Dynamo's compile ids), with "(of N)"
        where some rows are out of view, so the user knows there are more."""
        count = f" (of {len(self.rows)})" if len(self.rows) > SHOWN_ROWS else ""
        return (f"{self.rank.label} · " if self.rank is not None else "") + f"compile {index}{count}"

    def shown_rows(self) -> list[int]:
        return list(range(self.first_row, min(len(self.rows), self.first_row + SHOWN_ROWS)))

    def _bring_selected_into_view(self) -> None:
        """Scroll just far enough that the selected unit's row is drawn (a choice in the session tree
        must show on the map); a selection already in view leaves the scroll where the user put it."""
        selected = next((index for index, row in enumerate(self.rows)
                         if any(isinstance(part, CompiledRegion) and part.unit is self.model.unit
                                for part in row)), None)
        if selected is not None and not self.first_row <= selected < self.first_row + SHOWN_ROWS:
            self._scroll_to(selected - SHOWN_ROWS + 1 if selected >= self.first_row else selected)

    def _scroll_to(self, first: int) -> None:
        self.first_row = max(0, min(first, len(self.rows) - SHOWN_ROWS))
        self.update()

    def wheelEvent(self, event) -> None:
        if len(self.rows) <= SHOWN_ROWS:
            event.ignore()  # nothing to scroll: the page around it may
            return
        delta = event.angleDelta().y()
        if delta:
            self._scroll_to(self.first_row + (-1 if delta > 0 else 1))  # a row a notch, whatever the device's step
        event.accept()

    def scroll_hint(self) -> str:
        """What the row labels say on hover where some rows are out of view."""
        shown = self.shown_rows()
        return (f"Showing compiles {shown[0]}–{shown[-1]} of 0–{len(self.rows) - 1}: "
                "scroll here, or choose a unit in the session tree, to see the others")

    def paintEvent(self, _event) -> None:
        painter = QPainter(self)
        self.hit_boxes = []
        self.drawn_labels = []
        label_w = max(LABEL_W, painter.fontMetrics().horizontalAdvance(self.row_label(len(self.rows))) + 8)
        # a rank's long name is elided, not the map
        label_w = self.label_width = min(label_w, max(LABEL_W, self.width() // 3))
        width = self.width() - label_w - 4
        for place, index in enumerate(self.shown_rows()):
            row = self.rows[index]
            y = place * ROW_H + 3
            painter.setPen(self.palette().text().color())
            label_rect, label = QRectF(0, y, label_w - 4, ROW_H), self.row_label(index)
            shown = painter.fontMetrics().elidedText(label, Qt.TextElideMode.ElideRight, int(label_rect.width()))
            painter.drawText(label_rect, Qt.AlignmentFlag.AlignVCenter, shown)
            self.drawn_labels.append((label_rect, shown, label))
            regions = [part for part in row if isinstance(part, CompiledRegion)]
            total = sum(region.seconds or 0 for region in regions) or 1.0
            gaps = sum(1 for part in row if isinstance(part, Gap))
            scale = max(1.0, width - gaps * GAP_W) / total
            x = label_w
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
                    room = rect.adjusted(3, 0, -3, 0)
                    text = region_label(part)
                    shown = painter.fontMetrics().elidedText(text, Qt.TextElideMode.ElideRight, int(room.width()))
                    painter.drawText(room, Qt.AlignmentFlag.AlignVCenter, shown)
                    self.drawn_labels.append((room, shown, text))
                    x += span
                self.hit_boxes.append((rect, part))
        painter.end()

    def _part_at(self, position) -> CompiledRegion | Gap | None:
        return next((part for rect, part in self.hit_boxes if rect.contains(position)), None)

    def mouseMoveEvent(self, event) -> None:
        part = self._part_at(event.position())
        if isinstance(part, Gap):
            QToolTip.showText(event.globalPosition().toPoint(), plain_tip(gap_tip(part)), self)
        elif isinstance(part, CompiledRegion):
            profiled = any(isinstance(other, CompiledRegion) and other.measured for row in self.rows for other in row)
            what = ("run time per call" if part.measured else
                    "compile time (it did not run in the profiled calls)" if profiled else
                    "compile time (no profile of the run measured it)")
            seconds = f"{part.seconds:.4g} s" if part.seconds is not None else "n/a"
            label = region_label(part)
            title = label if label in part.unit.title else f"{label} (Dynamo: {part.unit.function})"
            QToolTip.showText(event.globalPosition().toPoint(), plain_tip(f"{title}\n{what}: {seconds}"), self)
        else:
            whole = next((full for rect, shown, full in self.drawn_labels if shown != full
                          and rect.contains(event.position())),
                         None)
            scroll = (self.scroll_hint() if len(self.rows) > SHOWN_ROWS and event.position().x() < self.label_width
                      else None)
            tip = "\n".join(text for text in (whole, scroll) if text)
            if tip:
                QToolTip.showText(event.globalPosition().toPoint(), plain_tip(tip), self)
            else:
                QToolTip.hideText()

    def mouseDoubleClickEvent(self, event) -> None:
        """A break's resume function: its unit selected (its code in the Code tab)."""
        part = self._part_at(event.position())
        if isinstance(part, Gap) and part.resume is not None:
            self.model.select_unit(part.resume)

    def mousePressEvent(self, event) -> None:
        part = self._part_at(event.position())
        if isinstance(part, CompiledRegion):
            self.model.select_unit(part.unit)
        elif isinstance(part, Gap) and part.brk.location:
            self.model.show_location(part.brk.location.file, part.brk.location.line)
