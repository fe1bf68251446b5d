"""Issue #52, Diff tab at 1280×720: both panes draw nodes at one readable scale, each pane keeps most
of the tab's width, and the change list drives both panes: a node only one run has is shown on its
side and, on the other, where it would be (beside the partner of its nearest shared neighbour)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from conftest import CORPUS, open_and_wait  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
CUDA_LOG = CORPUS / "inductor_provenance_jit_cuda_log.txt"


@pytest.fixture
def diff(qtbot, window):
    if not CUDA_LOG.exists():
        pytest.skip("the shared corpus is not here")
    window.resize(1280, 720)
    qtbot.waitUntil(lambda: (window.width(), window.height()) == (1280, 720), timeout=10_000)
    open_and_wait(qtbot, window, BUNDLED)
    window.compare_with(CUDA_LOG)
    view = window.diff_view
    qtbot.waitUntil(lambda: window.tabs.currentWidget() is view and view.diff is not None
                    and view.differences.count() > 1, timeout=120_000)
    return view


def centre_item(view, side: int, layer) -> set[str]:
    """The items whose box holds the centre of pane `side`."""
    centre = view.views[side].mapToScene(view.views[side].viewport().rect().center())
    return {item for item in layer.index if layer.rect_of(item).adjusted(-40, -40, 40, 40).contains(centre)}


def test_both_panes_draw_nodes_at_one_readable_scale_with_room(qtbot, diff):
    from inspector.gui.views.graph.qt_zoom_view import READABLE_SCALE

    scales = [view.transform().m11() for view in diff.views]
    assert abs(scales[0] - scales[1]) < 1e-6 and scales[0] >= READABLE_SCALE - 1e-6, scales
    widths = [view.width() for view in diff.views]
    assert min(widths) >= 0.34 * diff.width(), (widths, diff.width())  # the list takes the rest
    assert not diff.differences.horizontalScrollBar().isVisible()  # a long name is cut at a word, not scrolled to


def test_a_removed_node_is_shown_in_a_and_where_it_would_be_in_b(qtbot, diff):
    rows = [diff.differences.item(i).text() for i in range(diff.differences.count())]
    row = next(i for i, text in enumerate(rows) if text.startswith("removed  h"))
    diff.differences.setCurrentRow(row)
    layer_a, layer_b = diff.layers
    assert layer_a.selected == "h" and "h" in centre_item(diff, 0, layer_a)
    anchor = diff.anchor
    assert anchor is not None and anchor in layer_b.index  # the partner of one of h's shared neighbours
    assert anchor in layer_b.neighbours and anchor in centre_item(diff, 1, layer_b)
    partner_of = {b: a for a, b in diff.diff.matched.items()}
    graph_a = diff.graphs[0]
    assert partner_of[anchor] in {*graph_a.node("h").inputs, *graph_a.users("h")}
