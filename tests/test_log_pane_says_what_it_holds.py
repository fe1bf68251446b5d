"""The Log pane beside an opened log was a blank box: until a script runs from the app it says what
will show there and where an opened run's own output is."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from conftest import open_and_wait  # noqa: E402

BUNDLED = Path(__file__).resolve().parent.parent / "resources" / "sessions" / "mlp_breaks"


def test_the_log_pane_says_what_shows_there_before_any_run(qtbot, window):
    open_and_wait(qtbot, window, BUNDLED / "trace")
    window.log_dock.raise_()
    qtbot.waitUntil(window.log_view.isVisible, timeout=5_000)
    text = window.log_view.text
    assert text.toPlainText() == ""
    assert "F5" in text.placeholderText() and "stderr.txt" in text.placeholderText()


def test_a_filter_that_hides_every_line_says_so_not_that_no_output_was_kept(qtbot, window):
    pane = window.log_view
    pane.append("stdout", "step 1 loss 0.5\nstep 2 loss 0.4\n")
    pane.filter.setText("nan")
    assert pane.text.toPlainText() == ""
    words = pane.text.placeholderText()
    assert words.startswith("No line matches the filter (“nan”): 2 lines of output hidden")
    assert "keeps no output" not in words
    pane.filter.clear()
    pane.stderr_only.setChecked(True)  # the lines are all stdout
    assert pane.text.toPlainText() == "" and "(stderr only)" in pane.text.placeholderText()
    pane.stderr_only.setChecked(False)
    assert pane.text.toPlainText() == "step 1 loss 0.5\nstep 2 loss 0.4"
