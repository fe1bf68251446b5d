"""A profiler trace beside the TORCH_TRACE log of the same run (issue 25): the profile's kernel time
per kernel and compile unit as the profile measured it, and through Inductor's provenance per FX
node, module and line of the user's model, apportioned where one kernel computes several nodes.
The pair is real: a small model compiled and profiled on CPU (tests/scenarios/profiled_model.py)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from inspector import cli
from inspector.core.analysis.profile_join import source_time
from inspector.core.outputs.gpu_summary import SOURCE_TIME_KEY, profile_section
from inspector.core.readers.profiler_trace import read_profiler_trace
from inspector.core.readers.sources import detect

SCRIPT = Path(__file__).parent / "scenarios" / "profiled_model.py"
GRAPH_CALL = "## Call CompiledFxGraph"


def _log(run) -> Path:
    return next(run.trace_dir.glob("*.log"))


def _kernel_events(profile: Path) -> dict[str, list[float]]:
    """The profile's own durations of the generated kernels and library calls run inside compiled
    graph calls, by the name the output code gives them — read from the file, not through our reader."""
    events = sorted((event for event in json.loads(profile.read_text())["traceEvents"] if event.get("ph") == "X"),
                    key=lambda event: event["ts"])
    calls = [(event["ts"], event["ts"] + event["dur"]) for event in events if event["name"].startswith(GRAPH_CALL)]
    found: dict[str, list[float]] = {}
    for event in events:
        inside = any(start <= event["ts"] <= end for start, end in calls)
        name = re.sub(r"^graph_\d+_", "", event["name"])
        if inside and name.startswith("cpp_fused"):
            found.setdefault(name, []).append(event["dur"])
        elif inside and name == "aten::addmm":
            found.setdefault("extern_kernels.addmm", []).append(event["dur"])
    return found


def _script_line(text: str) -> int:
    return next(number for number, line in enumerate(SCRIPT.read_text().splitlines(), 1) if text in line)


def test_the_profile_beside_a_log_gives_its_kernel_time_to_the_model_s_lines(profiled_run):
    session = detect(_log(profiled_run)).open()
    section, why = profile_section(session)  # found beside the log, not named
    assert why == "" and section["profile"] == str(profiled_run.folder / "profile.pt.trace.json")
    measured = _kernel_events(profiled_run.folder / "profile.pt.trace.json")
    assert set(measured) == {row["name"] for row in section["kernels"]}, \
        "every kernel of the graph is named in the profile"
    for name, durations in measured.items():  # per kernel: the profile's own durations, summed over its call sites
        rows = [row for row in section["kernels"] if row["name"] == name]
        assert sum(row["us"] for row in rows) == pytest.approx(sum(durations))
        assert sum(row["launches"] for row in rows) == len(durations)
    for row in section["kernels"]:
        assert row["basis"] == "measured" and row["compile_id"] == "0/0"
    total = sum(sum(durations) for durations in measured.values())
    assert section["total_us"] == pytest.approx(total)
    assert [(row["compile_id"], row["us"]) for row in section["units"]] == [("0/0", pytest.approx(total))]
    assert section["graph_calls"] == 5 and section["device"] == "CPU"
    # per source line: the model file's real lines, their times summing to the kernels'
    source = SCRIPT.read_text().splitlines()
    lines = {row["line"]: row for row in section["lines"]}
    assert set(lines) == {_script_line("return self.norm("), _script_line("return torch.softmax(")}
    for number, row in lines.items():
        assert Path(row["file"]).resolve() == SCRIPT.resolve() and row["code"] == source[number - 1].strip()
        assert row["basis"] == "measured"  # each kernel's nodes all lie on one line
    assert sum(row["us"] for row in lines.values()) == pytest.approx(total)
    block_line = lines[_script_line("return self.norm(")]
    assert block_line["us"] == pytest.approx(sum(measured["extern_kernels.addmm"][i] for i in range(15) if i % 3 != 2)
                                             + sum(measured["cpp_fused_add_native_layer_norm_relu_0"]))


def test_a_fused_kernel_s_time_is_apportioned_among_its_nodes_and_modules(profiled_run):
    session = detect(_log(profiled_run)).open()
    section, _ = profile_section(session)
    measured = _kernel_events(profiled_run.folder / "profile.pt.trace.json")
    nodes = {row["node"]: row for row in section["nodes"]}
    addmm = measured["extern_kernels.addmm"]  # 3 launches per call, in call order: first.fc, second.fc, head
    for index, (node, module) in enumerate((("linear", "first.fc"), ("linear_1", "second.fc"), ("linear_2", "head"))):
        assert nodes[node]["basis"] == "measured" and nodes[node]["module"] == module
        assert nodes[node]["us"] == pytest.approx(sum(addmm[index::3]))
    # the add + relu + layer_norm kernel of each block: a third of its launch to each node
    fused = measured["cpp_fused_add_native_layer_norm_relu_0"]
    first_block = sum(fused[0::2])
    for node in ("relu", "add", "layer_norm"):
        assert nodes[node]["basis"] == "apportioned" and nodes[node]["us"] == pytest.approx(first_block / 3)
    modules = {row["module"]: row for row in section["modules"]}
    assert modules["first.fc"]["basis"] == "measured" and modules["first.norm"]["basis"] == "apportioned"
    assert sum(row["us"] for row in section["modules"]) == pytest.approx(section["total_us"])
    assert sum(row["us"] for row in section["nodes"]) == pytest.approx(section["total_us"])


def test_cli_summary_adds_the_profile_in_text_and_json(profiled_run, capsys):
    log = _log(profiled_run)
    assert cli.main(["summary", str(log), "--no-cache"]) == 0
    text = capsys.readouterr().out
    line = _script_line("return self.norm(")
    assert "Kernel time per source line" in text and f"profiled_model.py:{line}" in text and "apportioned" in text
    assert cli.main(["summary", str(log), "--json", "--no-cache"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document[SOURCE_TIME_KEY]["lines"][0]["file"].endswith("profiled_model.py")


def test_a_log_alone_has_no_profile_section_and_a_named_profile_is_read(profiled_run, tmp_path, capsys):
    alone = tmp_path / "alone" / "trace"
    alone.mkdir(parents=True)
    log = shutil.copy(_log(profiled_run), alone)
    assert cli.main(["summary", str(log), "--json", "--no-cache"]) == 0
    assert SOURCE_TIME_KEY not in json.loads(capsys.readouterr().out)
    profile = profiled_run.folder / "profile.pt.trace.json"
    assert cli.main(["summary", str(log), "--json", "--no-cache", "--profile", str(profile)]) == 0
    assert json.loads(capsys.readouterr().out)[SOURCE_TIME_KEY]["graph_calls"] == 5
    assert cli.main(["summary", str(log), "--profile", str(tmp_path / "missing.json")]) == 2


@pytest.mark.parametrize("linked_by", ["correlation", "External id"])
def test_on_a_gpu_trace_a_launch_s_time_is_the_gpu_time_it_queued(profiled_run, tmp_path, linked_by):
    """The real CPU trace with a GPU kernel added under each launch, as a CUDA run records them: tied
    by correlation to a runtime call inside it, or (traces without launch calls, like the corpus's
    triton_example) by the launching op's External id. The figures are then the GPU kernels' durations."""
    document = json.loads((profiled_run.folder / "profile.pt.trace.json").read_text())
    added, gpu_us = [], {}
    for number, event in enumerate(event for event in document["traceEvents"] if event.get("ph") == "X"
                                   and re.sub(r"^graph_\d+_", "", event["name"]).startswith(
                                       ("cpp_fused", "aten::addmm"))):
        link = {"correlation": 10_000 + number}
        if linked_by == "correlation":
            added.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": event["pid"],
                          "tid": event["tid"], "ts": event["ts"] + event["dur"] / 2, "dur": 0.0, "args": link})
        else:
            link = {"External id": event["args"]["External id"]}
        added.append({"ph": "X", "cat": "kernel", "name": f"gpu_{number}", "pid": 0, "tid": 7, "ts": event["ts"] + 100,
                      "dur": 1.5 + number, "args": {**link, "device": 0}})
        gpu_us[number] = 1.5 + number
    document["traceEvents"] += added
    path = tmp_path / "gpu.pt.trace.json"
    path.write_text(json.dumps(document))
    joined = source_time(detect(_log(profiled_run)).open(), read_profiler_trace(path))
    assert joined.device == "GPU" and joined.total_us == pytest.approx(sum(gpu_us.values()))
    assert sum(row.figure.total_us for row in joined.lines) == pytest.approx(sum(gpu_us.values()))


def test_the_gpu_tab_shows_the_run_s_profile_per_source_line(profiled_run, qtbot, window):
    """Opening the log is enough: the profile beside it is read and joined in the GPU tab."""
    window.open_path(_log(profiled_run))
    view = window.gpu_view
    qtbot.waitUntil(lambda: view.source_lines.rowCount() == 2, timeout=120_000)
    source = SCRIPT.read_text().splitlines()
    shown = {view.source_lines.item(row, 3).text(): view.source_lines.item(row, 4).text()
             for row in range(view.source_lines.rowCount())}
    line = _script_line("return self.norm(")
    assert shown[f"profiled_model.py:{line}"] == source[line - 1].strip()
    assert view.source_lines.item(0, 2).text() == "measured"
    modules = {view.modules.item(row, 0).text(): view.modules.item(row, 3).text()
               for row in range(view.modules.rowCount())}
    assert modules["first.fc"] == "measured" and modules["first.norm"] == "apportioned"
    assert "5 compiled graph call(s)" in view.joined_label.text()


def test_a_profile_opened_alone_is_joined_to_the_run_opened_next(qtbot, window, profiled_run, tmp_path):
    window.open_path(profiled_run.folder / "profile.pt.trace.json")
    view = window.gpu_view
    qtbot.waitUntil(lambda: view.profile is not None, timeout=60_000)
    assert view.source_lines.rowCount() == 0 and "Open the run" in view.joined_label.text()
    alone = tmp_path / "alone"  # the log without the profile beside it
    alone.mkdir()
    window.open_path(Path(shutil.copy(_log(profiled_run), alone)))
    qtbot.waitUntil(lambda: view.source_lines.rowCount() == 2, timeout=120_000)
    assert view.profile_trace.path == profiled_run.folder / "profile.pt.trace.json"


def test_provenance_of_any_shape_leaves_the_kernel_times_as_measured(profiled_run):
    """A log may hold anything: maps of the wrong shape name no nodes, and the kernels keep their time."""
    session = detect(_log(profiled_run)).open()
    right = source_time(session, read_profiler_trace(profiled_run.folder / "profile.pt.trace.json"))
    for unit in session.units:
        unit.provenance = {"cppCodeToPost": ["not", "a", "map"], "postToPre": {"addmm": "linear"}}
    joined = source_time(session, read_profiler_trace(profiled_run.folder / "profile.pt.trace.json"))
    assert joined.total_us == pytest.approx(right.total_us)
    assert sum(row.figure.total_us for row in joined.lines) + joined.unattributed_us == pytest.approx(right.total_us)


def test_without_graph_call_events_the_compiled_regions_hold_the_launches(profiled_run, tmp_path):
    """Older torch marks no `## Call CompiledFxGraph` span: the `Torch-Compiled Region: 0/0` around
    the launches ties them to the unit's code instead, with the same figures."""
    document = json.loads((profiled_run.folder / "profile.pt.trace.json").read_text())
    document["traceEvents"] = [event for event in document["traceEvents"]
                               if not event.get("name", "").startswith(GRAPH_CALL)]
    path = tmp_path / "older.pt.trace.json"
    path.write_text(json.dumps(document))
    session = detect(_log(profiled_run)).open()
    joined = source_time(session, read_profiler_trace(path))
    measured = _kernel_events(profiled_run.folder / "profile.pt.trace.json")
    assert joined.graph_calls == 5 and joined.total_us == pytest.approx(sum(map(sum, measured.values())))
