"""Problems pane: breaks (one row per site, with count), recompiles, silent fallbacks, wrong results,
slow compiled code. Activating a row selects its compile unit and shows its source line."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QTreeWidget, QTreeWidgetItem

from inspector.gui.qt_session_model import LoadedSession, QtSessionModel
from inspector.gui.views.qt_status_icons import status_icon
from inspector.gui.qt_plain_text import plain_tip

PROBLEM_ROLE = Qt.ItemDataRole.UserRole


class QtProblems(QTreeWidget):
    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.setHeaderLabels(["Problem", "Where", "Unit"])
        self.setColumnWidth(0, 520)
        self.setColumnWidth(1, 300)
        self.setWordWrap(True)
        model.sigLoaded.connect(self._on_loaded)
        self.itemActivated.connect(self._on_activated)
        self.itemClicked.connect(self._on_activated)

    def _on_loaded(self, loaded: LoadedSession) -> None:
        self.clear()
        for problem in loaded.problems:
            where = f"{Path(problem.file).name}:{problem.line}" if problem.file else ""
            item = QTreeWidgetItem(self, [problem.title, where, str(problem.compile_id or "")])
            item.setIcon(0, status_icon(problem.severity))
            item.setToolTip(0, plain_tip(problem.detail))
            item.setToolTip(1, plain_tip(f"{problem.file}:{problem.line}" if problem.file else ""))
            item.setData(0, PROBLEM_ROLE, problem)
            for line in problem.detail.split("\n")[:6]:
                if line.strip():
                    QTreeWidgetItem(item, [line.strip()])
        if not loaded.problems:
            QTreeWidgetItem(self, ["No problems: one graph per frame, no recompiles, nothing fell back."])

    def _on_activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        while item.parent() is not None:
            item = item.parent()
        problem = item.data(0, PROBLEM_ROLE)
        if problem is None:
            return
        self.model.select_compile_id(problem.compile_id, problem.rank)
        self.model.show_location(problem.file, problem.line)
