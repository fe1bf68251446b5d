"""Graph diff, run diff and the CI gate: hand-checked small graphs, real captures (a break removed, a
recompile pair, default vs max-autotune), and `check` on good, regressed and incomplete runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import EXAMPLES, capture, open_and_wait, run_traced
from cli_runner import run_cli, run_cli_process

from inspector.core.model.fx_graph_text import parse_fx_graph
from inspector.core.graphs.graph_diff import diff_graphs
from inspector.core.analysis.run_diff import check_run, diff_runs
from inspector.core.readers.session_loader import open_path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"

BEFORE = '''class G(torch.nn.Module):
    def forward(self, x: "f32[4]"):
        relu: "f32[4]" = torch.relu(x)
        add: "f32[4]" = relu + 1
        return (add,)
'''
AFTER_INSERT = '''class G(torch.nn.Module):
    def forward(self, x: "f32[4]"):
        relu: "f32[4]" = torch.relu(x)
        mul: "f32[4]" = relu * 2
        add: "f32[4]" = mul + 1
        return (add,)
'''
RENAMED = '''class G(torch.nn.Module):
    def forward(self, inp: "f32[4]"):
        relu_7: "f32[4]" = torch.relu(inp)
        add_3: "f32[4]" = relu_7 + 1
        return (add_3,)
'''


def test_inserted_op_is_added_and_its_user_changed():
    result = diff_graphs(parse_fx_graph(BEFORE), parse_fx_graph(AFTER_INSERT))
    assert result.matched == {"x": "x", "relu": "relu", "add": "add", "output": "output"}
    assert result.added == ["mul"] and result.removed == []
    assert [(c.a, c.fields) for c in result.changed] == [("add", ("args",))]
    assert result.similarity == pytest.approx(2 * 3 / 9)


def test_renamed_graph_matches_by_structure_not_names():
    result = diff_graphs(parse_fx_graph(BEFORE), parse_fx_graph(RENAMED))
    assert result.matched == {"x": "inp", "relu": "relu_7", "add": "add_3", "output": "output"}
    assert result.changed == [] and result.similarity == 1.0


def test_a_real_graph_diffed_with_itself_matches_everything():
    for unit in open_path(BUNDLED).units:
        for artifact in unit.graphs.values():
            graph = artifact.graph
            result = diff_graphs(graph, graph)
            assert result.similarity == 1.0 and not result.added and not result.removed


def test_recompile_pair_shows_the_symbolic_dimension_as_changed_shapes():
    units = {str(unit.compile_id): unit for unit in open_path(BUNDLED).units}
    result = diff_graphs(units["[0/0]"].graphs["dynamo"].graph, units["[0/1]"].graphs["dynamo"].graph)
    changed = {c.a: c.fields for c in result.changed}
    assert "shape" in changed["l_x_"] and "shape" in changed["linear"]
    assert result.added == ["s77"]  # the symbol became a graph input
    assert result.removed == [] and result.structural_similarity > 0.9


@pytest.fixture(scope="module")
def fixed_break_run(tmp_path_factory, inductor_cache):
    folder = tmp_path_factory.mktemp("fixed")
    script = folder / "mlp_breaks.py"
    script.write_text((EXAMPLES / "mlp_breaks.py").read_text().replace(
        "        torch._dynamo.graph_break()  # an explicit break\n", ""))
    return run_traced(script, folder / "run", inductor_cache)


def test_removing_a_break_shows_as_fixed_and_the_graphs_merge(breaks_run, fixed_break_run):
    before, after = open_path(breaks_run.trace_dir), open_path(fixed_break_run.trace_dir)
    result = diff_runs(before, after)
    assert [site["reason"] for site in result["breaks"]["fixed"]] == ["Call to `torch._dynamo.graph_break()`"]
    assert result["breaks"]["new"] == [] and result["breaks"]["count_a"] == 4 and result["breaks"]["count_b"] == 2
    # the frames after the if were two compiled regions; now they are one graph
    assert len(before.units) == 6 and len(after.units) == 4
    assert {row["status"] for row in result["units"]} == {"in both", "only in A"}
    done = run_cli("check", str(fixed_break_run.trace_dir), "--baseline", str(breaks_run.trace_dir))
    assert done.returncode == 0 and "PASS no-new-breaks" in done.stdout
    regressed = run_cli("check", str(breaks_run.trace_dir), "--baseline", str(fixed_break_run.trace_dir))
    assert regressed.returncode == 1
    assert "FAIL no-new-breaks: new graph break(s):" in regressed.stdout and "graph_break()" in regressed.stdout


def test_default_against_max_autotune(captured_examples, tmp_path, inductor_cache):
    process = capture(EXAMPLES / "small_resnet.py", tmp_path / "autotune", inductor_cache, mode="max-autotune")
    assert process.exit_code == 0
    result = diff_runs(open_path(captured_examples["small_resnet"]), open_path(tmp_path / "autotune"))
    (unit,) = result["units"]
    assert unit["status"] == "in both" and unit["graph"]["similarity"] == 1.0  # same Dynamo graph
    assert result["breaks"]["new"] == result["breaks"]["fixed"] == []
    assert result["steady_state"]["speedup_a"] and result["steady_state"]["speedup_b"]
    done = run_cli("diff", str(captured_examples["small_resnet"]), str(tmp_path / "autotune"), "--json")
    assert json.loads(done.stdout)["schema"] == "torch-compile-inspector/diff"


def test_check_gates_breaks_speedup_and_compile_time():
    checks = {c.name: c for c in check_run(open_path(BUNDLED), max_breaks=0, min_speedup=1.0, max_compile_s=1e6)}
    assert checks["complete"].passed and checks["max-compile-time"].passed
    assert not checks["max-breaks"].passed and checks["max-breaks"].reason == "4 graph break(s), allowed 0"
    assert checks["min-speedup"].passed is None  # a point without an interval gates nothing: INCONCLUSIVE
    done = run_cli("check", str(BUNDLED), "--max-breaks", "4")
    assert done.returncode == 0 and done.stdout.count("PASS") == 2


def test_check_on_an_incomplete_session_fails_with_a_reason(corpus, tmp_path):
    cut = tmp_path / "cut.log"
    cut.write_bytes((corpus / "inductor_provenance_jit_cuda_log.txt").read_bytes()[:60_000])
    done = run_cli("check", str(cut))
    assert done.returncode == 1 and "FAIL complete: the run did not finish" in done.stdout
    assert "Traceback" not in done.stderr


def test_diffing_runs_of_different_ranks_is_labelled(corpus):
    result = diff_runs(open_path(corpus / "multi_rank_logs"), open_path(BUNDLED))
    assert "different ranks" in result["runs"]["note"]
    assert {row["status"] for row in result["units"]} >= {"only in A"}


def test_side_by_side_view_colours_and_steps_through_differences(qtbot, window, breaks_run, fixed_break_run):
    from inspector.gui.views.qt_diff_view import COLOURS

    open_and_wait(qtbot, window, breaks_run.trace_dir)
    window.compare_with(fixed_break_run.trace_dir)
    diff = window.diff_view
    qtbot.waitUntil(lambda: diff.diff is not None and bool(diff.run.toPlainText()), timeout=60_000)
    assert window.tabs.currentWidget() is diff
    assert "fixed:" in diff.run.toPlainText() and "graph_break()" in diff.run.toPlainText()
    printed = run_cli("diff", str(breaks_run.trace_dir), str(fixed_break_run.trace_dir)).stdout
    shown = {" ".join(line.split()) for line in diff.run.toPlainText().splitlines()}
    missing = [line for line in printed.splitlines() if line.strip() and " ".join(line.split()) not in shown]
    assert not missing, f"the Diff pane lacks what `compile-inspector diff` says: {missing}"
    units = [diff.unit.itemText(i).split()[0] for i in range(diff.unit.count())]
    assert units == ["[0/0]", "[0/1]", "[1/0]", "[1/1]"]  # [2/x] exist only in A: the merged graphs
    diff.unit.setCurrentIndex(units.index("[1/0]"))
    qtbot.waitUntil(lambda: diff.diff is not None and bool(diff.diff.added), timeout=60_000)
    added = set(diff.diff.added)
    assert {"linear", "sigmoid"} <= added  # the ops after the removed break now live in this graph
    right = diff.layers[1]
    assert all(right.fills[right.index[name]] == COLOURS["added"] for name in added if name in right.index)
    diff.step(1)
    first = diff.differences.currentItem().text()
    diff.step(1)
    assert diff.differences.currentItem().text() != first
    side, name = diff.differences.currentItem().data(0x0100)
    assert diff.layers[1 if side == "b" else 0].selected == name


def test_a_diff_lists_fixed_sites_in_the_runs_order_every_time_and_says_breaks_from_sites(tmp_path):
    """The bundled run against itself without its break-reason records (so its breaks lose their
    places): the sites of A are fixed, listed in the order A's Summary lists them, the same in every
    process (a set's order changes with the hash seed), and the headline tells breaks from sites."""
    import os

    from fuzz_cases import split_records

    log = next((BUNDLED / "trace").glob("*.log"))
    records = [r for r in split_records(log.read_text()) if "dynamo_graph_break_reason" not in r.envelope[:200]]
    fixed = tmp_path / "no_breaks" / "dedicated_log_torch_trace_fixed.log"
    fixed.parent.mkdir()
    fixed.write_text("\n".join(record.render() for record in records) + "\n")
    outputs = []
    for seed in ("1", "2", "3"):
        done = run_cli_process("diff", BUNDLED, fixed, env={"PYTHONHASHSEED": seed}, cache=False)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    a, b = (json.loads(run_cli("summary", "--json", str(path)).stdout) for path in (BUNDLED, fixed))
    shown = [line.split("fixed:")[1].strip() for line in outputs[0].splitlines() if line.strip().startswith("fixed:")]
    assert shown == [f"{site['location']}  {site['reason']}" for site in a["break_sites"]]
    sites_b = len(b["break_sites"])
    assert (f"Graph breaks: {len(a['graph_breaks'])} → {len(b['graph_breaks'])} "
            f"(at {len(a['break_sites'])} → {sites_b} site{'s' if sites_b != 1 else ''})") in outputs[0]
