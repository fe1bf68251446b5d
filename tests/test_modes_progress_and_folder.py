"""Issue #52, Compare Modes: the stage strip follows each mode (it said "finished: nothing was compiled"
after the default mode had compiled its units: the next mode's start reached it first), and a `modes`
output folder reopens as the comparison it is, not as a job whose ranks are its modes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from conftest import EXAMPLES  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def modes_folder(tmp_path: Path) -> Path:
    """A comparison's folder as `modes` leaves it: the bundled capture (mode default) in `default`."""
    folder = tmp_path / "modes"
    shutil.copytree(BUNDLED, folder / "default")
    (folder / "compile-caches" / "default").mkdir(parents=True)
    return folder


def test_a_modes_folder_is_detected_as_a_mode_comparison(tmp_path):
    from inspector.core.readers.sources import MODES, detect

    source = detect(modes_folder(tmp_path))
    assert source.kind is MODES
    assert list(source.open().cold) == ["default"]
    assert detect(BUNDLED).kind is not MODES  # one session stays one session


def test_a_modes_folder_reopens_in_the_modes_tab_with_its_rows(qtbot, window, tmp_path):
    folder = modes_folder(tmp_path)
    window.open_path(folder)
    view = window.modes_view
    qtbot.waitUntil(lambda: view.table.rowCount() == 1, timeout=60_000)
    assert window.tabs.currentWidget() is view and view.pages.currentIndex() == 1
    assert view.table.item(0, 0).text() == "default" and view.table.item(0, 6).text() == "10"  # its kernels
    assert str(folder) in view.status.text()
    assert window.ranks_view.isHidden() or window.model.loaded is None  # not opened as a 1-rank job
    header = view.table.horizontalHeader()
    for column in range(view.table.columnCount() - 1):  # every heading and cell readable, not cut short
        words = [view.table.horizontalHeaderItem(column).text(), view.table.item(0, column).text()]
        assert header.sectionSize(column) >= max(map(header.fontMetrics().horizontalAdvance, words))


def test_a_screenshot_of_a_modes_folder_is_taken_once_it_shows_and_the_run_ends(tmp_path):
    """`--screenshot` of an input shown in its own tab (not a session) saved no picture: it waited for a
    session that never came, then quit with exit 0 after a minute."""
    import subprocess
    import sys

    picture = tmp_path / "modes.png"
    done = subprocess.run([sys.executable, "-m", "inspector", str(modes_folder(tmp_path)), "--screenshot", str(picture),
                           "--tab", "Modes", "--size", "1280", "720"], cwd=ROOT, capture_output=True, text=True,
                          timeout=55)
    assert done.returncode == 0, done.stderr
    assert picture.stat().st_size > 10_000


def test_cli_summary_of_a_modes_folder_prints_the_comparison(tmp_path):
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "inspector", "summary", str(modes_folder(tmp_path))],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("mode ") and "\ndefault " in done.stdout


def test_the_strip_says_what_each_mode_compiled_during_compare_modes(qtbot, window, tmp_path, monkeypatch, compiles):
    import inspector.gui.qt_main_window as main_window

    monkeypatch.setattr(main_window, "SESSIONS_DIR", tmp_path)
    script = tmp_path / "mlp_breaks.py"
    shutil.copy(EXAMPLES / "mlp_breaks.py", script)
    window.open_path(script)
    strip = window.stage_strip
    seen = []  # the strip's line as each mode's run ends
    window.capture.sigFinished.connect(lambda *_: seen.append((strip.status_text(), list(strip.done_runs))))
    with qtbot.waitSignal(window.modes.sigDone, timeout=900_000) as done:
        window.compare_modes()
    rows = done.args[0]
    assert [row.mode for row in rows] == ["default", "reduce-overhead", "max-autotune"]
    assert all("nothing was compiled" not in line for line, _runs in seen), seen
    first = strip.done_runs[0]
    assert first.startswith("default (cold): ") and "0 units" not in first, strip.done_runs
    assert len(strip.done_runs) == 3 and strip.folded and strip.folded_text().startswith("▸ default (cold): ")
    folder = next(tmp_path.glob("mlp_breaks-modes-*"))
    window.open_path(folder)  # and the folder reopens as the comparison
    qtbot.waitUntil(lambda: str(folder) in window.modes_view.status.text(), timeout=120_000)
    assert window.modes_view.table.rowCount() == 3
