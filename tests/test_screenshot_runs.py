"""`compile-inspector PATH --screenshot FILE`: a picture once PATH is open, whatever tab shows it, and
an exit 1 that says why when it cannot open (it waited a minute for an open that had already failed,
then ended without a picture and without a word)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

ROOT = Path(__file__).resolve().parent.parent


def _screenshot(path: Path, picture: Path, tab: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", str(path), "--screenshot", str(picture), "--tab", tab],
                          cwd=ROOT, capture_output=True, text=True, timeout=55)


def test_a_path_that_cannot_open_ends_the_run_at_once_with_why(tmp_path):
    picture = tmp_path / "none.png"
    done = _screenshot(tmp_path / "no-such-run", picture, "Summary")
    assert done.returncode == 1
    assert "no screenshot saved: could not open" in done.stderr and "does not exist" in done.stderr
    assert not picture.exists()


def test_a_trace_its_tab_cannot_read_ends_the_run_with_the_tabs_reason(tmp_path):
    """Detected as a profiler trace by its name, unreadable as one: the GPU tab's own failure."""
    broken = tmp_path / "run.pt.trace.json"
    broken.write_text('{"traceEvents": 5}')
    done = _screenshot(broken, tmp_path / "none.png", "GPU")
    assert done.returncode == 1
    assert "no screenshot saved: could not open" in done.stderr and "traceEvents" in done.stderr


def test_the_window_says_a_document_failed_to_open_and_its_tab_says_why(qtbot, window, tmp_path):
    broken = tmp_path / "run.pt.trace.json"
    broken.write_text('{"traceEvents": 5}')
    with qtbot.waitSignal(window.sigOpenFailed, timeout=30_000) as failed:
        window.open_path(broken)
    path, why = failed.args
    assert path == str(broken) and "traceEvents" in why
    assert window.gpu_view.header.text().startswith(f"Could not open {broken}")
    assert "Could not open" in window.status.text()
