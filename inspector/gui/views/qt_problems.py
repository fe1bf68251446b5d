"""Problems pane: breaks (one row per site, with torch's GB id and count), recompiles (one row per
cause, expandable to each recompile), silent fallbacks, wrong results, slow compiled code. Each kind
has its own icon; long reasons are elided with the full text, GB explanation and link in the tooltip;
a row's detail lines and recompiles are made when it is first opened. Activating a row selects its
compile unit and shows its source line. A distributed run adds a Rank column and a filter (all ranks
/ one rank) above the list."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox, QHBoxLayout, QHeaderView, QLabel, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget,
)

from inspector.core.analysis.issues import Issue
from inspector.core.analysis.rank_figures import rank_ranges
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel
from inspector.gui.qt_plain_text import plain_tip
from inspector.gui.views.qt_status_icons import kind_icon

PROBLEM_ROLE = Qt.ItemDataRole.UserRole
UNIT_ROLE = Qt.ItemDataRole.UserRole + 1
DETAIL_LINES = 12
ROWS_A_TURN = 256  # rows added in one turn of the event loop as a session arrives (a few ms)
RANK_COLUMN = 4
ALL_RANKS = "all ranks"
NOTHING_OPEN = ("Nothing open: a run's problems (breaks, recompiles, fallbacks, failed compiles) are listed here once "
                "it opens. A trace or profile opened alone is shown in the GPU tab, an XLA dump in the XLA tab.")


def tooltip_text(problem: Issue) -> str:
    """Plain text: the full title, the details, and torch's registry entry for a break type."""
    parts = [problem.title, problem.detail]
    if problem.reference:
        parts.append(problem.reference)
    return "\n\n".join(part for part in parts if part)


def _hidden(problem: Issue | None, rank: int | None) -> bool:
    """Whether the filter on `rank` hides the row of `problem`: a problem of the whole run (no rank)
    shows under all ranks only."""
    return rank is not None and (problem is None or rank not in problem.ranks)


def _detail_lines(problem: Issue) -> list[str]:
    lines = [line.strip() for line in [*problem.detail.split("\n"), *problem.reference.split("\n")][:DETAIL_LINES]]
    return [line for line in lines if line]


