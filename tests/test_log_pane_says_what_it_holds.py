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
