"""Summary dashboard: the verdict in numbers with the formulas visible and where each figure comes
from; a figure without data says so instead of showing 0. It shows the typed summary model the CLI,
the report and the Markdown render (`summary.at_a_glance`, read back from the index cache on a reopen:
`cached_summary.session_glance`), so it words and counts as they do."""

from __future__ import annotations

import statistics

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame, QHeaderView, QLabel, QScrollArea, QSizePolicy, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from inspector.core.analysis.rank_figures import RankReport, rank_ranges
from inspector.core.analysis.region_time import RegionAccounting
from inspector.core.analysis.slowness import Slowness
from inspector.core.numbers import quantity, seconds as fmt_seconds
from inspector.core.outputs.summary_model import Summary
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel
from inspector.gui.qt_plain_text import plain_tip


class QtDashboard(QWidget):
    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.title = QLabel("Open a script or a saved session (File menu, or drop it here).")
        self.title.setWordWrap(True)
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.title.setFont(font)
        self.notices = QLabel("")  # eager fallbacks, a break count torch contradicts: read before any figure
        self.notices.setWordWrap(True)
        self.notices.setTextFormat(Qt.TextFormat.PlainText)
        self.notices.setStyleSheet("color: #b42318; font-weight: bold;")
        self.notices.setVisible(False)
        self.source = QLabel("")
        self.source.setTextFormat(Qt.TextFormat.PlainText)  # paths and stage names from the log
        self.source.setWordWrap(True)
        self.ranks = QLabel("")  # a distributed run: the figures are of all ranks; the compile-time spread
        self.ranks.setWordWrap(True)
        self.ranks.setTextFormat(Qt.TextFormat.PlainText)
        self.timing = QLabel("")  # the speedup verdict with its interval, the machine and the profile check
        self.timing.setWordWrap(True)
        self.timing.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, 4)
        self.table.setHorizontalHeaderLabels(["Figure", "Value", "Formula", "Where it comes from"])
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.table.setColumnWidth(0, 130)
        self.table.setColumnWidth(1, 130)
        self.table.setColumnWidth(2, 330)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        # every figure's row on show: the table is as tall as its rows and the page scrolls (else, at 1280×720,
        # the table scrolls two rows at a time inside a page with room below it)
        self.table.setSizeAdjustPolicy(QTableWidget.SizeAdjustPolicy.AdjustToContents)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        # each row as tall as its longest text wrapped to its column (a fixed two lines cut a long source
        # or formula short with "…", even at 1920 wide); the rows follow the columns as the window resizes
        self.table.setWordWrap(True)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        page = QWidget()
        self.page = QScrollArea()
        self.page.setWidget(page)
        self.page.setWidgetResizable(True)
        self.page.setFrameShape(QFrame.Shape.NoFrame)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(self.page)
        layout = QVBoxLayout(page)
        layout.addWidget(self.title)
        layout.addWidget(self.notices)
        layout.addWidget(self.source)
        layout.addWidget(self.ranks)
        layout.addWidget(self.timing)
        layout.addWidget(self.table)
        self.slowness = QLabel("")  # where a compiled call's time goes, from the profile
        self.slowness.setWordWrap(True)
        self.slowness.setTextFormat(Qt.TextFormat.PlainText)
        layout.addWidget(self.slowness)
        layout.addStretch(1)
        model.on_each_session(self._on_loaded)

    def _on_loaded(self, loaded: LoadedSession) -> None:
        summary = loaded.glance
        self.title.setText(summary.headline)
        notices = [loaded.preview_note] if loaded.preview_note else []
        notices += [f"Attention: {notice.text}" for notice in summary.notices]
        self.notices.setText("\n".join(notices))
        self.notices.setVisible(bool(notices))
        environment = summary.run.environment if summary.run is not None else None
        where = f"{summary.source} — {summary.kind}, torch {summary.torch_version or 'unknown'}"
        if environment is not None:
            where += f", {environment.device} ({environment.device_name}), {environment.threads} thread(s)"
        timing = summary.compile_time
        traced = timing.traced_s
        stages = ", ".join(f"{name} {fmt_seconds(seconds)} ({seconds / traced:.0%})"
                           for name, seconds in list(timing.self_s.items())[:4]) if traced else ""
        self.source.setText(where + (f"\nWhere the compile time went: {stages}" if stages else ""))
        self._show_timing(summary)
        self.ranks.setText(rank_line(summary.per_rank))
        self.ranks.setVisible(summary.per_rank is not None and len(summary.per_rank.figures) > 1)
        self.table.setRowCount(len(summary.verdict))
        for row, figure in enumerate(summary.verdict):
            for column, text in enumerate((figure.label, quantity(figure.value, figure.unit), figure.formula,
                                           figure.source)):
                item = QTableWidgetItem(text)
                item.setToolTip(plain_tip(text))
                self.table.setItem(row, column, item)
        self.slowness.setText(slowness_line(summary.slowness) + regions_line(summary.regions))

    def _show_timing(self, summary: Summary) -> None:
        """Red when the speedup is inconclusive, the machine was busy or the profile disagrees with
        the measured call: the numbers in the table are then not to be taken at face value."""
        speedup = summary.speedup
        check = summary.run.profile_check if summary.run is not None else None
        lines = [speedup.sentence()] if speedup is not None and speedup.value is not None else []
        disagrees = check is not None and check.consistent is False
        if disagrees:
            lines.append(check.note)
        self.timing.setText("\n".join(lines))
        self.timing.setStyleSheet("color: #b42318;" if summary.speedup_doubtful or disagrees else "")
        self.timing.setVisible(bool(lines))


