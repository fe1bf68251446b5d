"""Session navigator: ranks → frames → compile units with status icons; selecting a unit selects it
for every other view."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from inspector.gui.qt_session_model import LoadedSession, QtSessionModel
from inspector.gui.views.qt_status_icons import status_icon
from inspector.gui.qt_plain_text import plain_tip

UNIT_ROLE = Qt.ItemDataRole.UserRole


class QtNavigator(QTreeWidget):
    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.setHeaderLabels(["Compile unit", "Status", "Breaks", "Kernels", "Compile s"])
        self.setColumnWidth(0, 250)
        for column, width in ((1, 80), (2, 50), (3, 55), (4, 70)):
            self.setColumnWidth(column, width)
        self.setUniformRowHeights(True)
        self._items: dict[int, QTreeWidgetItem] = {}
        model.sigLoaded.connect(self._on_loaded)
        model.sigUnitSelected.connect(self._on_unit_selected)
        self.currentItemChanged.connect(self._on_current_changed)

    def _on_loaded(self, loaded: LoadedSession) -> None:
        self.clear()
        self._items.clear()
        many_ranks = len(loaded.session.ranks) > 1
        for rank in loaded.session.ranks:
            parent = self.invisibleRootItem()
            if many_ranks:
                parent = QTreeWidgetItem(self, [f"{rank.label}  ({len(rank.units)} units)"])
                parent.setExpanded(True)
            for frame in rank.frames:
                frame_item = QTreeWidgetItem(parent, [f"frame {frame.frame_id}: {frame.function or '?'}"])
                frame_item.setToolTip(0, plain_tip(str(frame.location or "")))
                frame_item.setExpanded(True)
                for unit in frame.units:
                    seconds = unit.metric("entire_frame_compile_time_s")
                    item = QTreeWidgetItem(frame_item, [
                        unit.title, unit.status.value.replace("_", " "), str(len(unit.breaks)) if unit.breaks else "",
                        str(loaded.analysis.fusion_of(unit).n_kernels), f"{seconds:.2f}" if seconds is not None else "—"])
                    item.setIcon(0, status_icon(unit.status.value))
                    item.setToolTip(0, plain_tip(f"{unit.location or ''}\nattempts: {unit.attempts}"
                                                 + (f"\nrecompiled: {unit.recompile.failed_guards[0].plain}"
                                                    if unit.recompile and unit.recompile.failed_guards else "")))
                    item.setData(0, UNIT_ROLE, unit)
                    self._items[id(unit)] = item
        if not self._items:
            QTreeWidgetItem(self, ["no compile units in this session"])

    def _on_unit_selected(self, unit) -> None:
        item = self._items.get(id(unit)) if unit is not None else None
        if item is not None and item is not self.currentItem():
            self.setCurrentItem(item)

    def _on_current_changed(self, current: QTreeWidgetItem | None, _previous) -> None:
        unit = current.data(0, UNIT_ROLE) if current is not None else None
        if unit is not None:
            self.model.select_unit(unit)
