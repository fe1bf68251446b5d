"""Capture with real compiles on CPU: each example's session against torch's own report of the same
run, the measurements, and every way a run can go wrong."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import EXAMPLES, SCENARIOS, capture, torch_available

from inspector.capture.launcher import CaptureProcess, CaptureSettings, plan_script, probe_interpreter, tail_progress
from inspector.core.readers.session_loader import open_session
from inspector.core.outputs.summary import summarize

_LOG_BREAK = re.compile(r"\[(?P<id>\d+/\d+)(?:_\d+)?\] \[__graph_breaks\] Graph break.* in user code at (?P<where>\S+:\d+)")
_LOG_RECOMPILE = re.compile(r"\[(?P<id>\d+/\d+)\] \[__recompiles\] Recompiling function")
EXPECTED = {  # example: (break sites, recompiles)
    "mlp_breaks": (2, 3),
    "python_breaks": (2, 0),
    "small_resnet": (0, 0),
    "tiny_decoder": (1, 2),
}


def test_examples_are_exactly_the_expected_ones():
    assert sorted(path.stem for path in EXAMPLES.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("example", sorted(EXPECTED))
def test_example_session_matches_torch_logs_and_counters(captured_examples, example):
    session_dir = captured_examples[example]
    session = open_session(session_dir)
    torch_logs = (session_dir / "stderr.txt").read_text()
    logged_breaks = {(f"[{m['id']}]", m["where"]) for m in _LOG_BREAK.finditer(torch_logs)}
    ours = {(str(b.compile_id.without_attempt()), f"{b.location.file}:{b.location.line}") for b in session.breaks}
    assert ours == logged_breaks
    logged_recompiles = {f"[{m['id']}]" for m in _LOG_RECOMPILE.finditer(torch_logs)}
    assert {str(r.compile_id) for r in session.recompiles} == logged_recompiles
    sites, recompiles = EXPECTED[example]
    summary = summarize(session)
    assert len(summary["break_sites"]) == sites and len(summary["recompiles"]) == recompiles
    assert summary["run"]["breaks_agree_with_torch"] is True
    assert summary["complete"] and summary["run"]["exit_status"] == 0


def test_entry_point_capture_measures_speedup_correctness_and_kernels(captured_examples):
    session_dir = captured_examples["small_resnet"]
    results = json.loads((session_dir / "results.json").read_text())
    assert results["entry_point"] and results["allclose"] is True
    assert results["threads"] == 1 and results["eager"]["n"] == 5
    summary = summarize(open_session(session_dir))
    figures = {figure["key"]: figure for figure in summary["verdict"]}
    assert figures["speedup"]["value"] == pytest.approx(results["eager"]["median_s"] / results["compiled"]["median_s"])
    assert figures["t_compile"]["value"] > 0 and figures["fusion"]["value"] > 1
    # per-kernel times: the C++ kernels Inductor generated show up in the compiled profile by name
    ops = [row["name"] for row in results["profile"]["compiled"]["ops"]]
    kernels = {kernel.name for unit in open_session(session_dir).units for kernel in unit.kernels if kernel.fused}
    assert any(op.endswith(name) for op in ops for name in kernels)
    assert (session_dir / "profile" / "compiled.json").stat().st_size > 0
    # structured graphs with exact module stacks, one per compile unit
    graph = json.loads(next((session_dir / "graphs").glob("0_0.json")).read_text())
    assert any(node["nn_module_stack"] for node in graph["nodes"])


def test_progress_stream_announces_stages_as_they_happen(captured_examples):
    events, _ = tail_progress(captured_examples["mlp_breaks"])
    kinds = [event["event"] for event in events]
    assert kinds[0] == "environment" and kinds[-1] == "done"
    stages = [event for event in events if event["event"] == "stage"]
    assert {"dynamo", "inductor_compile"} <= {event["name"] for event in stages}
    phases = [(event["phase"], event["state"]) for event in events if event["event"] == "phase"]
    assert phases[:4] == [("load", "start"), ("load", "end"), ("baseline", "start"), ("baseline", "end")]


def test_crashing_script_keeps_what_was_compiled(tmp_path, inductor_cache):
    if not torch_available():
        pytest.skip("torch is not installed")
    process = capture(SCENARIOS / "crash_after_compile.py", tmp_path / "s", inductor_cache)
    assert process.exit_code == 1
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["complete"] is False
    assert "the model script failed after its first compile" in manifest["error"]["message"]
    assert "Traceback" in (tmp_path / "s" / "stderr.txt").read_text()
    session = open_session(tmp_path / "s")
    assert not session.complete and len(session.units) == 1 and session.units[0].kernels


def test_capture_killed_mid_compile_reopens_with_partial_data(tmp_path, inductor_cache):
    if not torch_available():
        pytest.skip("torch is not installed")
    plan = plan_script(EXAMPLES / "small_resnet.py", [], tmp_path / "s", CaptureSettings(threads=1))
    plan.env["TORCHINDUCTOR_CACHE_DIR"] = str(tmp_path / "cold_cache")  # cold: compiling takes seconds
    process = CaptureProcess(plan)
    offset, deadline = 0, time.time() + 300
    while time.time() < deadline and process.poll() is None:
        events, offset = tail_progress(plan.session, offset)
        if any(e["event"] == "stage" and e["name"] == "inductor_compile" and e["ph"] == "B" for e in events):
            break
        time.sleep(0.05)
    started = time.time()
    process.stop("cancelled")
    assert process.poll() is not None and time.time() - started < 1.0
    manifest = json.loads((plan.session / "manifest.json").read_text())
    assert manifest["complete"] is False and manifest["stopped_by"] == "cancelled"
    session = open_session(plan.session)
    assert not session.complete
    (unit,) = session.units
    assert "dynamo" in unit.graphs  # captured before the kill
    assert not unit.output_code  # killed before code generation finished
    open_stages = summarize(session)["compile_time"]["open_stages"]
    assert "inductor_compile" in open_stages


def test_hanging_script_is_stopped_by_the_timeout(tmp_path, inductor_cache):
    if not torch_available():
        pytest.skip("torch is not installed")
    process = capture(SCENARIOS / "hangs.py", tmp_path / "s", inductor_cache, timeout_s=45)
    assert process.exit_code == 124
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["error"]["kind"] == "timeout" and not manifest["complete"]
    assert "compiled; now hanging" in (tmp_path / "s" / "stdout.txt").read_text()
    assert len(open_session(tmp_path / "s").units) == 1


def test_fullgraph_break_is_explained_in_one_line(tmp_path, inductor_cache):
    if not torch_available():
        pytest.skip("torch is not installed")
    process = capture(EXAMPLES / "mlp_breaks.py", tmp_path / "s", inductor_cache, fullgraph=True)
    assert process.exit_code == 1
    error = json.loads((tmp_path / "s" / "manifest.json").read_text())["error"]
    assert error["kind"] == "graph_break_in_fullgraph"
    assert "\n" not in error["message"] and "Data-dependent" in error["message"]


def test_interpreter_without_torch_is_named_in_the_message(tmp_path):
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True)
    python = str(bare / "bin" / "python")
    assert probe_interpreter(python)["torch"] is None
    process = CaptureProcess(plan_script(EXAMPLES / "mlp_breaks.py", [], tmp_path / "s", CaptureSettings(), python))
    assert process.wait() == 3
    error = json.loads((tmp_path / "s" / "manifest.json").read_text())["error"]
    assert error["kind"] == "no_torch" and "cannot import torch" in error["message"] and str(bare) in error["message"]


def test_flooding_stdout_goes_to_the_file_not_to_memory(tmp_path, inductor_cache):
    if not torch_available():
        pytest.skip("torch is not installed")
    process = capture(SCENARIOS / "floods_stdout.py", tmp_path / "s", inductor_cache)
    assert process.exit_code == 0
    assert (tmp_path / "s" / "stdout.txt").stat().st_size == 30 * 1024 * 1024


@pytest.mark.slow
def test_any_command_mode_traces_without_measuring(tmp_path):
    if not torch_available():
        pytest.skip("torch is not installed")
    done = subprocess.run([sys.executable, "-m", "inspector", "capture", "-o", str(tmp_path / "s"), "--quiet", "--",
                           sys.executable, str(EXAMPLES / "python_breaks.py")],
                          capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert done.returncode == 0, done.stderr
    session = open_session(tmp_path / "s")
    assert session.kind == "capture" and len(session.breaks) == 2 and session.results is None
    assert summarize(session)["verdict"][1]["source"].startswith("not measured")


def test_runner_imports_only_the_standard_library_and_torch():
    runner = Path(__file__).parent.parent / "inspector" / "capture" / "runner.py"
    imported = set()
    for node in ast.walk(ast.parse(runner.read_text())):
        if isinstance(node, ast.Import):
            imported |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            imported.add(node.module.split(".")[0])
    assert imported - set(sys.stdlib_module_names) == {"torch"}


def test_graphs_parsed_from_text_have_the_nodes_and_edges_torch_recorded(captured_examples):
    """The readable graph text in the log, parsed, against the graph object torch handed the backend."""
    checked = 0
    for session_dir in captured_examples.values():
        for unit in open_session(session_dir).units:
            recorded = next((a for a in unit.artifacts if a.name == "structured_graph"), None)
            if recorded is None or "dynamo" not in unit.graphs:
                continue
            truth = json.loads(recorded.text)["nodes"]
            graph = unit.graphs["dynamo"].graph
            assert [node.name for node in graph.nodes] == [node["name"] for node in truth]
            for node in truth:
                assert graph.node(node["name"]).inputs == node["inputs"], (unit.title, node["name"])
                for source in node["inputs"]:
                    assert node["name"] in graph.users(source)
            checked += 1
    assert checked >= 8