def rank_line(per_rank: RankReport | None) -> str:
    """The figures below are sums over the ranks; then how compile time spreads over them."""
    count = len(per_rank.figures) if per_rank is not None else 0
    if count < 2:
        return ""
    text = f"{count} ranks: the figures below are all ranks together."
    timed = sorted((f.compile_time_s, f.rank) for f in per_rank.figures if f.compile_time_s is not None)
    if timed:
        middle = statistics.median(seconds for seconds, _ in timed)
        (low, low_rank), (high, high_rank) = timed[0], timed[-1]
        recorded = f" ({len(timed)} of {count} ranks recorded one)" if len(timed) < count else ""
        text += (f" Compile time per rank{recorded}: min {fmt_seconds(low)} (rank {low_rank}), median "
                 f"{fmt_seconds(middle)}, max {fmt_seconds(high)} (rank {high_rank})")
        stragglers = per_rank.stragglers()
        text += f"; straggler: rank{'s' if len(stragglers) > 1 else ''} {rank_ranges(stragglers)}." if stragglers \
            else "; no straggler."
    return text


def slowness_line(slowness: Slowness) -> str:
    """One paragraph: each part of a compiled call with its share, launches, CUDA-graph skips."""
    if slowness.call_us is None:
        return f"Where a compiled call's time goes: {slowness.note}."
    parts = ", ".join(f"{cost.label} {cost.share:.0%}" for cost in slowness.costs)
    text = (f"Where a compiled call's time goes ({slowness.call_us:.0f} µs per profiled call, the profiler's own cost "
            f"included; T_execute above is the timed call, without it): {parts}.")
    if slowness.graphs_per_call is not None:
        text += f" {slowness.graphs_per_call:g} compiled graph(s) entered per call."
    if slowness.launches_per_call is not None:
        text += f" {slowness.launch_detail}."
    if slowness.cudagraph_skips:
        text += " CUDA graphs skipped: " + "; ".join(f"{s.compile_id} {s.reason}" for s in slowness.cudagraph_skips)
    return text


def regions_line(regions: RegionAccounting | None) -> str:
    """Each compiled region's own time per call and how much of it the compiled graph took."""
    if regions is None or regions.reason is not None:
        return ""
    parts = "; ".join(f"{row.compile_id} {row.own_us:.0f} µs own ({row.graph_us:.0f} in its graph, "
                      f"{row.eager_us:.0f} eager)" for row in regions.regions)
    return f"\nCompiled regions per call (nested regions taken out of their parent's own time): {parts}."
