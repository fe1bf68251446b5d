"""A modes folder holding one measured mode said "Only default was measured: SLOWER than eager (…).
Every mode is SLOWER than eager here": one mode is not every mode, and its own sentence says it already."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

BUNDLED = Path(__file__).resolve().parent.parent / "resources" / "sessions" / "mlp_breaks"


def test_the_modes_tab_of_one_slower_mode_says_it_once(qtbot, window, tmp_path):
    modes = tmp_path / "modes"
    shutil.copytree(BUNDLED, modes / "default")
    (modes / "compile-caches" / "default").mkdir(parents=True)
    with qtbot.waitSignal(window.sigOpened, timeout=60_000):
        window.open_path(modes)
    status = window.modes_view.status.text()
    assert "Only default was measured: SLOWER than eager" in status, status
    assert "Every mode" not in status and status.count("SLOWER") == 1, status
