"""Summary dashboard: the verdict in numbers with the formulas visible and where each figure comes
from; a figure without data says so instead of showing 0."""

from __future__ import annotations

import statistics

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from inspector.core.analysis.ranks import RankReport, rank_ranges
from inspector.core.analysis.region_time import RegionAccounting
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.analysis.speedup import SpeedupState
from inspector.core.analysis.verdict import Figure
from inspector.core.numbers import quantity, seconds as fmt_seconds
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel
from inspector.gui.qt_plain_text import plain_tip


def format_value(figure: Figure) -> str:
    return quantity(figure.value, figure.unit)


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
        layout = QVBoxLayout(self)
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
        model.sigLoaded.connect(self._on_loaded)

    def _on_loaded(self, loaded: LoadedSession) -> None:
        analysis, session = loaded.analysis, loaded.session
        self.title.setText(analysis.headline())
        self.notices.setText("\n".join(f"Attention: {notice.text}" for notice in analysis.notices))
        self.notices.setVisible(bool(analysis.notices))
        environment = session.results.environment if session.results is not None else None
        where = f"{session.source} — {session.kind}, torch {session.torch_version or 'unknown'}"
        if environment is not None:
            where += f", {environment.device} ({environment.device_name}), {environment.threads} thread(s)"
        timing = analysis.compile_time
        traced = sum(timing["self_s"].values())
        stages = ", ".join(f"{name} {fmt_seconds(seconds)} ({seconds / traced:.0%})"
                           for name, seconds in list(timing["self_s"].items())[:4]) if traced else ""
        self.source.setText(where + (f"\nWhere the compile time went: {stages}" if stages else ""))
        self._show_timing(analysis)
        self.ranks.setText(rank_line(analysis.ranks))
        self.ranks.setVisible(len(analysis.ranks.figures) > 1)
        figures = analysis.verdict
        self.table.setRowCount(len(figures))
        for row, figure in enumerate(figures):
            for column, text in enumerate((figure.label, format_value(figure), figure.formula, figure.source)):
                item = QTableWidgetItem(text)
                item.setToolTip(plain_tip(text))
                self.table.setItem(row, column, item)
        self.slowness.setText(slowness_line(analysis.slowness.to_json()) + regions_line(analysis.regions[0]))

    def _show_timing(self, analysis: SessionAnalysis) -> None:
        """Red when the speedup is inconclusive, the machine was busy or the profile disagrees with
        the measured call: the numbers in the table are then not to be taken at face value."""
        speedup, check = analysis.speedup, analysis.profile_check
        lines = [speedup.sentence()] if speedup.value is not None else []
        if check.consistent is False:
            lines.append(check.note)
        doubtful = (speedup.state == SpeedupState.INCONCLUSIVE or (speedup.machine is not None and speedup.machine.busy)
                    or check.consistent is False)
        self.timing.setText("\n".join(lines))
        self.timing.setStyleSheet("color: #b42318;" if doubtful else "")
        self.timing.setVisible(bool(lines))


def rank_line(report: RankReport) -> str:
    """The figures below are sums over the ranks; then how compile time spreads over them."""
    count = len(report.figures)
    if count < 2:
        return ""
    text = f"{count} ranks: the figures below are all ranks together."
    timed = sorted((f.compile_time_s, f.rank) for f in report.figures if f.compile_time_s is not None)
    if timed:
        middle = statistics.median(seconds for seconds, _ in timed)
        (low, low_rank), (high, high_rank) = timed[0], timed[-1]
        recorded = f" ({len(timed)} of {count} ranks recorded one)" if len(timed) < count else ""
        text += (f" Compile time per rank{recorded}: min {fmt_seconds(low)} (rank {low_rank}), median {fmt_seconds(middle)}, "
                 f"max {fmt_seconds(high)} (rank {high_rank})")
        stragglers = report.stragglers()
        text += f"; straggler: rank{'s' if len(stragglers) > 1 else ''} {rank_ranges(stragglers)}." if stragglers \
            else "; no straggler."
    return text


def slowness_line(data: dict) -> str:
    """One paragraph: each part of a compiled call with its share, launches, CUDA-graph skips."""
    if data["call_us"] is None:
        return f"Where a compiled call's time goes: {data['note']}."
    parts = ", ".join(f"{cost['label']} {cost['share']:.0%}" for cost in data["costs"])
    text = (f"Where a compiled call's time goes ({data['call_us']:.0f} µs per profiled call, the profiler's own cost "
            f"included; T_execute above is the timed call, without it): {parts}.")
    if data["graphs_per_call"] is not None:
        text += f" {data['graphs_per_call']:g} compiled graph(s) entered per call."
    if data["launches_per_call"] is not None:
        text += f" {data['launch_detail']}."
    if data["cudagraph_skips"]:
        text += " CUDA graphs skipped: " + "; ".join(f"{s['compile_id']} {s['reason']}" for s in data["cudagraph_skips"])
    return text


def regions_line(accounting: RegionAccounting | None) -> str:
    """Each compiled region's own time per call and how much of it the compiled graph took."""
    if accounting is None:
        return ""
    parts = "; ".join(f"{row['compile_id']} {row['own_us']:.0f} µs own ({row['graph_us']:.0f} in its graph, "
                      f"{row['eager_us']:.0f} eager)" for row in accounting.regions)
    return f"\nCompiled regions per call (nested regions taken out of their parent's own time): {parts}."
