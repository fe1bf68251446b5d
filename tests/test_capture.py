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
from conftest import EXAMPLES, SCENARIOS, capture
from cli_runner import run_cli_process

from inspector.capture.launcher import (
    CaptureProcess, CaptureSettings, plan_command, plan_script, probe_interpreter, tail_progress,
)
from inspector.capture.options import OPTIONS
from inspector.core.model.session import UnitStatus
from inspector.core.outputs.summary import summarize
from inspector.core.readers.session_loader import open_path

ROOT = Path(__file__).resolve().parent.parent

_LOG_BREAK = re.compile(r"\[(?P<id>\d+/\d+)(?:_\d+)?\] \[__graph_breaks\] Graph break.* "
                        r"in user code at (?P<where>\S+:\d+)")
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
    session = open_path(session_dir)
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
    summary = summarize(open_path(session_dir))
    figures = {figure["key"]: figure for figure in summary["verdict"]}
    assert figures["speedup"]["value"] == pytest.approx(results["eager"]["median_s"] / results["compiled"]["median_s"])
    assert figures["t_compile"]["value"] > 0 and figures["fusion"]["value"] > 1
    # per-kernel times: the C++ kernels Inductor generated show up in the compiled profile by name
    ops = [row["name"] for row in results["profile"]["compiled"]["ops"]]
    kernels = {kernel.name for unit in open_path(session_dir).units for kernel in unit.kernels if kernel.fused}
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
    process = capture(SCENARIOS / "crash_after_compile.py", tmp_path / "s", inductor_cache)
    assert process.exit_code == 1
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["complete"] is False
    assert "the model script failed after its first compile" in manifest["error"]["message"]
    assert "Traceback" in (tmp_path / "s" / "stderr.txt").read_text()
    session = open_path(tmp_path / "s")
    assert not session.complete and len(session.units) == 1 and session.units[0].kernels


def test_capture_killed_mid_compile_reopens_with_partial_data(tmp_path, inductor_cache):
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
    process.wait(interval_s=0.02)
    assert time.time() - started < 1.0
    manifest = json.loads((plan.session / "manifest.json").read_text())
    assert manifest["complete"] is False and manifest["stopped_by"] == "cancelled"
    session = open_path(plan.session)
    assert not session.complete
    (unit,) = session.units
    assert "dynamo" in unit.graphs  # captured before the kill
    assert not unit.output_code  # killed before code generation finished
    assert unit.status is UnitStatus.CUT  # not "ok": Dynamo never finished this compile
    open_stages = summarize(session)["compile_time"]["open_stages"]
    assert "inductor_compile" in open_stages


def test_hanging_script_is_stopped_by_the_timeout(tmp_path, inductor_cache):
    process = capture(SCENARIOS / "hangs.py", tmp_path / "s", inductor_cache, timeout_s=45)
    assert process.exit_code == 124
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["error"]["kind"] == "timeout" and not manifest["complete"]
    assert "compiled; now hanging" in (tmp_path / "s" / "stdout.txt").read_text()
    assert len(open_path(tmp_path / "s").units) == 1


def test_fullgraph_break_is_explained_in_one_line(tmp_path, inductor_cache):
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
    process = capture(SCENARIOS / "floods_stdout.py", tmp_path / "s", inductor_cache)
    assert process.exit_code == 0
    assert (tmp_path / "s" / "stdout.txt").stat().st_size == 30 * 1024 * 1024


