"""The Diff tab as a new user meets it: the bundled capture (A) compared with the GPU corpus log (B).
A run opened afterwards ends the comparison (the open run is A), the colours have a key, hovering a box
in either pane says what it is in full, and the counts are worded so they add up."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QEvent  # noqa: E402
from PySide6.QtGui import QHelpEvent, QTextDocument  # noqa: E402
from PySide6.QtWidgets import QApplication, QToolTip  # noqa: E402

from conftest import CUDA_LOG, MULTI_RANK, open_and_wait  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def _compared(qtbot, window, corpus):
    """The bundled capture open, compared with the GPU log; the Diff view once both panes are drawn."""
    loaded = open_and_wait(qtbot, window, BUNDLED)
    window.compare_with(CUDA_LOG)
    diff = window.diff_view
    qtbot.waitUntil(lambda: diff.diff is not None and bool(diff.run.toPlainText()), timeout=60_000)
    assert diff.labels[0].full_text == f"A: {BUNDLED}" and diff.labels[1].full_text == f"B: {CUDA_LOG}"
    return diff, loaded


def _plain(html: str) -> str:
    document = QTextDocument()
    document.setHtml(html)
    return document.toPlainText()


def _hover(qtbot, diff, side: int, name: str) -> str:
    """The tooltip the mouse gets over box `name` in pane `side`, as the user reads it."""
    view, layer = diff.views[side], diff.layers[side]
    centre = layer.rect_of(name).center()
    view.centerOn(centre)
    point = view.mapFromScene(centre)
    QToolTip.hideText()
    QApplication.sendEvent(view.viewport(), QHelpEvent(QEvent.Type.ToolTip, point, view.viewport().mapToGlobal(point)))
    qtbot.waitUntil(lambda: QToolTip.isVisible() and bool(QToolTip.text()), timeout=5_000)
    return _plain(QToolTip.text())


def test_opening_another_run_ends_the_comparison_and_says_which(qtbot, window, no_slot_errors, corpus):
    diff, bundled = _compared(qtbot, window, corpus)
    assert diff.pages.currentWidget() is not diff.guidance
    open_and_wait(qtbot, window, MULTI_RANK)
    # the open run is A: the previous run's comparison is gone, and the guidance says what was closed
    qtbot.waitUntil(lambda: diff.pages.currentWidget() is diff.guidance, timeout=10_000)
    shown = _plain(diff.guidance.text())
    assert shown.startswith(f"Comparison closed. You opened {MULTI_RANK}, so the comparison of A: {BUNDLED} "
                            f"with B: {CUDA_LOG} was closed (the open run is always A)."), shown
    assert "File ▸ Compare With…" in shown and "The open run is A" in shown
    assert diff.a is None and diff.diff is None and diff.unit.count() == 0 and diff.differences.count() == 0
    assert not diff.scenes[0].items() and not diff.scenes[1].items()
    assert diff.labels[0].full_text == "A" and not diff.run.toPlainText()
    diff.step(1)  # nothing to step through: no error
    # a comparison of the previous run that finishes after the new one opened is not shown either
    from inspector.core.readers.sources import detect
    from inspector.gui.qt_session_model import load_session

    late = load_session(detect(CUDA_LOG))
    diff.set_sessions(bundled.analysis, late.analysis)
    assert diff.pages.currentWidget() is diff.guidance and diff.a is None
    assert "was opened while B was being read, so the comparison of A: " in _plain(diff.guidance.text())
    # comparing the open run again shows the diff, without the note
    window.compare_with(BUNDLED)
    qtbot.waitUntil(lambda: diff.a is not None and bool(diff.run.toPlainText()), timeout=60_000)
    assert diff.pages.currentWidget() is not diff.guidance
    assert diff.labels[0].full_text == f"A: {MULTI_RANK}" and "Comparison closed" not in diff.guidance.text()


def test_the_colours_have_a_key_and_every_box_says_what_it_is(qtbot, window, no_slot_errors, corpus):
    from inspector.gui.views.qt_diff_view import COLOURS

    diff, _ = _compared(qtbot, window, corpus)
    assert diff.legend.isVisible()
    legend = diff.legend.text()
    for kind, colour in COLOURS.items():  # each colour the panes use, with its word
        assert f"background-color:{colour}'" in legend and f"<b>{kind}</b>" in legend
    assert _plain(legend).split() == ("removed (only in A) added (only in B) changed (in both, but different) "
                                      "same (in both, alike)").split()
    # the box label is cut ("torch.nn.f…ional.relu"); the hover has it whole, as text, not escaped markup
    added = _hover(qtbot, diff, 1, "x_1")
    assert added.splitlines()[:5] == ["x_1", "■ added: only in B", "op: call_function",
                                      "target: torch.nn.functional.relu", "shape: f32[8, 16]"], added
    assert "<b>" not in added and "&lt;" not in added
    changed = _hover(qtbot, diff, 0, "linear")
    assert "■ changed: matched to B's x; its shape differs" in changed
    assert "target: torch._C._nn.linear" in changed and "shape in A: f32[8, 128], in B: f32[8, 16]" in changed
    removed = _hover(qtbot, diff, 0, "h")
    assert removed.splitlines()[:2] == ["h", "■ removed: only in A"] and "target: torch.relu" in removed
    assert "source: mlp_breaks.py:18 h = torch.relu(self.up(x))" in removed
    partner = _hover(qtbot, diff, 1, "x")
    assert "■ changed: matched to A's linear; its shape differs" in partner


def test_the_counts_add_up_as_worded(qtbot, window, no_slot_errors, corpus):
    diff, _ = _compared(qtbot, window, corpus)
    text = diff.summary.text()
    assert text == ("8 nodes in A, 13 in B: 5 matched (5 of them changed), 3 removed (only in A), "
                    "8 added (only in B); similarity 0.00 (structure 0.48)"), text
    numbers = re.match(r"(\d+) nodes in A, (\d+) in B: (\d+) matched \((\d+) of them changed\), (\d+) removed "
                       r"\(only in A\), (\d+) added \(only in B\)", text)
    nodes_a, nodes_b, matched, changed, removed, added = map(int, numbers.groups())
    assert matched + removed == nodes_a and matched + added == nodes_b and changed <= matched
    assert (matched, changed, removed, added) == (len(diff.diff.matched), len(diff.diff.changed),
                                                  len(diff.diff.removed), len(diff.diff.added))
