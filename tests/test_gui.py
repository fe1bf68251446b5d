"""The desktop app, offscreen, with real sessions and a real capture run through the GUI."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from conftest import EXAMPLES, SCENARIOS, background_settled, open_and_wait, torch_available  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
LOAD_TIMEOUT_MS = 30_000



def nav_units(window) -> list[str]:
    nav = window.navigator
    titles = []

    def walk(item):
        for index in range(item.childCount()):
            child = item.child(index)
            if child.data(0, 256) is not None:
                titles.append(child.text(0))
            walk(child)
    walk(nav.invisibleRootItem())
    return titles


def test_bundled_session_fills_navigator_problems_and_dashboard(qtbot, window):
    loaded = open_and_wait(qtbot, window, BUNDLED)
    assert len(nav_units(window)) == len(loaded.session.units) == 6
    problems = window.problems_view
    titles = [problems.topLevelItem(i).text(0) for i in range(problems.topLevelItemCount())]
    assert sum(title.startswith("Graph break ×2") for title in titles) == 2
    assert sum(title.startswith("Recompile") for title in titles) == 3
    dashboard = window.summary_view
    assert "2 graph-break site(s), 3 recompile(s)" in dashboard.title.text()
    values = {dashboard.table.item(r, 0).text(): dashboard.table.item(r, 1).text()
              for r in range(dashboard.table.rowCount())}
    assert values["S"] != "—" and values["T_compile"].endswith(" s")


def test_activating_a_break_selects_its_unit_and_shows_the_source_line(qtbot, window):
    open_and_wait(qtbot, window, BUNDLED)
    problems = window.problems_view
    item = next(problems.topLevelItem(i) for i in range(problems.topLevelItemCount())
                if "Data-dependent" in problems.topLevelItem(i).text(0))
    problems.itemActivated.emit(item, 0)
    assert str(window.model.unit.compile_id) == "[0/0]"
    source = window.source_view
    assert window.tabs.currentWidget() is source
    qtbot.waitUntil(lambda: source.textCursor().blockNumber() + 1 == 19, timeout=60_000)  # read off the UI thread
    assert "if h.sum() > 0" in source.textCursor().block().text()
    assert source.marker_lines() == {19: "graph_break", 21: "graph_break", 17: "restart"}


@pytest.mark.parametrize("kind", ["trace_log", "multi_rank", pytest.param("compile_debug", marks=pytest.mark.slow),
                                  "cuda_log"])
def test_each_kind_of_input_opens(qtbot, window, kind, request):
    if kind in ("multi_rank", "cuda_log"):
        corpus = request.getfixturevalue("corpus")
        path = corpus / "multi_rank_logs" if kind == "multi_rank" else corpus / "inductor_provenance_jit_cuda_log.txt"
    elif kind == "compile_debug":
        path = request.getfixturevalue("compile_debug_run").folder / "torch_compile_debug"
    else:
        path = next((BUNDLED / "trace").glob("*.log"))
    loaded = open_and_wait(qtbot, window, path)
    assert nav_units(window) and len(nav_units(window)) == len(loaded.session.units)
    if kind == "multi_rank":
        nav = window.navigator
        assert [nav.topLevelItem(i).text(0).split()[1] for i in range(nav.topLevelItemCount())] == ["0", "1", "2", "3"]


def test_folder_that_is_no_debug_output_gets_a_message_not_a_crash(qtbot, window, tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    loaded = []
    window.model.sigLoaded.connect(loaded.append)
    window.open_path(tmp_path)
    qtbot.waitUntil(lambda: hasattr(window, "last_message"), timeout=LOAD_TIMEOUT_MS)
    background_settled(qtbot)  # the open's work is over and all it sent delivered: no session came of it
    assert not loaded
    assert "holds no torch.compile output" in window.last_message


def test_a_real_capture_runs_live_and_fills_the_dashboard(qtbot, window, tmp_path, compiles):
    script = tmp_path / "mlp_breaks.py"
    shutil.copy(EXAMPLES / "mlp_breaks.py", script)
    window.open_path(script)
    strip = window.stage_strip
    seen_running = []
    window.capture.sigProgress.connect(lambda p: seen_running.append(any(
        s == "running" for unit in strip.cell_states().values() for s in unit.values())))
    with qtbot.waitSignal(window.model.sigLoaded, timeout=300_000) as blocker:
        window.run_capture()
        assert window.capture.running and window.cancel_action.isEnabled()
    loaded = blocker.args[0]
    assert any(seen_running), "the strip lit at least one stage while it ran"
    assert set(strip.cell_states()) == {"0/0", "1/0", "2/0", "0/1", "1/1", "2/1"}
    assert all(state == "done" for unit in strip.cell_states().values() for state in unit.values())
    assert loaded.summary["run"]["exit_status"] == 0 and len(loaded.summary["break_sites"]) == 2
    assert "graph-break site(s)" in window.summary_view.title.text()
    assert not window.cancel_action.isEnabled()


def test_cancel_mid_compile_keeps_an_incomplete_session(qtbot, window, tmp_path, monkeypatch, compiles):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cold"))
    window.open_path(EXAMPLES / "small_resnet.py")
    window.run_capture()
    qtbot.waitUntil(lambda: any(step.started for unit in window.capture.progress.units.values()
                                for step in unit.values()), timeout=120_000)
    with qtbot.waitSignal(window.capture.sigFinished, timeout=1500) as finished:
        window.capture.cancel()
    session_dir = Path(finished.args[0])
    manifest = json.loads((session_dir / "manifest.json").read_text())
    assert manifest["complete"] is False and manifest["stopped_by"] == "cancelled"
    qtbot.waitUntil(lambda: "Incomplete session" in window.summary_view.title.text(), timeout=LOAD_TIMEOUT_MS)


def test_failing_script_is_reported_with_its_error(qtbot, window, tmp_path, compiles):
    window.open_path(SCENARIOS / "crash_after_compile.py")
    with qtbot.waitSignal(window.model.sigLoaded, timeout=300_000) as blocker:
        window.run_capture()
    assert "the model script failed after its first compile" in window.last_message
    problems = [p.title for p in blocker.args[0].issues]
    assert any(title.startswith("Capture failed (script_error)") for title in problems)


def test_interpreter_without_torch_is_reported(qtbot, window, tmp_path):
    import subprocess

    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    window.settings.python = str(bare / "bin" / "python")
    window.open_path(EXAMPLES / "mlp_breaks.py")
    with qtbot.waitSignal(window.capture.sigFinished, timeout=60_000) as finished:
        window.run_capture()
    assert finished.args[1] == 3
    qtbot.waitUntil(lambda: "cannot import torch" in getattr(window, "last_message", ""), timeout=60_000)


def test_settings_dialog_lists_interpreters_and_says_which_have_torch(qtbot, window):
    from inspector.gui.qt_settings_dialog import QtSettingsDialog

    dialog = QtSettingsDialog(window.settings, window)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: hasattr(dialog, "candidate_labels"), timeout=120_000)
    assert dialog.candidate_labels[sys.executable].startswith("torch ") == torch_available()
    qtbot.waitUntil(lambda: "torch" in dialog.interpreter_info.text(), timeout=60_000)
    dialog.runs.setValue(7)
    dialog.accept()
    assert window.settings.capture_settings().runs == 7


def test_mode_comparison_captures_three_modes_and_tabulates_them(qtbot, window, compiles):
    window.open_path(EXAMPLES / "small_resnet.py")
    with qtbot.waitSignal(window.modes.sigDone, timeout=600_000) as done:
        window.compare_modes()
    rows = done.args[0]
    assert [row.mode for row in rows] == ["default", "reduce-overhead", "max-autotune"]
    for row in rows:
        manifest = json.loads((row.session / "manifest.json").read_text())
        assert manifest["settings"]["mode"] == row.mode and manifest["complete"]
        assert row.compile_s > 0 and row.steady_s > 0 and row.kernels > 0 and row.error is None
    table = window.modes_view.table
    assert [table.item(r, 0).text() for r in range(table.rowCount())] == ["default", "reduce-overhead", "max-autotune"]
    from inspector.core.analysis.mode_comparison import fastest  # a fastest mode only when the intervals separate it

    status = window.modes_view.status.text()
    assert status.startswith(fastest(rows).text) and "compiled cold, in its own empty compile caches" in status
    assert "Fastest per call here" in status or "No mode is measurably fastest per call" in status
