"""Run ▸ Compare Modes, Cold and Warm in the app: each mode captured twice, first in its own emptied
compile caches, then again from them, through the same `ModeRuns` sequence the CLI's `modes --warm`
runs (tests/test_capture.py holds the figures on real compiles)."""

from __future__ import annotations

from conftest import SCENARIOS


def test_the_warm_comparison_captures_each_mode_cold_then_warm_in_its_own_caches(qtbot, window):
    window.open_path(SCENARIOS / "segfaults.py")  # each capture ends at once: the sequence is what is checked
    steps = []
    window.modes.sigStep.connect(steps.append)
    from PySide6.QtGui import QAction

    action = next(action for action in window.findChildren(QAction) if action.text().startswith("Compare Modes, Cold"))
    with qtbot.waitSignal(window.modes.sigDone, timeout=300_000) as done:
        action.trigger()
    runs = window.modes.runs
    assert [(outcome.mode, outcome.warm) for outcome in runs.outcomes] == [
        (mode, warm) for mode in ("default", "reduce-overhead", "max-autotune") for warm in (False, True)]
    assert steps[:2] == ["default (cold)", "default (warm, from its own cache)"]
    for outcome in runs.outcomes:
        assert outcome.session.name == outcome.mode + ("-warm" if outcome.warm else "")
        assert (outcome.session.parent / "compile-caches" / outcome.mode).is_dir()
    rows = done.args[0]
    assert [row.mode for row in rows] == ["default", "reduce-overhead", "max-autotune"]
    assert "No mode finished a measured run" in window.modes_view.status.text()

