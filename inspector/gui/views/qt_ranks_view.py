"""Ranks view: one row per rank of a distributed run (units, breaks, recompiles, cache, compile time,
time to the first collective, straggler) and the divergence report beneath. Clicking a rank selects
its first compile unit; clicking a finding selects the unit it names on its first rank."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView, QLabel, QListWidget, QListWidgetItem, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout,
    QWidget,
)

from inspector.core.analysis.ranks import STRAGGLER_RULE, RankReport
from inspector.gui.qt_plain_text import plain_tip
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel

COLUMNS = ("Rank", "Units", "Breaks", "Recompiles", "Cache hits", "Cache misses", "Failed", "Compile s",
           "First collective s", "Straggler")
RANK_ROLE = Qt.ItemDataRole.UserRole


class _NumberItem(QTableWidgetItem):
    """A cell that sorts by its number (a dash, for 'not recorded', sorts first)."""

    def __init__(self, value):
        super().__init__("—" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value))
        self.number = float("-inf") if value is None else float(value)
        self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def __lt__(self, other):
        return self.number < other.number if isinstance(other, _NumberItem) else super().__lt__(other)


class QtRanksView(QWidget):
    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.heading = QLabel("Open a distributed run (a folder of per-rank logs) to compare its ranks.")
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        self.table.setSortingEnabled(True)
        self.findings = QListWidget()
        self.findings.setWordWrap(True)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.findings)
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(split)
        self.report: RankReport | None = None
        model.sigLoaded.connect(self._on_loaded)
        self.table.cellClicked.connect(self._on_rank_clicked)
        self.findings.itemClicked.connect(self._on_finding_clicked)

    def _on_loaded(self, loaded: LoadedSession) -> None:
        report = self.report = loaded.analysis.ranks
        stragglers = report.stragglers()
        self.table.setSortingEnabled(False)
        self.table.setRowCount(len(report.figures))
        for row, figures in enumerate(report.figures):
            cells = [figures.rank, figures.units, figures.breaks, figures.recompiles, figures.cache_hits,
                     figures.cache_misses, figures.failed, figures.compile_time_s, figures.first_collective_s]
            for column, value in enumerate(cells):
                item = _NumberItem(value) if value is not None or column else QTableWidgetItem(figures.log)
                item.setData(RANK_ROLE, figures.rank)
                self.table.setItem(row, column, item)
            straggler = QTableWidgetItem("straggler" if figures.rank in stragglers else "")
            straggler.setData(RANK_ROLE, figures.rank)
            straggler.setToolTip(plain_tip(f"A straggler's figure is {STRAGGLER_RULE}."))
            self.table.setItem(row, len(COLUMNS) - 1, straggler)
        self.table.setSortingEnabled(True)
        self.table.sortItems(0, Qt.SortOrder.AscendingOrder)
        self.table.resizeColumnsToContents()
        self.findings.clear()
        for line, finding in zip(report.lines(), (None, *report.findings)):
            item = QListWidgetItem(line if finding is None else f"{line}  [{finding.kind}]")
            item.setData(RANK_ROLE, finding)
            self.findings.addItem(item)
        count = len(report.figures)
        self.heading.setText(f"{count} rank{'s' if count != 1 else ''}; {len(report.findings)} divergence finding(s)."
                             if count > 1 else "A single-process run: nothing to compare across ranks.")

    def _on_rank_clicked(self, row: int, _column: int) -> None:
        item = self.table.item(row, 0)
        if item is None or not self.model.loaded:
            return
        rank = item.data(RANK_ROLE)
        units = next((r.units for r in self.model.loaded.session.ranks if r.rank == rank), [])
        if units:
            self.model.select_unit(units[0])

    def _on_finding_clicked(self, item: QListWidgetItem) -> None:
        finding = item.data(RANK_ROLE)
        if finding is None or not finding.ranks or not self.model.loaded:
            return
        rank = next((r for r in self.model.loaded.session.ranks if r.rank == finding.ranks[0]), None)
        if rank is None:
            return
        units = rank.units
        named = [unit for unit in units if str(unit.compile_id) in finding.compile_ids]
        if named or units:
            self.model.select_unit((named or units)[0])
