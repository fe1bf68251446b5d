"""Hostile sessions in the desktop app (issue 13): the Source view shows no file a session merely
names from outside its folder (nor /proc, a device or a FIFO), wrong-typed fields and infinite
figures still open every tab, and log text shows as text, never as markup or a link."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from conftest import events_delivered, open_and_wait  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
LOG_NAME = next((BUNDLED / "trace").glob("*.log")).name
pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def session(tmp_path) -> Path:
    copy = tmp_path / "session"
    shutil.copytree(BUNDLED, copy)
    return copy


def _set_script(session: Path, script: str) -> None:
    manifest = json.loads((session / "manifest.json").read_text())
    manifest["script"] = script
    (session / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.parametrize("script", ["/etc/passwd", "/proc/self/environ", "../../../../../../../etc/passwd",
                                    "/dev/zero", "fifo"])
def test_the_source_view_does_not_show_files_the_session_names_from_outside(qtbot, window, session, tmp_path, script):
    if script == "fifo":
        script = str(tmp_path / "model.py")
        os.mkfifo(script)
    _set_script(session, script)
    open_and_wait(qtbot, window, session)
    window.model.show_location(script, 1)  # as the loaded session, or a link in a pane, asks
    view = window.source_view
    qtbot.waitUntil(lambda: script in view.placeholderText() or script in view.toPlainText(), timeout=60_000)
    shown = view.toPlainText() + view.placeholderText()
    assert "root:" not in shown and "PATH=" not in shown and "\0" not in shown
    assert view.toPlainText() == ""  # a message, not code
    assert "Not shown" in view.placeholderText() or "not on this machine" in view.placeholderText()


def test_the_source_view_shows_a_script_inside_the_session_folder(qtbot, window, session):
    (session / "model.py").write_text("print('the model')\n")
    _set_script(session, "model.py")
    open_and_wait(qtbot, window, session)
    window.model.show_location("model.py", 1)
    qtbot.waitUntil(lambda: window.source_view.toPlainText() == "print('the model')\n", timeout=60_000)


def test_wrong_typed_fields_and_infinite_times_still_open_every_tab(qtbot, window, session):
    results = json.loads((session / "results.json").read_text())
    results["memory_compiled"] = {"cpu_rss_high_water_mb": "lots"}
    results["profile"]["compiled"]["ops"][0]["self_cpu_us"] = "slow"
    results["eager"] = [1, 2]
    (session / "results.json").write_text(json.dumps(results))
    (session / "manifest.json").write_text(json.dumps(["not", "an", "object"]))
    log = session / "trace" / LOG_NAME
    log.write_text(log.read_text().replace('"entire_frame_compile_time_s": ',
                                           '"entire_frame_compile_time_s": Infinity, "x": '))
    loaded = open_and_wait(qtbot, window, session)
    assert loaded.session.problems.counts["bad_field"] >= 3
    for index in range(window.tabs.count()):
        window.tabs.setCurrentIndex(index)
        events_delivered()


def test_markup_in_a_break_reason_shows_as_text(qtbot, window, tmp_path):
    link = "<a href=file:///etc/passwd>click</a>"
    log = tmp_path / LOG_NAME
    text = (BUNDLED / "trace" / LOG_NAME).read_text()
    log.write_text(text.replace("mlp_breaks.py", "mlp" + link + ".py"))
    open_and_wait(qtbot, window, log)
    problems = window.problems_view
    tips = [problems.topLevelItem(i).toolTip(column) for i in range(problems.topLevelItemCount()) for column in (0, 1)]
    assert any("&lt;a href=" in tip for tip in tips)
    assert not any("<a href" in tip for tip in tips)
    window.compare_with(BUNDLED)
    diff = window.diff_view
    qtbot.waitUntil(lambda: "Graph breaks" in diff.run.toPlainText(), timeout=60_000)
    assert link in diff.run.toPlainText()  # rendered as markup it would read "click"
    assert not diff.run.openLinks()


def test_opening_another_session_removes_the_previous_bundle_folder(qtbot, window, tmp_path):
    from inspector.core.readers.session_bundle import save_bundle

    bundle, _ = save_bundle(BUNDLED, tmp_path / "shared")
    folder = open_and_wait(qtbot, window, bundle).session.extracted_to
    assert folder.is_dir()
    open_and_wait(qtbot, window, BUNDLED)
    assert not folder.exists()


@pytest.mark.parametrize("graph", ["[" * 100_000 + "]" * 100_000, '{"nodes": 5}', '{"nodes": [[1], {"name": []}]}',
                                   '{"nodes": [{"name": "x", "nn_module_stack": [5]}]}'])
def test_broken_structured_graphs_leave_the_graph_tab_working(qtbot, window, session, graph):
    for file in (session / "graphs").glob("*.json"):
        file.write_text(graph)
    loaded = open_and_wait(qtbot, window, session)
    view = window.graph_view
    window.tabs.setCurrentWidget(view)
    for unit in loaded.session.units:
        window.model.select_unit(unit)
        qtbot.waitUntil(lambda: view.status.text() != "Parsing and laying out…", timeout=60_000)
