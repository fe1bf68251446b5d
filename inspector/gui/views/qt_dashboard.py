"""Summary dashboard: the verdict in numbers with the formulas visible and where each figure comes
from; a figure without data says so instead of showing 0."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QLabel, QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget

from inspector.core.analysis.verdict import headline
from inspector.gui.qt_session_model import LoadedSession, QtSessionModel


def format_value(figure: dict) -> str:
    value = figure["value"]
    if value is None:
        return "—"
    unit = figure["unit"]
    if unit.startswith("s"):
        if abs(value) < 1e-3:
            return f"{value * 1e6:.1f} µ{unit}"
        if abs(value) < 1:
            return f"{value * 1e3:.2f} m{unit}"
    if unit == "calls":
        return f"{value:,.0f} calls"
    return f"{value:.3g} {unit}".strip()


class QtDashboard(QWidget):
    def __init__(self, model: QtSessionModel):
        super().__init__()
        self.title = QLabel("Open a script or a saved session (File menu, or drop it here).")
        self.title.setWordWrap(True)
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.title.setFont(font)
        self.source = QLabel("")
        self.source.setWordWrap(True)
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
        layout.addWidget(self.source)
        layout.addWidget(self.timing)
        layout.addWidget(self.table)
        model.sigLoaded.connect(self._on_loaded)

    def _on_loaded(self, loaded: LoadedSession) -> None:
        summary = loaded.summary
        self.title.setText(headline(summary))
        run = summary.get("run") or {}
        environment = run.get("environment") or {}
        where = f"{summary['source']} — {summary['kind']}, torch {summary['torch_version'] or 'unknown'}"
        if environment:
            where += f", {environment.get('device')} ({environment.get('device_name')}), {environment.get('threads')} thread(s)"
        timing = summary["compile_time"]
        traced = sum(timing["self_s"].values())
        stages = ", ".join(f"{name} {seconds:.2f} s ({seconds / traced:.0%})"
                           for name, seconds in list(timing["self_s"].items())[:4]) if traced else ""
        self.source.setText(where + (f"\nWhere the compile time went: {stages}" if stages else ""))
        self._show_timing(summary)
        figures = summary["verdict"]
        self.table.setRowCount(len(figures))
        for row, figure in enumerate(figures):
            for column, text in enumerate((figure["label"], format_value(figure), figure["formula"], figure["source"])):
                item = QTableWidgetItem(text)
                item.setToolTip(text)
                self.table.setItem(row, column, item)

    def _show_timing(self, summary: dict) -> None:
        """Red when the speedup is inconclusive, the machine was busy or the profile disagrees with
        the measured call: the numbers in the table are then not to be taken at face value."""
        speedup = summary.get("speedup") or {}
        check = (summary.get("run") or {}).get("profile_check") or {}
        lines = [speedup["text"]] if speedup.get("value") is not None else []
        if check.get("consistent") is False:
            lines.append(check["note"])
        doubtful = (speedup.get("state") == "inconclusive" or (speedup.get("machine") or {}).get("busy")
                    or check.get("consistent") is False)
        self.timing.setText("\n".join(lines))
        self.timing.setStyleSheet("color: #b42318;" if doubtful else "")
        self.timing.setVisible(bool(lines))
