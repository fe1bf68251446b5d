"""Run ▸ Compare Modes, Cold and Warm in the app: each mode captured twice, first in its own emptied
compile caches, then again from them, through the same `ModeRuns` sequence the CLI's `modes --warm`
runs (tests/test_capture.py holds the figures on real compiles)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import SCENARIOS
from test_timing import QUIET, edited_copy, timed_state

from inspector.core.analysis.mode_comparison import compare_modes
from inspector.core.readers.session_loader import detect_modes


@pytest.mark.slow  # a big hostile input: seconds of reading (make test runs it)
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



def cache_hit_copy(folder: Path) -> Path:
    """The capture as a run that found torch's FX graph cache filled: its log's cache misses made hits."""
    (log,) = (folder / "trace").iterdir()
    log.write_text(log.read_text().replace('"name": "fx_graph_cache_miss"', '"name": "fx_graph_cache_hit"'))
    return folder


def table_notes(view) -> dict[str, str]:
    table = view.table
    return {table.item(row, 0).text(): table.item(row, table.columnCount() - 1).text()
            for row in range(table.rowCount())}


def test_the_modes_tab_names_the_faster_call_and_the_rows_that_were_not_cold(qtbot, window, tmp_path):
    """Rows from real sessions (the bundled capture with its timing rounds edited): default's every
    compiled call is shorter than max-autotune's, max-autotune's cold capture hit the FX graph cache,
    default's warm capture hit none."""
    short = [(2e-4 * (1 + 0.01 * (i % 3)), 1e-4 * (1 + 0.01 * (i % 2))) for i in range(12)]
    long = [(4e-4 * (1 + 0.01 * (i % 3)), 1.5e-4 * (1 + 0.01 * (i % 2))) for i in range(12)]
    default = edited_copy(tmp_path / "default", **timed_state(short, QUIET))
    tuned = cache_hit_copy(edited_copy(tmp_path / "max-autotune", **timed_state(long, QUIET)))
    warm = edited_copy(tmp_path / "default-warm")
    rows = compare_modes(detect_modes({"default": default, "max-autotune": tuned}), detect_modes({"default": warm}))
    by_mode = {row.mode: row for row in rows}
    assert max(c for _, c in short) < min(c for _, c in long)
    assert by_mode["default"].cache_hits == 0 and by_mode["max-autotune"].cache_hits > 0
    assert by_mode["default"].warm_cache_hits == 0
    window.modes.sigDone.emit(rows)
    status = window.modes_view.status.text()
    assert status.startswith("Fastest per call here: default")
    assert "Each mode compiled cold" not in status
    assert f"NOT cold: max-autotune ({by_mode['max-autotune'].cache_hits} cache hit(s))" in status
    notes = table_notes(window.modes_view)
    assert notes["default"].startswith("fastest") and "warm run hit no cache" in notes["default"]
    assert not notes["max-autotune"].startswith("fastest") and "NOT cold" in notes["max-autotune"]

    # every row cold: the caption says so; one mode alone is not "fastest" against nothing
    window.modes.sigDone.emit(compare_modes(detect_modes({"default": default})))
    status = window.modes_view.status.text()
    assert status.startswith("Only default was measured") and "Each mode compiled cold" in status
    assert "fastest" not in table_notes(window.modes_view)["default"]
