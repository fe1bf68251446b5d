"""The Ranks tab's table as a model: a cell's text is made when the view asks for it (the rows on
screen and the few that size the columns), not as an item per cell up front: for a big job, ten items
a rank would hold the UI thread as the overview arrives, and the model's cost does not grow with the ranks."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt

from inspector.core.analysis.rank_figures import STRAGGLER_RULE, RankFigures, RankReport
from inspector.gui.qt_plain_text import plain_tip

COLUMNS = ("Rank", "Units", "Breaks", "Recompiles", "Cache hits (all)", "Cache misses (all)", "Failed", "Compile s",
           "First collective s", "Straggler")
# What a column counts where another pane counts something else under a like name.
COLUMN_TIPS = {"Breaks": "every graph break of the rank (occurrences, not sites)",
               "Cache hits (all)": "lookups of every cache together (FX graph, AOTAutograd, …) that hit; the "
                                   "Summary's cache hit rate is the FX graph cache's alone",
               "Cache misses (all)": "lookups of every cache together (FX graph, AOTAutograd, …) that missed"}
STRAGGLER = len(COLUMNS) - 1
POSITION_ROLE = Qt.ItemDataRole.UserRole  # on any cell: the place of its rank in the report's figures
NUMBER_ALIGNMENT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
STRAGGLER_TIP = plain_tip(f"A straggler's figure is {STRAGGLER_RULE}.")


def _values(figures: RankFigures) -> tuple:
    return (figures.rank, figures.units, figures.breaks, figures.recompiles, figures.cache_hits, figures.cache_misses,
            figures.failed, figures.compile_time_s, figures.first_collective_s)


def _text(value) -> str:
    return "—" if value is None else f"{value:.2f}" if isinstance(value, float) else str(value)


class RanksTableModel(QAbstractTableModel):
    """One row per rank of a report, in the order last sorted by (the user's column, else by rank)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.report: RankReport | None = None
        self._stragglers: set = set()
        self._order: list[int] = []  # row → place in report.figures
        self._sorted_by = (0, Qt.SortOrder.AscendingOrder)

    def show(self, report: RankReport | None) -> None:
        self.beginResetModel()
        self.report = report
        self._stragglers = report.stragglers() if report is not None else set()
        self._order = list(range(len(report.figures))) if report is not None else []
        self._arrange(*self._sorted_by)
        self.endResetModel()

    def position(self, row: int) -> int:
        """The place in the report's figures of the rank on `row`."""
        return self._order[row]

    def row_of(self, position: int) -> int | None:
        return self._order.index(position) if position in range(len(self._order)) else None

    def text(self, row: int, column: int) -> str:
        """What the cell shows."""
        figures = self.report.figures[self._order[row]]
        if column == STRAGGLER:
            return "straggler" if figures.rank in self._stragglers else ""
        if column == 0 and figures.rank is None:
            return figures.log
        return _text(_values(figures)[column])

    # --- the model Qt asks ---------------------------------------------------------------------------
    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._order)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row, column = index.row(), index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.text(row, column)
        if role == Qt.ItemDataRole.TextAlignmentRole and column != STRAGGLER and (column or self._number_in(row)):
            return NUMBER_ALIGNMENT
        if role == Qt.ItemDataRole.ToolTipRole and column == STRAGGLER:
            return STRAGGLER_TIP
        if role == POSITION_ROLE:
            return self._order[row]
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole and COLUMNS[section] in COLUMN_TIPS:
            return plain_tip(COLUMN_TIPS[COLUMNS[section]])
        return None

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        """Rows by the column's number (a dash, 'not recorded', first); the selection stays on its rank."""
        self.layoutAboutToBeChanged.emit()
        kept = [(index, self._order[index.row()]) for index in self.persistentIndexList()]
        self._arrange(column, order)
        rows = {position: row for row, position in enumerate(self._order)}
        self.changePersistentIndexList([index for index, _ in kept],
                                       [self.index(rows[position], index.column()) for index, position in kept])
        self.layoutChanged.emit()

    def _arrange(self, column: int, order) -> None:
        self._sorted_by = (column, order)
        if self.report is None:
            return
        figures = self.report.figures
        if column == STRAGGLER:
            key = lambda position: figures[position].rank in self._stragglers  # noqa: E731
        elif column == 0:  # a log without a rank number sorts by its name, before the numbered ranks
            key = lambda position: ((0, figures[position].log) if figures[position].rank is None  # noqa: E731
                                    else (1, figures[position].rank))
        else:
            key = lambda position: _number(_values(figures[position])[column])  # noqa: E731
        self._order.sort(key=key, reverse=order == Qt.SortOrder.DescendingOrder)

    def _number_in(self, row: int) -> bool:
        return self.report.figures[self._order[row]].rank is not None


def _number(value) -> float:
    return float("-inf") if value is None else float(value)

