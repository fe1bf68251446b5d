"""torch.cond and torch.while_loop, compiled in a model and called eagerly, against torch's own record
of the same run: the generated code (every kernel Inductor wrote, its subgraphs' included) and
TORCH_LOGS=recompiles (the eager calls' compiles are of torch's own wrappers, `_cond_op_wrapper`)."""

from __future__ import annotations

import re

import pytest

from conftest import SCENARIOS, run_traced
from inspector.core.analysis.recompile_groups import recompile_groups
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers.session_loader import open_path

_RECOMPILING = re.compile(r"\[(?P<id>\d+/\d+)\] \[__recompiles(?:_verbose)?\] "
                          r"Recompiling function (?P<fn>\S+) in (?P<file>\S+):")


@pytest.fixture(scope="module")
def run(tmp_path_factory, inductor_cache):
    return run_traced(SCENARIOS / "facts_control_flow.py", tmp_path_factory.mktemp("control_flow"), inductor_cache,
                      extra_env={"TORCH_LOGS": "graph_breaks,recompiles,dynamic"})


def launches_in(code: str) -> int:
    """What Inductor wrote: one kernel per `async_compile` definition, one per extern kernel call."""
    defined = re.findall(r"^\w+ = async_compile\.\w+\(", code, re.M)
    extern = re.findall(r"^\s+extern_kernels\.\w+\(", code, re.M)
    return len(defined) + len(extern)


def test_kernels_of_cond_and_while_loop_subgraphs_are_counted(run):
    session = open_path(run.trace_dir)
    [model] = [unit for unit in session.units if unit.function == "forward"]
    [code] = model.output_code
    assert re.search(r"^def true_graph_0\(args\):", code.text, re.M)  # the subgraphs Inductor wrote
    assert re.search(r"^def true_graph_0\(args\):(?:\n    .*)*\n    extern_kernels\.addmm\(", code.text, re.M)
    expected = launches_in(code.text)
    assert len(model.kernels) == expected
    summary = summarize(SessionAnalysis(session))
    [row] = [unit for unit in summary["units"] if unit["function"] == "forward"]
    assert row["kernels"] == expected
    assert any(kernel.name == "extern_kernels.addmm" or kernel.kind == "extern" for kernel in model.kernels)


def test_compiles_torch_started_for_eager_calls_are_marked_and_get_no_dynamic_true_advice(run):
    logged = {m["id"]: (m["fn"], m["file"]) for m in map(_RECOMPILING.search, run.torch_logs.splitlines()) if m}
    assert ("_cond_op_wrapper", ) == tuple({fn for fn, _ in logged.values()})
    assert all("/torch/_higher_order_ops/" in file for _, file in logged.values())
    session = open_path(run.trace_dir)
    summary = summarize(SessionAnalysis(session))
    triggered = {unit["compile_id"]: unit.get("triggered_by") for unit in summary["units"]}
    model = next(unit["compile_id"] for unit in summary["units"] if unit["function"] == "forward")
    assert triggered.pop(model) is None
    assert set(triggered.values()) == {"torch.cond", "torch.while_loop"}
    assert {f"[{compile_id}]" for compile_id in logged} <= {cid for cid, op in triggered.items() if op == "torch.cond"}
    text = render_text(summary)
    assert "[compiled by torch for an eager torch.cond call]" in text
    [group] = recompile_groups(session)
    assert "compile with `torch.compile(..., dynamic=True)`" not in group.fix
    assert "eager torch.cond call" in group.diagnosis and "mark_dynamic(tensor, 0)" in group.fix
