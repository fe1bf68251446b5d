"""Ranks view: one row per rank of a distributed run (units, breaks, recompiles, cache, compile time,
time to the first collective, straggler), one lane per rank with its compile units beneath, and the
divergence report. Clicking a rank selects its first compile unit; clicking a bar, that unit;
clicking a finding, the unit it names on its first rank.

A big job shows here first from its per-rank index, while every rank's details are still being read;
a click made meanwhile takes effect when they are in."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QAbstractItemView, QLabel, QListWidget, QListWidgetItem, QSplitter, QTableWidget, QTableWidgetItem, QVBoxLayout,
    QWidget,
)

from inspector.core.analysis.ranks import STRAGGLER_RULE, RankReport
from inspector.gui.qt_plain_text import plain_tip
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel
from inspector.gui.views.qt_rank_lanes import QtRankLanes

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
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)  # a line a rank: more ranks in view
        self.table.setSortingEnabled(True)
        self.findings = QListWidget()
        self.findings.setWordWrap(True)
        self.lanes = QtRankLanes()
        split = QSplitter(Qt.Orientation.Vertical)
        for part in (self.table, self.lanes, self.findings):
            split.addWidget(part)
        split.setSizes([300, 300, 200])
        layout = QVBoxLayout(self)
        layout.addWidget(self.heading)
        layout.addWidget(split)
        self.report: RankReport | None = None
        self.details = False  # whether the report shown is the loaded session's (else an index overview)
        self.pending = None  # (rank, compile ids) clicked while the details were still being read
        self.sort = (0, Qt.SortOrder.AscendingOrder)  # by rank, until the user sorts by a column: then that stays
        self.table.horizontalHeader().sortIndicatorChanged.connect(lambda column, order: setattr(self, "sort", (column, order)))
        model.sigOverview.connect(self._on_overview)
        model.sigLoaded.connect(self._on_loaded)
        model.sigLoadFailed.connect(self._on_load_failed)
        self.table.cellClicked.connect(self._on_rank_clicked)
        self.findings.itemClicked.connect(self._on_finding_clicked)
        self.lanes.sigUnitClicked.connect(lambda rank, compile_id: self._select(rank, (compile_id,)))

    def _on_overview(self, report: RankReport) -> None:
        """A big job's overview from the index: shown now; clicks wait for the details."""
        self.details, self.pending = False, None
        self._show(report)
        self.heading.setText(self._counts(report) + " Reading every rank's details: a rank, bar or finding "
                             "you click is selected once they are in.")

    def _on_loaded(self, loaded: LoadedSession) -> None:
        """The details are in: the report again, now with graph differences explained node by node;
        the rank selected meanwhile stays selected, and a click made while reading takes effect."""
        selected = self.selected_rank() if not self.details else None
        self.details = True
        report = loaded.analysis.ranks
        self._show(report)
        self.heading.setText(self._counts(report) if len(report.figures) > 1
                             else "A single-process run: nothing to compare across ranks.")
        if selected is not None:
            self.select_rank_row(selected)
        if self.pending is not None:  # after every view has the session and its first unit is selected
            rank, compile_ids = self.pending
            self.pending = None
            QTimer.singleShot(0, lambda: self._select(rank, compile_ids))

    def _on_load_failed(self, _path: str, message: str) -> None:
        if not self.details and self.report is not None:
            self.pending = None
            self.heading.setText(self._counts(self.report) + f" The details could not be read: {message}")

    @staticmethod
    def _counts(report: RankReport) -> str:
        count = len(report.figures)
        return f"{count} rank{'s' if count != 1 else ''}; {len(report.findings)} divergence finding(s)."

    def _show(self, report: RankReport) -> None:
        self.report = report
        stragglers = report.stragglers()
        self.table.setSortingEnabled(False)
        self.table.clearContents()
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
        self.table.sortItems(*self.sort)
        self.table.resizeColumnsToContents()
        self.findings.clear()
        for line, finding in zip(report.lines(), (None, *report.findings)):
            item = QListWidgetItem(line if finding is None else f"{line}  [{finding.kind}]")
            item.setData(RANK_ROLE, finding)
            self.findings.addItem(item)
        self.lanes.show_report(report)

    def selected_rank(self):
        """The rank of the selected row (None when no row is selected)."""
        rows = self.table.selectionModel().selectedRows()
        return self.table.item(rows[0].row(), 0).data(RANK_ROLE) if rows else None

    def select_rank_row(self, rank) -> None:
        row = next((r for r in range(self.table.rowCount()) if self.table.item(r, 0).data(RANK_ROLE) == rank), None)
        if row is not None:
            self.table.selectRow(row)

    def _on_rank_clicked(self, row: int, _column: int) -> None:
        item = self.table.item(row, 0)
        if item is not None:
            self._select(item.data(RANK_ROLE), ())

    def _on_finding_clicked(self, item: QListWidgetItem) -> None:
        finding = item.data(RANK_ROLE)
        if finding is not None and finding.ranks:
            self._select(finding.ranks[0], finding.compile_ids)

    def _select(self, rank, compile_ids: tuple[str, ...]) -> None:
        """Select the first unit of `rank` named in `compile_ids` (else its first unit) in every view;
        while the details are still read, remember it for when they are in."""
        if not self.details:
            self.pending = (rank, compile_ids)
            label = f"rank {rank}" if rank is not None else "that log"
            self.heading.setText(self._counts(self.report) + f" Reading every rank's details: {label} is "
                                 "selected once they are in.")
            return
        if not self.model.loaded:
            return
        units = next((r.units for r in self.model.loaded.session.ranks if r.rank == rank), [])
        named = [unit for unit in units if str(unit.compile_id) in compile_ids]
        if named or units:
            self.model.select_unit((named or units)[0])
