"""Shapes tab: the dynamic shapes of the selected compile unit — the symbols Dynamo created and the
input each stands for, the guards it added and the dims it specialised to a constant, each at the
user's line (double-click a row to see the line in the Source view). Specialisations come first:
they answer "why did my dynamic dim become static"."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from inspector.core.analysis.shapes import ShapeEvent
from inspector.core.analysis.user_names import unit_title
from inspector.core.model.session import CompileUnit
from inspector.core.outputs.plain_text import elided
from inspector.gui.qt_plain_text import plain_tip
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel

KIND_WORDS = {"specialization": "specialised", "symbol": "symbol", "unbacked": "unbacked symbol", "guard": "guard"}
ORDER = {"specialization": 0, "unbacked": 1, "symbol": 2, "guard": 3}
EVENT_ROLE = Qt.ItemDataRole.UserRole
# A guard can be megabytes long (torch writes whole expressions): a row as tall as its text would be
# taller than any screen and slow to lay out, so a cell shows its start, its tooltip more.
SHOWN_CHARS = 600
TIP_CHARS = 10_000
WHOLE_IN = "`compile-inspector summary --json`"


class QtShapesView(QWidget):
    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self._by_unit: dict[CompileUnit, list[ShapeEvent]] = {}
        self.note = QLabel("Open a session, then pick a compile unit.")
        self.note.setWordWrap(True)
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Kind", "Input", "Symbol, guard or value", "Your line"])
        self.table.verticalHeader().setVisible(False)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.table.setColumnWidth(0, 120)
        self.table.setColumnWidth(1, 150)
        self.table.setColumnWidth(2, 380)
        # each row as tall as its (bounded) text wrapped to its column: a symbol's ranges and the user's line
        # run to several lines, which a fixed height cuts with "…" even at 1920 wide
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.setVerticalScrollMode(QTableWidget.ScrollMode.ScrollPerPixel)  # a tall row scrolls through
        self.table.itemDoubleClicked.connect(self._on_row_activated)
        layout = QVBoxLayout(self)
        layout.addWidget(self.note)
        layout.addWidget(self.table)
        model.on_each_session(self._on_loaded)
        model.sigUnitSelected.connect(self._show)

    def _on_loaded(self, loaded: LoadedSession) -> None:
        self._by_unit = dict(loaded.analysis.shapes)
        self._show(self.model.unit)

    def _show(self, unit: CompileUnit | None) -> None:
        events = sorted(self._by_unit.get(unit, []) if unit is not None else [], key=lambda e: ORDER[e.kind])
        self.table.setRowCount(len(events))
        for row, event in enumerate(events):
            cells = (KIND_WORDS[event.kind], event.shown_source or "", event.detail,
                     f"{event.location}: {event.code}" if event.location and event.code else event.location or "")
            for column, text in enumerate(cells):
                item = QTableWidgetItem(elided(text, SHOWN_CHARS, WHOLE_IN))
                item.setToolTip(plain_tip(elided(text, TIP_CHARS, WHOLE_IN)))
                item.setData(EVENT_ROLE, event)
                if event.kind == "specialization":
                    item.setForeground(QColor("#b42318"))
                self.table.setItem(row, column, item)
        if unit is None:
            self.note.setText("Pick a compile unit to see its symbols, guards and specialisations.")
        elif not events:
            self.note.setText(f"{unit_title(unit)}: no dynamic shapes recorded (every size was static, or the log "
                              "predates symbolic-shape records).")
        else:
            special = sum(event.kind == "specialization" for event in events)
            self.note.setText(f"{unit_title(unit)}: {sum(e.kind in ('symbol', 'unbacked') for e in events)} symbol(s), "
                              f"{sum(e.kind == 'guard' for e in events)} guard(s), {special} specialisation(s)"
                              + (" — a dynamic dim was made static, in red" if special else "")
                              + ". Double-click a row to see its line.")

    def _on_row_activated(self, item: QTableWidgetItem) -> None:
        event: ShapeEvent = item.data(EVENT_ROLE)
        if event is not None and event.user_line is not None:
            self.model.show_location(event.user_line.file, event.user_line.line)
