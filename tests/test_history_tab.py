"""The History tab: opening a run records it and plots its script's runs; a change of torch version,
and a recompile cause first seen, are marked where they happened; a click on a point opens that run,
Ctrl+click on two opens their diff."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import open_and_wait

pytest.importorskip("PySide6")
from PySide6.QtCore import QPointF, Qt  # noqa: E402

from inspector.core.history.run_record import CauseRow  # noqa: E402
from inspector.core.history.run_store import open_store  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
BUNDLED_LOG = next((BUNDLED / "trace").glob("*.log"))


@pytest.fixture
def history_window(window, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("TCI_NO_HISTORY", raising=False)
    return window


def open_as_run(qtbot, window, path: Path, runs: int) -> None:
    """Open `path` in the window and wait until the History tab lists `runs` runs."""
    open_and_wait(qtbot, window, path)
    qtbot.waitUntil(lambda: len(window.history_view.runs) == runs, timeout=60_000)


def shown_points(view, title: str) -> list[tuple[float, float]]:
    x, y = view.points[title].getData()
    return list(zip(x.tolist(), y.tolist()))


def click_point(qtbot, view, title: str, index: int, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    """A real mouse click on the point of run `index` in plot `title`."""
    plot = view.plot_items[title]
    x, y = shown_points(view, title)[index]
    # the plot's range follows its data when it is painted: wait until the point is in view
    qtbot.waitUntil(lambda: all(low <= value <= high for value, (low, high) in zip((x, y), plot.vb.viewRange())),
                    timeout=5_000)
    scene_point = plot.vb.mapViewToScene(QPointF(x, y))
    where = view.plots.mapFromScene(scene_point)
    qtbot.mouseMove(view.plots.viewport(), where)  # pyqtgraph takes a click as a press and release where it hovers
    qtbot.mousePress(view.plots.viewport(), Qt.MouseButton.LeftButton, modifier, where)
    qtbot.mouseRelease(view.plots.viewport(), Qt.MouseButton.LeftButton, modifier, where)


def test_opened_runs_are_recorded_and_plotted_with_their_figures(qtbot, history_window):
    window = history_window
    window.resize(1400, 1000)
    window.show()
    view = window.history_view
    open_as_run(qtbot, window, BUNDLED, 1)
    open_as_run(qtbot, window, BUNDLED_LOG, 2)  # the same script's log: a second run
    assert shown_points(view, "Graph breaks") == [(1.0, 4.0), (2.0, 4.0)]
    assert shown_points(view, "Recompiles") == [(1.0, 3.0), (2.0, 3.0)]
    assert shown_points(view, "Cache hit rate") == [(1.0, 0.0), (2.0, 0.0)]
    assert [x for x, _ in shown_points(view, "Compile time")] == [1.0, 2.0]
    assert view.table.item(0, 5).text() == "4 at 2 site(s)" and view.table.item(0, 2).text() == "2.13.0+cpu"
    assert view.note.text().startswith(f"2 run(s) of {view.runs[0].script}, oldest first.")
    assert view.marker_labels == []  # one torch, no commit change between the two

    window.tabs.setCurrentWidget(view)
    qtbot.waitExposed(view.plots)
    # the click opens that run: wait until the views have it and the tab has read the runs again, so
    # neither arrival lands between the clicks below or takes the tab from the diff
    before = view.runs
    with qtbot.waitSignal(window.model.sigLoaded, timeout=120_000), \
            qtbot.waitSignal(view.sigOpenRun, timeout=5_000) as opened:
        click_point(qtbot, view, "Graph breaks", 1)
    assert opened.args == [view.runs[1].source]
    qtbot.waitUntil(lambda: view.runs is not before, timeout=60_000)
    window.tabs.setCurrentWidget(view)
    qtbot.waitExposed(view.plots)
    with qtbot.waitSignal(view.sigCompareRuns, timeout=5_000) as compared:
        click_point(qtbot, view, "Recompiles", 0, Qt.KeyboardModifier.ControlModifier)
        click_point(qtbot, view, "Recompiles", 1, Qt.KeyboardModifier.ControlModifier)
    assert compared.args == [view.runs[0].source, view.runs[1].source]
    qtbot.waitUntil(lambda: window.tabs.currentWidget() is window.diff_view, timeout=60_000)

    # the runs read again in between (each opened run does that) keep a run picked for a comparison
    view.select(0)
    view.show_runs(view.runs[0].script, list(view.runs))
    with qtbot.waitSignal(view.sigCompareRuns, timeout=5_000) as compared:
        view.select(1)
    assert compared.args == [view.runs[0].source, view.runs[1].source]


def test_a_torch_upgrade_is_marked_where_it_happened(qtbot, history_window):
    window = history_window
    view = window.history_view
    open_as_run(qtbot, window, BUNDLED, 1)
    first = view.runs[0]
    drift = CauseRow("forward (mlp_breaks.py:17): x size dim 1", 1)
    with open_store() as store:  # the next run of the script, on another torch, with a new recompile cause
        upgraded, _ = store.add(dataclasses.replace(first, identity="upgraded", run_at=first.run_at + 3600,
                                                    torch_version="2.14.0", run_id=None,
                                                    causes=(*first.causes, drift)))
        runs = store.runs_of(first.script)
    view.show_runs(first.script, runs)
    assert view.marker_labels == ["torch 2.13.0+cpu → 2.14.0"]
    lines = [item for item in view.plot_items["Compile time"].items if hasattr(item, "label") and item.label]
    assert [line.label.toPlainText() for line in lines] == ["torch 2.13.0+cpu → 2.14.0"]
    assert [line.value() for line in lines] == [1.5]  # between the two runs
    assert view.table.item(1, 2).text() == "2.14.0" and view.table.item(1, 0).text() == f"#{upgraded.run_id}"
    events = [item for item in view.plot_items["Recompiles"].items if hasattr(item, "label") and item.label]
    assert [(line.label.toPlainText(), line.value()) for line in events] == \
        [("new recompile cause: forward (mlp_breaks.py:17): x size dim 1", 2)]
    assert "Graph breaks" not in view.event_labels  # the same break sites in both runs


def test_the_setting_turns_recording_off(qtbot, history_window, quick_interpreter):
    from inspector.gui.qt_settings_dialog import QtSettingsDialog

    window = history_window
    window.settings.python = quick_interpreter
    dialog = QtSettingsDialog(window.settings, window)
    assert dialog.record_history.isChecked()  # on unless turned off
    dialog.record_history.setChecked(False)
    dialog.accept()
    view = window.history_view
    open_and_wait(qtbot, window, BUNDLED)
    qtbot.waitUntil(lambda: view.note.text().startswith("0 run(s) of "), timeout=60_000)
    with open_store() as store:
        assert store.runs_of() == []