def test_any_command_mode_traces_without_measuring(tmp_path, compiles):
    done = subprocess.run([sys.executable, "-m", "inspector", "capture", "-o", str(tmp_path / "s"), "--quiet", "--",
                           sys.executable, str(EXAMPLES / "python_breaks.py")],
                          capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert done.returncode == 0, done.stderr
    session = open_path(tmp_path / "s")
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
        for unit in open_path(session_dir).units:
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


# --- options: declared once -------------------------------------------------------------------------

def _runner_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location("_runner_under_test", ROOT / "inspector" / "capture" / "runner.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cli_capture_parsers():
    import argparse

    from inspector.cli import add_capture_commands

    commands = argparse.ArgumentParser().add_subparsers(dest="command")
    add_capture_commands(commands)
    return commands.choices["capture"], commands.choices["modes"]


def test_cli_settings_and_runner_take_the_same_options_with_the_same_defaults():
    capture, modes = _cli_capture_parsers()
    cli = {action.dest: action.default for action in capture._actions}
    runner = vars(_runner_module().parse_args(["--session", "s", "model.py"]))
    settings = CaptureSettings()
    assert [spec.name for spec in __import__("dataclasses").fields(CaptureSettings)] == [o.name for o in OPTIONS]
    for option in OPTIONS:
        assert cli[option.name] == option.default == getattr(settings, option.name)
        assert (option.name in runner) == option.runner
        if option.runner:
            assert runner[option.name] == option.default
    assert {action.dest for action in modes._actions} >= {o.name for o in OPTIONS} - {"mode"}


def test_a_setting_chosen_on_the_command_line_reaches_the_runner_unchanged():
    capture, _ = _cli_capture_parsers()
    chosen = ["--mode", "max-autotune", "--dynamic", "false", "--fullgraph", "--backend", "aot_eager", "--device",
              "cuda", "--runs", "7", "--warmup", "0", "--no-profile", "--timeout", "2.5", "--threads", "2"]
    args = capture.parse_args(["-o", "out", *chosen])
    settings = CaptureSettings(**{option.name: getattr(args, option.name) for option in OPTIONS})
    assert settings.timeout_s == 2.5 and settings.threads == 2 and settings.profile is False
    runner = vars(_runner_module().parse_args(["--session", "s", *settings.runner_options(), "model.py"]))
    assert {name: runner[name] for name in runner if name not in ("session", "script", "script_args")} == \
        {option.name: getattr(settings, option.name) for option in OPTIONS if option.runner}


@pytest.mark.parametrize("bad", [["--runs", "0"], ["--timeout", "-1"], ["--mode", "fast"], ["--threads", "nan"]])
def test_out_of_range_options_are_refused_by_the_command_line(bad, capsys):
    capture, _ = _cli_capture_parsers()
    with pytest.raises(SystemExit):
        capture.parse_args(["-o", "out", *bad])
    assert "argument" in capsys.readouterr().err


def test_stored_settings_with_a_wrong_type_fall_back_to_the_default():
    settings = CaptureSettings.from_mapping({"runs": "many", "mode": "nonsense", "timeout_s": 30, "profile": "yes",
                                             "threads": None, "unknown": 1})
    assert settings == CaptureSettings(timeout_s=30.0)


# --- faults: exit reporting, the whole tree stopped --------------------------------------------------

# A timeout that ends spawns_daemons.py once both its daemons run: they are up 0.3 s after the start on a
# quiet machine, about three times later on a busy one (too short a timeout fails the test: no pids file)
DAEMONS_UP_S = 2


def _gone(pid: int) -> bool:
    """No such process, or only its zombie (killed, waiting for a parent outside our control to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def test_os_exit_in_the_script_is_not_reported_as_a_missing_torch(tmp_path, torch_runtime):
    process = CaptureProcess(plan_script(SCENARIOS / "exits_without_python.py", [], tmp_path / "s", CaptureSettings()))
    assert process.wait() == 3 and process.exit_code == 3
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["exit_status"] == 3 and manifest["exit_signal"] is None
    assert manifest["error"]["kind"] == "exit_status"
    assert "os._exit" in manifest["error"]["message"] and "torch" not in manifest["error"]["message"]


def test_a_native_crash_is_reported_with_its_signal_alike_in_manifest_and_exit_status(tmp_path):
    done = run_cli_process("capture", "-o", str(tmp_path / "s"), "--quiet", "--", sys.executable,
                           str(SCENARIOS / "segfaults.py"))
    assert done.returncode == 128 + 11  # as a shell reports a SIGSEGV death, not 245
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["exit_status"] == -11 and manifest["exit_signal"] == "SIGSEGV" and not manifest["complete"]
    assert manifest["error"]["kind"] == "signal" and "SIGSEGV" in manifest["error"]["message"]
    assert "SIGSEGV" in done.stderr and "exit status 139" in done.stderr


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process trees are read from /proc (Linux)")
def test_timeout_ends_children_that_left_the_process_group(tmp_path, monkeypatch):
    pids_file = tmp_path / "pids"
    monkeypatch.setenv("SCENARIO_PIDS", str(pids_file))
    done = run_cli_process("capture", "-o", str(tmp_path / "s"), "--quiet", "--timeout", str(DAEMONS_UP_S), "--",
                           sys.executable, str(SCENARIOS / "spawns_daemons.py"))
    assert done.returncode == 124, done.stderr
    child, daemon = map(int, pids_file.read_text().split())
    deadline = time.time() + 5
    while time.time() < deadline and not (_gone(child) and _gone(daemon)):
        time.sleep(0.05)
    assert _gone(child), "the start_new_session child survived the timeout"
    assert _gone(daemon), "the orphaned daemon survived the timeout"
    assert json.loads((tmp_path / "s" / "manifest.json").read_text())["error"]["kind"] == "timeout"


def test_cancel_kills_a_process_that_ignores_sigterm_within_a_second(tmp_path):
    process = CaptureProcess(plan_command([sys.executable, str(SCENARIOS / "ignores_sigterm.py")], tmp_path / "s",
                                          CaptureSettings()))
    deadline = time.time() + 30
    while "hanging" not in (tmp_path / "s" / "stdout.txt").read_text() and time.time() < deadline:
        time.sleep(0.05)
    started = time.time()
    process.stop("cancelled")
    assert process.poll() is None  # stop() only begins: it never blocks its caller
    process.wait(interval_s=0.02)
    assert time.time() - started < 1.5
    assert process.exit_code == 128 + 9
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["stopped_by"] == "cancelled" and manifest["exit_signal"] == "SIGKILL"


# --- a unit cut mid-compile ---------------------------------------------------------------------------

def test_log_cut_inside_a_compile_marks_that_unit_cut(tmp_path):
    from conftest import CUDA_LOG

    if not CUDA_LOG.is_file():
        pytest.skip("../shared/corpus is not present beside this checkout")
    lines = CUDA_LOG.read_text().splitlines(keepends=True)
    intact = open_path(CUDA_LOG)
    assert all(unit.status is not UnitStatus.CUT for unit in intact.units)
    metrics = next(i for i, line in enumerate(lines) if '"compilation_metrics"' in line)
    cut = tmp_path / "cut.log"
    cut.write_text("".join(lines[:metrics]))
    first = open_path(cut).units[0]
    assert first.status is UnitStatus.CUT and "dynamo" in first.graphs
    assert summarize(open_path(cut))["units"][0]["status"] == "cut_mid_compile"


# --- the app's controller: the same lifecycle -----------------------------------------------------------

@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="process trees are read from /proc (Linux)")
def test_app_controller_enforces_the_timeout_and_ends_the_whole_tree(qtbot, tmp_path, monkeypatch):
    pytest.importorskip("PySide6")
    from inspector.gui.qt_capture_controller import QtCaptureController

    pids_file = tmp_path / "pids"
    monkeypatch.setenv("SCENARIO_PIDS", str(pids_file))
    controller = QtCaptureController()
    output: list[str] = []
    controller.sigOutput.connect(lambda stream, text: output.append(text))
    with qtbot.waitSignal(controller.sigFinished, timeout=60_000) as finished:
        controller.start_plan(plan_command([sys.executable, str(SCENARIOS / "spawns_daemons.py")], tmp_path / "s",
                                           CaptureSettings(timeout_s=DAEMONS_UP_S)))
    session, code, error = finished.args
    assert code == 124 and error["kind"] == "timeout"
    assert "daemons started" in "".join(output)  # the log pane is fed from stdout.txt
    manifest = json.loads((Path(session) / "manifest.json").read_text())
    assert manifest["stopped_by"] == "timeout" and not manifest["complete"]
    child, daemon = map(int, pids_file.read_text().split())
    qtbot.waitUntil(lambda: _gone(child) and _gone(daemon), timeout=60_000)
    assert not controller.running


def test_output_tail_skips_a_flood_and_decodes_across_reads(tmp_path):
    pytest.importorskip("PySide6")
    from inspector.gui.qt_capture_controller import MAX_OUTPUT_PER_POLL, OutputTail

    path = tmp_path / "stdout.txt"
    path.write_bytes(b"x" * (3 * MAX_OUTPUT_PER_POLL))
    tail = OutputTail(path)
    text = tail.read()
    assert text.startswith("\n[… ") and "see stdout.txt" in text and len(text) < MAX_OUTPUT_PER_POLL + 200
    with open(path, "ab") as handle:
        handle.write("é".encode()[:1])
    assert tail.read() == ""  # half a character waits for its other half
    with open(path, "ab") as handle:
        handle.write("é".encode()[1:] + b"\n")
    assert tail.read() == "é\n"


def test_settings_dialog_edits_every_option_and_stores_them(qtbot, tmp_path, quick_interpreter):
    pytest.importorskip("PySide6")
    from PySide6.QtCore import QSettings

    from inspector.gui.qt_settings import AppSettings
    from inspector.gui.qt_settings_dialog import QtSettingsDialog

    settings = AppSettings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    settings.python = quick_interpreter
    dialog = QtSettingsDialog(settings)
    qtbot.addWidget(dialog)
    assert set(dialog.option_widgets) == {option.name for option in OPTIONS}
    assert dialog.timeout_s.text() == "not set" and dialog.threads.text() == "not set"
    dialog.timeout_s.setValue(90)
    dialog.threads.setValue(4)
    dialog.mode.setCurrentText("max-autotune")
    dialog.profile.setChecked(False)
    dialog.accept()
    assert settings.capture_settings() == CaptureSettings(mode="max-autotune", profile=False, timeout_s=90.0, threads=4)


# --- mode comparison from the command line ------------------------------------------------------------

def test_modes_command_reports_each_modes_failure(tmp_path, torch_runtime):
    done = run_cli_process("modes", str(SCENARIOS / "segfaults.py"), "-o", str(tmp_path / "m"), "--quiet",
                           "--modes", "default", "max-autotune")
    assert done.returncode == 1
    for mode in ("default", "max-autotune"):
        assert f"{mode}: FAILED (signal): killed by SIGSEGV" in done.stderr
        assert json.loads((tmp_path / "m" / mode / "manifest.json").read_text())["settings"]["mode"] == mode
    *rows, conclusion = done.stdout.splitlines()[1:]
    assert [row.split()[0] for row in rows] == ["default", "max-autotune"]
    assert all("killed by SIGSEGV" in row for row in rows)  # the table says why each row is empty
    assert conclusion == "No mode finished a measured run."  # and no "fastest" claimed


def test_modes_command_compares_real_captures_each_mode_cold_then_warm(tmp_path, inductor_cache, monkeypatch):
    """Each mode compiles in its own empty caches (torch's own cache events say no hit), so a later mode
    does not look cheaper for the first one's kernels; once more warm, from that cache, it hits. "Fastest"
    is only said when the modes' intervals separate, and each mode's relation to eager is said."""
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(inductor_cache))  # warm from earlier tests: must not be used
    done = run_cli_process("modes", str(EXAMPLES / "small_resnet.py"), "-o", str(tmp_path / "m"), "--quiet",
                           "--json", "--warm", "--modes", "default", "reduce-overhead", "--runs", "5", "--warmup",
                           "1", "--threads", "1", "--no-profile", timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    document = json.loads(done.stdout)
    rows = document["modes"]
    assert [row["mode"] for row in rows] == ["default", "reduce-overhead"]
    assert all(row["error"] is None and row["steady_s"] > 0 and row["kernels"] > 0 for row in rows)
    assert all(row["cache_hits"] == 0 for row in rows), rows  # cold: the second mode reused nothing
    assert all(row["warm_cache_hits"] > 0 and row["warm_compile_s"] < row["compile_s"] for row in rows), rows
    # a mode is named fastest only when the comparison separates it from the other
    fastest = document["fastest"]
    assert document["best"] == fastest["mode"] and document["best"] in (None, "default", "reduce-overhead")
    (against,) = fastest["against"].values()
    assert (fastest["mode"] is not None) == (against["state"] == "faster")
    assert all(row["vs_eager"]["state"] in ("faster", "slower", "no_difference", "inconclusive") for row in rows)
    assert all(capture["exit_status"] == 0 for capture in document["captures"])
    assert [(c["mode"], c["warm"]) for c in document["captures"]] == [
        ("default", False), ("default", True), ("reduce-overhead", False), ("reduce-overhead", True)]
    if all(row["vs_eager"]["state"] == "slower" for row in rows):  # each mode's relation to eager is said
        assert "Every mode is SLOWER than eager" in fastest["text"]


def test_modes_command_reports_an_interpreter_that_cannot_start(tmp_path):
    done = run_cli_process("modes", str(SCENARIOS / "segfaults.py"), "-o", str(tmp_path / "m"), "--quiet",
                           "--python", str(tmp_path / "no-such-python"), "--modes", "default", "reduce-overhead")
    assert done.returncode == 1
    for mode in ("default", "reduce-overhead"):
        assert f"{mode}: FAILED (cannot_start): " in done.stderr and "no-such-python" in done.stderr
    assert [row.split()[0] for row in done.stdout.splitlines()[1:3]] == ["default", "reduce-overhead"]


def test_a_cancelled_mode_ends_the_sequence_other_failures_do_not(tmp_path):
    from inspector.capture.mode_runs import ModeRuns

    runs = ModeRuns(tmp_path, CaptureSettings(runs=3), ("default", "reduce-overhead", "max-autotune"))
    first = runs.next_step()
    assert first.session == tmp_path / "default" and first.settings == CaptureSettings(runs=3, mode="default")
    runs.record(first, 139, {"kind": "signal", "message": "killed by SIGSEGV"})
    second = runs.next_step()
    assert second.mode == "reduce-overhead" and second.settings.runs == 3
    runs.record(second, 143, {"kind": "cancelled", "message": "stopped by the user"}, "cancelled")
    assert runs.next_step() is None
    assert ([o.mode for o in runs.outcomes] == ["default", "reduce-overhead"]
            and not any(o.complete for o in runs.outcomes))


def test_the_runner_reads_the_launcher_pid_under_the_name_the_launcher_writes():
    """runner.py cannot import the session format module: its copy of the variable's name must stay
    the same, or a killed launcher would leave the run going (tests/test_hostile_outputs_and_signals.py)."""
    from inspector.core.readers.session_format import LAUNCHER_ENV

    assert _runner_module().LAUNCHER_ENV == LAUNCHER_ENV