class QtProblems(QTreeWidget):
    """The list itself; `panel` is the pane as docked, with the rank filter above the list."""

    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.model = model
        self.setHeaderLabels(["Problem", "Count", "Where", "Unit", "Rank"])
        self.setColumnWidth(1, 50)
        self.setColumnWidth(2, 260)
        self.setColumnWidth(3, 90)
        # the problem takes the width the other columns leave (a fixed width beside a near-empty Unit
        # column would cut "size dim 0 (1 → 2)" off a recompile's title even at 1920)
        self.header().setStretchLastSection(False)
        self.header().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.setColumnHidden(RANK_COLUMN, True)
        self.setWordWrap(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.setUniformRowHeights(True)
        self.rank_filter = QComboBox()
        self.rank_filter.setToolTip("Show the problems of every rank or of one rank only")
        self.rank_filter.currentIndexChanged.connect(self._on_rank_chosen)
        self.rank_bar = QWidget()
        bar = QHBoxLayout(self.rank_bar)
        bar.setContentsMargins(4, 2, 4, 0)
        bar.addWidget(QLabel("Rank:"))
        bar.addWidget(self.rank_filter)
        bar.addStretch(1)
        self.rank_bar.hide()
        self.panel = QWidget()
        layout = QVBoxLayout(self.panel)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addWidget(self.rank_bar)
        layout.addWidget(self)
        model.on_each_session(self._on_loaded)
        self._say(NOTHING_OPEN)
        self.itemExpanded.connect(self._on_expanded)
        self.itemActivated.connect(self._on_activated)
        self.itemClicked.connect(self._on_activated)

    def _on_loaded(self, loaded: LoadedSession) -> Iterator[None]:
        """The rank filter, then the rows, ROWS_A_TURN in each turn of the event loop: a big job's
        thousand-odd rows in one go would hold the UI thread."""
        self.clear()
        ranks = [rank.rank for rank in loaded.session.ranks]
        many = len(ranks) > 1
        self.setColumnHidden(RANK_COLUMN, not many)
        self.rank_bar.setVisible(many)
        self.rank_filter.blockSignals(True)
        self.rank_filter.clear()
        self.rank_filter.addItem(ALL_RANKS, None)
        for rank in dict.fromkeys(rank for rank in ranks if rank is not None) if many else ():
            self.rank_filter.addItem(f"rank {rank}", rank)
        self.rank_filter.setCurrentIndex(0)
        self.rank_filter.blockSignals(False)
        if not loaded.issues:
            self._say("No problems: one graph per frame, no recompiles, nothing fell back.")
        for first in range(0, len(loaded.issues), ROWS_A_TURN):
            yield
            for problem in loaded.issues[first:first + ROWS_A_TURN]:
                self._add(problem)

    def _say(self, text: str) -> None:
        """A line of the list that is no problem: why it is empty. It reads across the whole pane (in the
        Problem column alone it was cut at 1280 wide)."""
        item = QTreeWidgetItem(self, [text])
        item.setToolTip(0, text)
        item.setFirstColumnSpanned(True)

    def shown_rank(self) -> int | None:
        """The rank whose problems the list shows (None: every rank's)."""
        return self.rank_filter.currentData()

    def _on_rank_chosen(self, _index: int) -> None:
        """Hide the rows of other ranks; a problem of the whole run (no rank) shows under all ranks only."""
        rank = self.shown_rank()
        for row in range(self.topLevelItemCount()):
            item = self.topLevelItem(row)
            item.setHidden(_hidden(item.data(0, PROBLEM_ROLE), rank))

    def _add(self, problem: Issue) -> None:
        # not Path: cheaper for each of thousands of rows
        where = f"{posixpath.basename(problem.file)}:{problem.line}" if problem.file else ""
        count = str(problem.count) if problem.kind in ("graph_break", "recompile") else ""
        ranks = rank_ranges(problem.ranks)
        item = QTreeWidgetItem(self, [problem.title, count, where, str(problem.compile_id or ""), ranks])
        item.setToolTip(RANK_COLUMN, f"on rank{'s' if len(problem.ranks) > 1 else ''} {ranks}" if ranks
                        else "the whole run")
        item.setIcon(0, kind_icon(problem.kind, problem.severity))
        tip = tooltip_text(problem)
        item.setToolTip(0, plain_tip(tip))
        item.setToolTip(2, plain_tip(f"{problem.file}:{problem.line}" if problem.file else ""))
        item.setData(0, PROBLEM_ROLE, problem)
        if problem.units or _detail_lines(problem):  # its rows are made when it is opened
            item.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
        if _hidden(problem, self.shown_rank()):  # a rank chosen while the rows were still coming
            item.setHidden(True)

    def _on_expanded(self, item: QTreeWidgetItem) -> None:
        """A problem's rows, made the first time it is opened: a big job has hundreds of problems with
        five or more rows each, which would be most of this list's time to fill."""
        problem = item.data(0, PROBLEM_ROLE)
        if problem is None or item.childCount():
            return
        where, ranks = item.text(2), item.text(RANK_COLUMN)
        for label, compile_id in problem.units:  # one child per recompile of a group: activating selects it
            child = QTreeWidgetItem(item, [label, "", where, str(compile_id), ranks])
            child.setData(0, UNIT_ROLE, compile_id)
            child.setToolTip(0, plain_tip(label))
        for line in _detail_lines(problem):
            child = QTreeWidgetItem(item, [line])
            child.setToolTip(0, plain_tip(line))
            child.setFirstColumnSpanned(True)  # a detail line reads across the whole pane

    def _on_activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        unit = item.data(0, UNIT_ROLE)
        while item.parent() is not None:
            item = item.parent()
        problem = item.data(0, PROBLEM_ROLE)
        if problem is None:
            return
        rank = self.shown_rank()
        if rank is not None and rank in problem.ranks:  # a break site on several ranks: its unit on the rank shown
            self.model.select_compile_id(unit or problem.unit_on(rank), rank)
        else:
            self.model.select_compile_id(unit or problem.unit_on(problem.rank), problem.rank)
        self.model.show_location(problem.file, problem.line)

