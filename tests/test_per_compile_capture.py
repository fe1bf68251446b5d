"""A real capture of an example keeps the code Dynamo wrote for every compiled frame and resume
function (as Python, decompiled with depyf in the user's Python) and a copy of the user's script as it
was: a bundle opened after the script changed on disk shows the markers on the captured lines and
says the file changed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conftest import EXAMPLES, ROOT, capture, open_and_wait


@pytest.fixture(scope="module")
def captured(tmp_path_factory, inductor_cache):
    """python_breaks.py, copied to a folder of its own (a test edits it), captured once."""
    pytest.importorskip("depyf")
    folder = tmp_path_factory.mktemp("per_compile_capture")
    script = folder / "python_breaks.py"
    shutil.copy(EXAMPLES / "python_breaks.py", script)
    session = folder / "session"
    process = capture(script, session, inductor_cache)
    assert process.exit_code == 0, (session / "stderr.txt").read_text()[-3000:]
    return script, session


def _summary(path) -> dict:
    done = subprocess.run([sys.executable, "-m", "inspector", "summary", str(path), "--json", "--no-cache"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_compiled_frame_and_resume_function_is_shown_as_python(captured):
    _script, session = captured
    units = _summary(session)["units"]
    assert len(units) == 3  # forward, and its resume functions after the print and after .item()
    for unit in units:
        code = {text["title"]: text.get("text") for text in unit["compile"]["code"]}
        function, shown = unit["function"], unit["shown"]  # torch_dynamo_resume_in_forward_at_16, as listed
        transformed = code[f"{shown}: transformed Python (decompiled)"]
        assert transformed.startswith(f"def {function}(")
        assert "__compiled_fn_" in transformed  # the code Dynamo wrote calls the compiled graph
        assert "__compiled_fn_" not in code[f"{shown}: original Python (decompiled)"]
    first = units[0]["compile"]["code"]
    original = next(text["text"] for text in first if text["title"] == "forward: original Python (decompiled)")
    assert "print(" in original and ".item()" in original  # the user's own forward, decompiled back


def test_a_bundle_opened_after_the_script_changed_shows_the_captured_lines(captured, tmp_path, qtbot, window,
                                                                         no_slot_errors):
    from inspector.core.readers.session_bundle import save_bundle

    script, session = captured
    as_captured = script.read_text()
    bundle, _skipped = save_bundle(session, tmp_path / "shared.tcinspect")
    try:
        script.write_text("# one\n# two\n# three\n" + as_captured)  # three lines added at the top
        loaded = open_and_wait(qtbot, window, bundle)
        view = window.source_view
        window.tabs.setCurrentWidget(view)
        qtbot.waitUntil(lambda: view.notice.isVisible(), timeout=60_000)
        assert view.toPlainText() == as_captured.rstrip("\n") or view.toPlainText() == as_captured
        assert "file on disk has CHANGED since the capture" in view.notice.label.text()
        marks = loaded.analysis.source_marks[str(script)]
        lines = as_captured.splitlines()
        assert marks and set(marks) <= set(view.marker_lines())
        # the markers sit on the lines that broke: the print and the .item()
        assert {lines[line - 1].strip().split("(")[0] for line in marks} >= {"print", "steps = int"}
        assert view.notice.other.isVisible() and view.notice.other.text() == "Show the file on disk"
        view.notice.other.click()
        qtbot.waitUntil(lambda: view.toPlainText().startswith("# one"), timeout=60_000)
        assert "CHANGED since the capture" in view.notice.label.text()
        assert view.notice.other.text() == "Show the captured copy"
    finally:
        script.write_text(as_captured)


def test_a_raw_log_says_it_reads_the_file_on_disk(captured, qtbot, window, no_slot_errors):
    _script, session = captured
    open_and_wait(qtbot, window, session / "trace")
    view = window.source_view
    window.tabs.setCurrentWidget(view)
    window.model.select_unit(window.model.loaded.session.units[0])
    qtbot.waitUntil(lambda: view.notice.isVisible(), timeout=60_000)
    assert view.notice.label.text().startswith("Read from disk now: this session keeps no copy of the file")
    assert not view.notice.other.isVisible()


NO_DEPYF = r"""
import sys, importlib.util
from pathlib import Path
sys.modules["depyf"] = None  # as in a Python where depyf is not installed: importing it fails
import torch
spec = importlib.util.spec_from_file_location("dynamo_code", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.record_dynamo_code(torch, Path(sys.argv[2]), print)

def f(x):
    return x.relu() + 1

torch.compile(f, backend="eager")(torch.randn(3))
"""


def test_without_depyf_the_capture_keeps_bytecode_and_says_why_there_is_no_python(tmp_path, compiles):
    folder = tmp_path / "dynamo_code"
    done = subprocess.run([sys.executable, "-c", NO_DEPYF, str(ROOT / "inspector" / "capture" / "dynamo_code.py"),
                           str(folder)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    index = json.loads((folder / "index.json").read_text())
    assert index["decompiler"]["available"] is False and "pip install depyf" in index["decompiler"]["reason"]
    (entry,) = index["entries"]
    assert entry["compile_id"] == "0/0" and set(entry["files"]) == {"ORIGINAL_BYTECODE", "MODIFIED_BYTECODE"}
    assert "__compiled_fn_" in (folder / entry["files"]["MODIFIED_BYTECODE"]).read_text()


def test_each_break_links_to_the_resume_function_that_follows_it(captured, qtbot, window, no_slot_errors):
    from PySide6.QtCore import Qt

    from inspector.core.analysis.break_map import Gap
    from inspector.gui.views.qt_break_map import gap_tip

    _script, session = captured
    breaks = _summary(session)["graph_breaks"]
    assert [(brk["line"], brk["resumed_in"]) for brk in breaks] == [(16, "[1/0]"), (17, "[2/0]")]
    loaded = open_and_wait(qtbot, window, session)
    window.tabs.setCurrentWidget(window.graph_view)
    break_map = window.graph_view.break_map
    qtbot.waitUntil(lambda: any(isinstance(part, Gap) for _rect, part in break_map.hit_boxes), timeout=60_000)
    rect, gap = next((rect, part) for rect, part in break_map.hit_boxes if isinstance(part, Gap))
    resume = next(unit for unit in loaded.session.units if str(unit.compile_id) == "[1/0]")
    assert gap.resume is resume
    assert ("Then resumes in [1/0] forward (resumed at line 16) (torch_dynamo_resume_in_forward_at_16): "
            "double-click to select it") in gap_tip(gap)
    qtbot.mouseDClick(break_map, Qt.MouseButton.LeftButton, pos=rect.center().toPoint())
    qtbot.waitUntil(lambda: window.model.unit is resume, timeout=10_000)
    # the Code tab then offers the resume function's code as Dynamo wrote it, as Python
    labels = [window.code_view.texts.itemText(index) for index in range(window.code_view.texts.count())]
    assert "torch_dynamo_resume_in_forward_at_16_MODIFIED_SOURCE" in labels
