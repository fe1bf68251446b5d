"""Session navigator: ranks → frames → compile units with status icons; selecting a unit selects it
for every other view. While a capture runs it lists the compile units seen so far and the step each
is in; the session replaces them when it opens. A frame's row names its function as the user knows
it (`forward (resumed at line 19)`), its units' rows their compile ids, so the names fit a narrow
column; names that still do not fit elide at a word or dot, never mid-word; every cell's tooltip holds its
full text."""

from __future__ import annotations

from collections.abc import Iterator

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem

from inspector.core.analysis.user_names import called_function, frame_title, unit_title
from inspector.core.model.session import CompileUnit, UnitStatus
from inspector.core.numbers import count, seconds
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel
from inspector.gui.views.qt_elide import QtBoundaryElideDelegate
from inspector.gui.views.qt_status_icons import COLOURS, status_icon
from inspector.gui.qt_plain_text import plain_tip

UNIT_ROLE = Qt.ItemDataRole.UserRole
RANK_ROLE = Qt.ItemDataRole.UserRole + 1  # on a rank listed when opened: its place among the session's ranks
LISTED_RANKS = 16  # up to this many ranks, every rank's units are listed (and shown) when a session opens
RANKS_A_TURN = 256  # ranks' rows added in one turn of the event loop as a session arrives
UNITS_A_TURN = 256  # units' rows added in one turn of the event loop as a session arrives
COLUMN_TIPS = ("compile id and function", "graph breaks in this unit",
               "kernels Inductor generated",
               "compile time: the frame's (entire_frame_compile_time_s) and its backward graph's")


NO_RUN = "No run open"


def status_legend() -> str:
    """The first column's tooltip: what each status dot's colour says about how the compile ended."""
    dots = "<br>".join(f"<span style='color:{COLOURS[status.value]}'>●</span> {STATUS_WORDS[status]}"
                       for status in UnitStatus)
    return f"Compile id and function; the dot says how the compile ended:<br>{dots}"


STATUS_WORDS = {UnitStatus.OK: "compiled", UnitStatus.CACHE_HIT: "compiled from the FX graph cache",
                UnitStatus.GRAPH_BREAK: "compiled up to a graph break",
                UnitStatus.RESTART: "Dynamo restarted its analysis",
                UnitStatus.FAILED: "failed (the frame runs eagerly)", UnitStatus.EMPTY_GRAPH: "captured no operations",
                UnitStatus.CUT: "cut off: the run ended inside its compile"}


