"""Ranks view: one row per rank of a distributed run (units, breaks, recompiles, cache, compile time,
time to the first collective, straggler), one lane per rank with its compile units beneath, and the
divergence report. Clicking a rank selects its first compile unit; clicking a bar, that unit;
clicking a finding, the unit it names on its first rank.

A big job shows here first from its per-rank index, while every rank's details are still being read;
a click made meanwhile takes effect when they are in."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView, QLabel, QListWidget, QListWidgetItem, QSplitter, QTableView, QVBoxLayout, QWidget,
)

from inspector.core.analysis.rank_figures import RankReport
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel
from inspector.gui.views.qt_rank_lanes import QtRankLanes
from inspector.gui.views.qt_ranks_table import RanksTableModel

FINDING_ROLE = Qt.ItemDataRole.UserRole  # on a report line: its Finding
NOTHING_OPEN = "Open a distributed run (a folder of per-rank logs) to compare its ranks."
# What the view shows: nothing, a big job's overview while its details are read, an overview whose
# details could not be read, or the open session's report.
EMPTY, OVERVIEW, FAILED, DETAILS = "empty", "overview", "failed", "details"
SIZED_ROWS = 128  # rows whose text sets a column's width: measuring every rank's would hold the UI thread


class QtRanksView(QWidget):
    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.heading = QLabel(NOTHING_OPEN)
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        self.heading.setWordWrap(True)  # the ranks that agree and what a click waits for: often longer than the tab
        self.rows = RanksTableModel(self)
        self.table = QTableView()
        self.table.setModel(self.rows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        # a line a rank: more ranks in view
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        # by rank, until the user sorts by a column: then that stays
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
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
        self.phase = EMPTY
        self.pending = None  # (row of the report, compile ids) clicked while the details were still being read
        self._place_of_unit: dict = {}  # compile unit → the place of its rank in the report
        model.sigOpening.connect(self._on_opening)
        model.sigOverview.connect(self._on_overview)
        model.on_each_session(self._on_loaded)
        model.sigLoadFailed.connect(self._on_load_failed)
        model.sigLoaded.connect(self._on_every_view_loaded)
        model.sigUnitSelected.connect(self._on_unit_selected)
        self.table.clicked.connect(lambda index: self._select(self.rows.position(index.row()), ()))
        self.findings.itemClicked.connect(self._on_finding_clicked)
        self.lanes.sigUnitClicked.connect(lambda lane, compile_id: self._select(lane, (compile_id,)))

    def _on_opening(self, _path: str) -> None:
        """Another open starts: a click waiting for an earlier open's details is forgotten, and an
        overview whose details never came gives way to the open session's report (or to nothing)."""
        self.pending = None
        if self.phase in (OVERVIEW, FAILED):
            if self.model.loaded is not None:
                self._show_loaded(self.model.loaded)
            else:
                self._clear()

    def _on_overview(self, report: RankReport) -> None:
        """A big job's overview from the index (or its ranks read so far): shown now; clicks wait for
        the details. A rank selected or clicked among the ranks read first stays so when every rank is in."""
        earlier = self.report if self.phase == OVERVIEW else None
        selected, pending = (self.selected_row(), self.pending) if earlier is not None else (None, None)
        self.phase, self.pending = OVERVIEW, None
        self._show(report)
        self.heading.setText(self._counts(report) + " Reading every rank's details: a rank, bar or finding "
                             "you click is selected once they are in.")
        if earlier is None:
            return
        if selected is not None and (place := _place_of(report, earlier.figures[selected])) is not None:
            self.select_row(place)
        if pending is not None and (place := _place_of(report, earlier.figures[pending[0]])) is not None:
            self._select(place, pending[1])

    def _on_loaded(self, loaded: LoadedSession) -> None:
        """The details are in: the report again, now with graph differences explained node by node;
        the row selected in the overview stays selected, and a click made while reading takes effect."""
        selected = self.selected_row() if self.phase == OVERVIEW else None
        self._show_loaded(loaded)
        if selected is not None:
            self.select_row(selected)

    def _on_every_view_loaded(self, _loaded: LoadedSession) -> None:
        """A click made while the details were read, now that every view has them and the session's
        first unit is selected (else that selection would undo it)."""
        if self.pending is not None:
            position, compile_ids = self.pending
            self.pending = None
            self._select(position, compile_ids)

    def _show_loaded(self, loaded: LoadedSession) -> None:
        self.phase = DETAILS
        report = loaded.ranks
        self._show(report)
        # made now, in the view's own turn: looking through every rank's units at each selection is too slow
        places = {(f.rank, f.log): place for place, f in enumerate(report.figures)}
        self._place_of_unit = {unit: places.get((rank.rank, rank.log_path.name if rank.log_path else ""))
                               for rank in loaded.session.ranks for unit in rank.units}
        self.heading.setText(self._counts(report) if len(report.figures) > 1
                             else "A single-process run: nothing to compare across ranks.")

    def _on_load_failed(self, _path: str, message: str) -> None:
        """The open under way failed: if it showed an overview, that stays, saying why it is all there is."""
        if self.phase == OVERVIEW:
            self.phase, self.pending = FAILED, None
            self.heading.setText(self._counts(self.report)
                                 + f" Only this overview: the details could not be read: {message}")

    def _clear(self) -> None:
        self.phase, self.report, self._place_of_unit = EMPTY, None, {}
        self.rows.show(None)
        self.findings.clear()
        self.lanes.show_report(None)
        self.heading.setText(NOTHING_OPEN)

    @staticmethod
    def _counts(report: RankReport) -> str:
        """The heading: ranks, which agree (the first line of the report, not a finding), findings."""
        count = len(report.figures)
        if report.unread:
            return f"{report.lines()[0]}."
        agree = report.lines()[:1] if report.findings else []
        return (f"{count} rank{'s' if count != 1 else ''}; {len(report.findings)} divergence finding(s)"
                + "".join(f"; {line}" for line in agree) + ".")

    def _show(self, report: RankReport) -> None:
        """Rows keep their place in `report.figures` (ranks of one job may share a number, or have none).
        The details of a big job mostly bring the overview's figures again: then the table stays as it
        is (its rows, order and selection), since rebuilding a big job's rows holds the UI thread."""
        same_rows = (self.report is not None and report.figures == self.report.figures
                     and report.stragglers() == self.report.stragglers())
        self.report = report
        if not same_rows:
            self._fill_table(report)
        self.findings.clear()
        for line, finding in zip(report.lines()[1:], report.findings):  # the first line, who agrees, heads them
            item = QListWidgetItem(f"{line}  [{finding.kind}]")
            item.setData(FINDING_ROLE, finding)
            self.findings.addItem(item)
        if not report.findings:
            words = (report.lines()[0] + "." if report.unread
                     else "One process wrote this run: there is no other rank to compare with."
                     if len(report.figures) < 2
                     else report.lines()[0] + ": nothing differs between them.")
            item = QListWidgetItem(words)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled)  # read, not chosen
            self.findings.addItem(item)
        self.lanes.show_report(report)

    def _fill_table(self, report: RankReport) -> None:
        self.table.clearSelection()  # a row's place means another rank in another report
        self.rows.show(report)
        self._size_columns()

    def _size_columns(self) -> None:
        """Each column as wide as its longest text in the first SIZED_ROWS rows, measured once: Qt's
        own sizing asks the model for every role of every cell it measures, slow for a big job."""
        metrics, header = self.table.fontMetrics(), self.table.horizontalHeader()
        rows = range(min(SIZED_ROWS, self.rows.rowCount()))
        for column in range(self.rows.columnCount()):
            longest = max((self.rows.text(row, column) for row in rows), key=len, default="")
            header.resizeSection(column, max(header.sectionSizeHint(column), metrics.horizontalAdvance(longest) + 12))

    def selected_row(self) -> int | None:
        """The place in the report of the selected row (None when no row is selected)."""
        rows = self.table.selectionModel().selectedRows()
        return self.rows.position(rows[0].row()) if rows else None

    def select_row(self, position: int) -> None:
        row = self.rows.row_of(position)
        if row is not None:
            self.table.selectRow(row)

    def _on_unit_selected(self, unit) -> None:
        """The row of the selected unit's rank is selected too, whichever view chose the unit."""
        if unit is None or self.phase != DETAILS or self.model.loaded is None:
            return
        position = self._place_of_unit.get(unit)
        if position is not None and position != self.selected_row():
            self.select_row(position)

    def _on_finding_clicked(self, item: QListWidgetItem) -> None:
        finding = item.data(FINDING_ROLE)
        if finding is not None and finding.ranks and self.report is not None:
            position = next((i for i, f in enumerate(self.report.figures) if f.rank == finding.ranks[0]), None)
            if position is not None:
                self._select(position, finding.compile_ids)

    def _select(self, position: int, compile_ids: tuple[str, ...]) -> None:
        """Select the first unit of the rank at `position` of the report named in `compile_ids` (else
        its first unit) in every view; while the details are still read, remember it for when they are in."""
        figures = self.report.figures[position]
        label = f"rank {figures.rank}" if figures.rank is not None else figures.log
        if self.phase == OVERVIEW:
            self.pending = (position, compile_ids)
            self.heading.setText(self._counts(self.report) + f" Reading every rank's details: {label} is "
                                 "selected once they are in.")
            return
        if self.phase == FAILED:
            self.heading.setText(self._counts(self.report) + f" The details could not be read: no unit of {label} "
                                 "to select.")
            return
        if not self.model.loaded:
            return
        rank = next((r for r in self.model.loaded.session.ranks  # a rank number alone may be shared
                     if r.rank == figures.rank and (r.log_path.name if r.log_path else "") == figures.log), None)
        units = rank.units if rank is not None else []
        named = [unit for unit in units if str(unit.compile_id) in compile_ids]
        if named or units:
            self.model.select_unit((named or units)[0])


def _place_of(report: RankReport, figures) -> int | None:
    """Where the rank of `figures` (an earlier report's) is in `report`."""
    return next((place for place, other in enumerate(report.figures)
                 if (other.rank, other.log) == (figures.rank, figures.log)), None)
