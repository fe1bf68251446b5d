"""The History tab at 1280×720 (the smallest window the app is laid out for) leaves each trend's plot
room to show its values: a plot area tall enough for the y axis to label at least two values, and
axis units as given (a flat 0 % reads "%", not pyqtgraph's "% (x0.001)")."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from test_history_tab import BUNDLED, history_window, open_as_run  # noqa: E402,F401 (fixture)

MIN_PLOT_PX = 40  # room for two of an axis's value labels above one another, at the default font


def test_every_trend_shows_its_values_in_a_1280_by_720_window(qtbot, history_window):
    window = history_window
    window.resize(1280, 720)
    window.show()
    view = window.history_view
    open_as_run(qtbot, window, BUNDLED, 1)
    window.tabs.setCurrentWidget(view)
    qtbot.waitExposed(view.plots)
    heights = {title: plot.vb.sceneBoundingRect().height() for title, plot in view.plot_items.items()}
    assert all(height >= MIN_PLOT_PX for height in heights.values()), heights
    for title, plot in view.plot_items.items():
        axis = plot.getAxis("left")
        labelled = [value for spacing, values in axis.tickValues(*plot.vb.viewRange()[1], heights[title])
                    for value in values]
        assert len(set(labelled)) >= 2, (title, labelled)
        assert "x0.001" not in axis.labelString() and "(x" not in axis.labelString(), axis.labelString()
