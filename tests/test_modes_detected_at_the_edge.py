"""A mode comparison detects nothing itself: each mode's session folder is detected where the folders
come in (`session_loader.detect_modes`: the CLI's `modes` and `summary`, the app), and a mode whose
folder holds no session keeps, in its row, why it could not be opened — the words detection used."""

from __future__ import annotations

import shutil
from pathlib import Path

from inspector.core.analysis.mode_comparison import compare_modes
from inspector.core.readers import session_loader, sources
from inspector.core.readers.session_loader import detect_modes

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def test_each_mode_is_detected_once_and_a_mode_that_wrote_nothing_says_why(tmp_path, monkeypatch):
    shutil.copytree(BUNDLED, tmp_path / "default")
    (tmp_path / "max-autotune").mkdir()  # its capture wrote nothing
    detected = detect_modes({"default": tmp_path / "default", "max-autotune": tmp_path / "max-autotune",
                             "reduce-overhead": tmp_path / "reduce-overhead"})  # its capture never started
    warm = detect_modes({"default": tmp_path / "default-warm"})

    def no_detection(path):
        raise AssertionError(f"detected again: {path}")

    monkeypatch.setattr(sources, "detect", no_detection)
    monkeypatch.setattr(session_loader, "detect", no_detection)
    rows = {row.mode: row for row in compare_modes(detected, warm)}

    assert list(rows) == ["default", "max-autotune", "reduce-overhead"]
    assert rows["default"].error is None and rows["default"].kernels == 10  # the bundled capture's kernels
    assert rows["default"].warm_compile_s is None  # its warm folder is not there: no warm figures
    assert rows["max-autotune"].error.startswith(f"cannot open the session: {tmp_path / 'max-autotune'} holds no "
                                                 "torch.compile output. Expected ")
    assert rows["reduce-overhead"].error.startswith(
        f"cannot open the session: {tmp_path / 'reduce-overhead'} does not exist. Expected ")
    assert all(row.session == tmp_path / mode for mode, row in rows.items())
