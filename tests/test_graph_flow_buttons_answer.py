"""Upstream and Downstream outline the flow of the selected node; clicked with no node selected they
did nothing at all. They now say, beside the button, that a node must be clicked first."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QToolTip  # noqa: E402

from test_graph_view import BUNDLED, open_graph  # noqa: E402


@pytest.mark.parametrize("words", ["Upstream", "Downstream"])
def test_a_flow_button_clicked_with_no_node_selected_says_what_to_do(qtbot, window, words):
    from inspector.gui.views.graph.qt_graph_view import NO_NODE_SELECTED

    graph = open_graph(qtbot, window, BUNDLED)
    assert graph.layer.selected is None
    QToolTip.hideText()
    outlined = dict(graph.layer.outline)  # the nodes beside a graph break are outlined from the start
    QTest.mouseClick(graph.flow_buttons[words], Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: QToolTip.isVisible() and QToolTip.text() == NO_NODE_SELECTED, timeout=5_000)
    assert graph.layer.outline == outlined  # nothing more outlined: no node was chosen


def test_the_colour_legend_lists_every_entry_where_the_side_panel_has_room(qtbot, window):
    """At 1920×1080 the op-kind legend showed four of its six colours, scrolling, above an empty details pane."""
    window.resize(1920, 1080)
    graph = open_graph(qtbot, window, BUNDLED, stage="post_grad")
    legend = graph.legend
    qtbot.waitUntil(lambda: legend.count() >= 6 and legend.isVisible(), timeout=10_000)
    qtbot.waitUntil(lambda: legend.viewport().height() >= legend.sizeHintForRow(0) * legend.count(), timeout=5_000)
    assert graph.details.viewport().height() >= 10 * graph.details.fontMetrics().lineSpacing()


def test_the_colour_legend_refits_when_the_window_grows_and_shrinks(qtbot, window):
    """Opened at 1280×720 and then enlarged to 1920×1080, the legend kept its 1280 height and scrolled
    (74 px for 96 px of rows) above a details pane of 34 lines; shrunk again, it kept the room it had."""
    window.resize(1280, 720)
    graph = open_graph(qtbot, window, BUNDLED, stage="post_grad")
    legend = graph.legend
    qtbot.waitUntil(lambda: legend.count() >= 6 and legend.isVisible(), timeout=10_000)
    rows = legend.sizeHintForRow(0) * legend.count()
    small_details = graph.details.viewport().height()
    window.resize(1920, 1080)
    qtbot.waitUntil(lambda: legend.viewport().height() >= rows, timeout=5_000)  # every colour, no scrolling
    assert graph.details.viewport().height() >= 10 * graph.details.fontMetrics().lineSpacing()
    window.resize(1280, 720)
    # back at 1280×720 the details get back the height they had there, the legend scrolling again
    qtbot.waitUntil(lambda: graph.details.viewport().height() >= small_details - 2, timeout=5_000)
    assert legend.viewport().height() < rows