class QtNavigator(QTreeWidget):
    def __init__(self, model: QtSessionModel, capture=None):
        super().__init__()
        self.model = model
        self.setHeaderLabels(["Compile unit", "Brk", "Krn", "Time"])  # short: the names get the width
        self.setIndentation(12)
        for column, tip in enumerate(COLUMN_TIPS):
            self.headerItem().setToolTip(column, tip)
        self.headerItem().setToolTip(0, status_legend())
        header = self.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setMinimumSectionSize(28)
        self.setMinimumWidth(200)
        for column in range(1, 4):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.setItemDelegateForColumn(0, QtBoundaryElideDelegate(self))
        self.setUniformRowHeights(True)
        self._items: dict[CompileUnit, QTreeWidgetItem] = {}
        self._live: dict[str, QTreeWidgetItem] = {}
        self._unlisted: dict = {}  # place among the ranks: (its item, the rank), for ranks not listed yet
        self._kernel_counts: dict[CompileUnit, int] = {}  # the open session's: its units' kernels unparsed
        self._rank_of: dict[CompileUnit, int] = {}  # the place of its rank, for the units of those ranks
        self.itemExpanded.connect(self._on_expanded)
        # a blank pane beside a trace opened alone (shown in the GPU tab) read as broken
        hint = QTreeWidgetItem(self, [NO_RUN])
        hint.setToolTip(0, "A run's compile units are listed here once it opens (File menu); a trace opened alone "
                           "is shown in its own tab")
        hint.setFlags(Qt.ItemFlag.NoItemFlags)
        hint.setFirstColumnSpanned(True)
        model.on_each_session(self._on_loaded)
        model.sigUnitSelected.connect(self._on_unit_selected)
        self.currentItemChanged.connect(self._on_current_changed)
        if capture is not None:
            capture.sigStarted.connect(self._on_capture_started)
            capture.sigProgress.connect(self._on_capture_progress)

    @staticmethod
    def _tip_all(item: QTreeWidgetItem) -> QTreeWidgetItem:
        for column in range(item.columnCount()):
            if not item.toolTip(column):
                item.setToolTip(column, plain_tip(item.text(column)))
        return item

    # --- live, during a capture ---------------------------------------------------------------
    def _on_capture_started(self, _session: str) -> None:
        self.clear()
        self._items.clear()
        self._live = {}
        self._unlisted, self._rank_of = {}, {}
        note = QTreeWidgetItem(self, ["capturing…"])
        note.setToolTip(0, "compile units appear here as they start; the full tree when the session opens")
        note.setFlags(Qt.ItemFlag.NoItemFlags)

    def _on_capture_progress(self, progress) -> None:
        for compile_id, steps in progress.units.items():
            item = self._live.get(compile_id)
            if item is None:
                item = self._live[compile_id] = QTreeWidgetItem(self, [f"[{compile_id}]"])
            running = next((step for step, state in steps.items() if state.running), None)
            item.setText(0, f"[{compile_id}] {running or 'compiled'}")
            item.setToolTip(0, plain_tip(f"[{compile_id}]: " + (f"now in {running}" if running else "no stage running")
                                         + "; the full entry appears when the session opens"))

    def _on_loaded(self, loaded: LoadedSession) -> Iterator[None]:
        """Every unit, under its frame, under its rank. Past LISTED_RANKS ranks a rank's units are
        listed when it is opened or one of its units is selected elsewhere (listing every rank's items would
        hold the UI thread, and most ranks are never opened). The rows come in steps, one a turn of the event
        loop, RANKS_A_TURN ranks or UNITS_A_TURN units, so the UI thread answers the user between them."""
        self.clear()
        self._items.clear()
        self._live = {}
        self._unlisted, self._rank_of = {}, {}
        self._kernel_counts = loaded.kernel_counts
        ranks = loaded.session.ranks
        on_demand = len(ranks) > LISTED_RANKS
        for position, rank in enumerate(ranks):
            if position % RANKS_A_TURN == 0 and position:
                yield
            if len(ranks) == 1:
                yield from self._list_units(self.invisibleRootItem(), rank)
                continue
            item = QTreeWidgetItem(self, [f"{rank.label}  ({count(len(rank.units), 'unit')})"])
            # whole, where the column is narrow
            item.setToolTip(0, plain_tip(f"{item.text(0)}\n{rank.log_path or ''}".rstrip()))
            if on_demand:  # keyed by place: logs of one job may share a rank number, or have none
                item.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.ShowIndicator)
                item.setData(0, RANK_ROLE, position)
                self._unlisted[position] = (item, rank)
                self._rank_of.update((unit, position) for unit in rank.units)
            else:
                yield from self._list_units(item, rank)
                item.setExpanded(True)
        if not ranks or not any(rank.units for rank in ranks):
            QTreeWidgetItem(self, ["no compile units in this session"])

    def _list_units(self, parent: QTreeWidgetItem, rank) -> Iterator[None]:
        """The rank's frames and units under `parent`, UNITS_A_TURN units a step (a big log of one rank
        holds thousands, and listing them at once would freeze the UI thread)."""
        listed = 0
        for frame in rank.frames:
            if listed >= UNITS_A_TURN:
                listed = 0
                yield
            title = frame_title(frame)
            frame_item = QTreeWidgetItem(parent, [title])
            frame_item.setToolTip(0, plain_tip(f"{frame.where}: {title}\n{frame.location or ''}"))
            frame_item.setExpanded(True)
            for unit in frame.units:  # named by id only: the frame's row above names the function
                compile_s, title, called = unit.compile_s, unit_title(unit), called_function(unit)
                kernels = self._kernel_counts.get(unit)
                item = QTreeWidgetItem(frame_item, [
                    str(unit.compile_id), str(len(unit.breaks)) if unit.breaks else "",
                    str(len(unit.kernels) if kernels is None else kernels), seconds(compile_s)])
                item.setIcon(0, status_icon(unit.status.value))
                named = f"\nDynamo's name: {unit.function}" if unit.function and unit.function not in title else ""
                item.setToolTip(0, plain_tip(f"{title}{named}\nstatus: {unit.status.value.replace('_', ' ')}"
                                             + (f"\nyour function: {called}\ncompiled as its wrapper: " if called
                                                else "\n")
                                             + f"{unit.location or ''}\nattempts: {unit.attempts}"
                                             + (f"\nrecompiled: {unit.recompile.failed_guards[0].plain}"
                                                if unit.recompile and unit.recompile.failed_guards else "")))
                item.setData(0, UNIT_ROLE, unit)
                self._tip_all(item)
                self._items[unit] = item
                listed += 1

    def _on_expanded(self, item: QTreeWidgetItem) -> None:
        key = item.data(0, RANK_ROLE)
        if key is not None:  # a rank's item (frames have none)
            self._list_rank(key)

    def _list_rank(self, key: int) -> None:
        """List the units of the rank at place `key` if they are not listed yet."""
        entry = self._unlisted.pop(key, None)
        if entry is not None:
            item, rank = entry
            for _ in self._list_units(item, rank):  # all at once: a rank of a job holds few units
                pass
            item.setChildIndicatorPolicy(QTreeWidgetItem.ChildIndicatorPolicy.DontShowIndicatorWhenChildless)

    def _on_unit_selected(self, unit) -> None:
        if unit is not None and unit not in self._items and unit in self._rank_of:
            self._list_rank(self._rank_of[unit])
        item = self._items.get(unit) if unit is not None else None
        if item is not None and item is not self.currentItem():
            self.setCurrentItem(item)

    def _on_current_changed(self, current: QTreeWidgetItem | None, _previous) -> None:
        unit = current.data(0, UNIT_ROLE) if current is not None else None
        if unit is not None:
            self.model.select_unit(unit)
