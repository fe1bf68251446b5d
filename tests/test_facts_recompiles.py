"""Recompiles that fail the guards of several earlier graphs, against torch's own account of the same run
(TORCH_LOGS=recompiles_verbose lists every earlier graph's failed guard; TORCH_LOGS=dynamic the symbols
it made and the values it specialised): every failed guard is named, each recompile is put down to the
value that changed since the newest graph, and the advice fits what the user wrote (a ModuleList index,
a bool flag, a float made symbolic, a local of a resume function)."""

from __future__ import annotations

import re

import pytest

from conftest import SCENARIOS, run_traced
from inspector.core.analysis.recompile_groups import recompile_groups
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers.session_loader import open_path

_VERBOSE = re.compile(r"\[(?P<id>\d+/\d+)\] \[__recompiles_verbose\]\s+- (?P<against>\d+/\d+): "
                      r"(?P<guard>.+?)(?:\s+#.*)?$")
_SYMBOL = re.compile(r"create_symbol (?P<symbol>\S+) = (?P<value>\S+) for (?P<source>\S+)")
_REFINED = re.compile(r"\[(?P<id>\d+/\d+)\] set_replacement (?P<symbol>\S+) = (?P<value>\S+) "
                      r"\(range_refined_to_singleton\)")


@pytest.fixture(scope="module")
def run(tmp_path_factory, inductor_cache):
    return run_traced(SCENARIOS / "facts_training_guards.py", tmp_path_factory.mktemp("guards"), inductor_cache,
                      extra_env={"TORCH_LOGS": "graph_breaks,recompiles,recompiles_verbose,dynamic"})


def torch_failures(torch_logs: str) -> dict[str, list[tuple[str, str]]]:
    """Per recompile, every (against, guard) torch listed, in its order."""
    failures: dict[str, list[tuple[str, str]]] = {}
    for found in filter(None, map(_VERBOSE.search, torch_logs.splitlines())):
        failures.setdefault(found["id"], []).append((found["against"], found["guard"].strip()))
    return failures


def test_every_failed_guard_is_named_and_the_newest_graphs_failure_is_the_cause(run):
    failures = torch_failures(run.torch_logs)
    assert any(len(listed) > 1 for listed in failures.values())  # recompiles that failed several graphs' guards
    groups = recompile_groups(open_path(run.trace_dir))
    by_unit = {str(unit.compile_id): group for group in groups for unit in group.units}
    assert set(by_unit) == {f"[{compile_id}]" for compile_id in failures}
    for compile_id, listed in failures.items():
        group = by_unit[f"[{compile_id}]"]
        [line] = [line for line in group.failed if line.startswith(f"[{compile_id}] ")]
        for against, guard in listed:  # every guard torch listed, by the graph it failed against
            assert f"against [{against}]: {guard}" in line, (compile_id, against, guard, line)
        newest_against, newest_guard = max(listed, key=lambda failure: int(failure[0].split("/")[1]))
        assert newest_guard.startswith(group.subject + " ") or group.subject in newest_guard
        if len(listed) > 1:
            assert "torch names only the first failed guard of each earlier graph" in group.diagnosis
    text = render_text(summarize(SessionAnalysis(open_path(run.trace_dir))))
    assert all(f"    guards failed: {line}" in text for group in groups for line in group.failed)


def test_a_float_made_symbolic_shows_the_value_it_changed_to(run):
    symbols = {m["source"]: (m["symbol"], m["value"]) for m in map(_SYMBOL.search, run.torch_logs.splitlines()) if m}
    symbol, new = symbols["L['self'].scale"]
    [scale] = [group for group in recompile_groups(open_path(run.trace_dir)) if group.subject == "self.scale"]
    assert scale.history == ["1.0", new] == ["1.0", "0.5"]
    assert f"symbolic ({symbol})" in scale.diagnosis and "later values reuse that graph" in scale.diagnosis
    assert "Python ints" not in scale.fix


def test_a_module_list_index_is_said_to_stay_specialised_and_gets_no_tensor_advice(run):
    refined = {m["symbol"] for m in map(_REFINED.search, run.torch_logs.splitlines()) if m}
    symbols = {m["source"]: m["symbol"] for m in map(_SYMBOL.search, run.torch_logs.splitlines()) if m}
    assert symbols["L['which']"] in refined  # torch made `which` symbolic, then a constant again
    [which] = [group for group in recompile_groups(open_path(run.trace_dir)) if group.subject == "which"]
    assert "later values reuse that graph" not in which.diagnosis
    assert "made it a constant again" in which.diagnosis
    assert "`x = self.heads[which](x) * self.scale`" in which.diagnosis
    assert "Pass `which` as a tensor" not in which.fix and "cannot work for an index into a ModuleList" in which.fix


def test_a_bool_flag_gets_no_int_advice(run):
    assert any(guard.startswith("self.use_relu == True") for listed in torch_failures(run.torch_logs).values()
               for _, guard in listed)
    [flag] = [group for group in recompile_groups(open_path(run.trace_dir)) if group.subject == "self.use_relu"]
    assert flag.history == ["True", "False"]
    assert "It is a bool" in flag.diagnosis
    assert "Python ints" not in flag.fix and "automatic_dynamic_shapes" not in flag.fix
    assert "two at most" in flag.diagnosis


def test_a_local_of_a_resume_function_gets_no_mark_dynamic_on_it(run):
    listed = torch_failures(run.torch_logs)
    assert any(guard.startswith("tensor 'logits' size mismatch at index 1") for failures in listed.values()
               for _, guard in failures)
    [logits] = [group for group in recompile_groups(open_path(run.trace_dir)) if group.subject == "logits"]
    assert logits.function.startswith("torch_dynamo_resume_in_score_at_")
    assert "mark_dynamic(logits" not in logits.fix and "No call of yours can mark `logits`" in logits.fix
    assert "local of score()" in logits.diagnosis
