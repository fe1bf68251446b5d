"""The History tab's trends read at 1280×720: in the window's own colours (not pyqtgraph's black), each
value axis labelled with a line between labels (no number drawn over another), a count labelled in whole
numbers (3 recompiles, never 2.8)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from conftest import background_settled, open_and_wait  # noqa: E402
from test_layout_small_screen import axis_texts  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def test_history_trends_are_readable_in_a_small_window(qtbot, window):
    window.resize(1280, 720)
    open_and_wait(qtbot, window, BUNDLED)
    history = window.history_view
    window.tabs.setCurrentWidget(history)
    qtbot.waitUntil(lambda: history.isVisible() and len(history.runs) >= 1, timeout=60_000)
    background_settled(qtbot)
    assert history.plots.backgroundBrush().color() == history.palette().base().color()
    for title, plot in history.plot_items.items():
        texts = axis_texts(plot)  # the left axis's value labels, where pyqtgraph draws them
        assert texts, f"{title}: no value on its axis"
        for index, (rect, text) in enumerate(texts):
            for other, other_text in texts[index + 1:]:
                assert not rect.intersects(other), f"{title}: {text!r} drawn over {other_text!r}"
        if title in ("Recompiles", "Graph breaks"):
            assert all(text.lstrip("-").isdigit() for _, text in texts), f"{title}: {[t for _, t in texts]}"

