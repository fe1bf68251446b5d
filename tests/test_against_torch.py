"""The reader against torch's own account of the same run: TORCH_LOGS=graph_breaks,recompiles output,
torch._dynamo counters and compilation_metrics — not only against our own reading of the log."""

from __future__ import annotations

import re

from inspector.core.readers.session_loader import open_path

_LOG_BREAK = re.compile(r"\[(?P<id>\d+/\d+(?:_\d+)?)\] \[__graph_breaks\] Graph break.* "
                        r"in user code at (?P<where>\S+:\d+)")
_LOG_RECOMPILE = re.compile(r"\[(?P<id>\d+/\d+)\] \[__recompiles\] Recompiling function (?P<fn>\S+)")
_LOG_GUARD = re.compile(r"\[(?P<id>\d+/\d+)\] \[__recompiles\]\s+- (?P<guard>\d+/\d+: .+)$", re.M)


def _torch_breaks(run) -> set[tuple[str, str]]:
    return {(f"[{m['id']}]", m["where"]) for m in _LOG_BREAK.finditer(run.torch_logs)}


def test_every_break_torch_logged_is_found_and_located(breaks_run):
    session = open_path(breaks_run.trace_dir)
    ours = {(str(brk.compile_id.without_attempt()), f"{brk.location.file}:{brk.location.line}")
            for brk in session.breaks}
    expected = {(compile_id.split("_")[0] + ("]" if "_" in compile_id else ""), where)
                for compile_id, where in _torch_breaks(breaks_run)}
    assert expected, "the example should break the graph"
    assert ours == expected


def test_break_count_matches_torch_counters(breaks_run):
    """Data-dependent breaks land in counters['unimplemented'], explicit ones in ['graph_break']."""
    counters = breaks_run.counters
    torch_total = sum(counters.get("graph_break", {}).values()) + sum(counters.get("unimplemented", {}).values())
    session = open_path(breaks_run.trace_dir)
    assert len(session.breaks) == torch_total == 4
    kinds = sorted(brk.kind for brk in session.breaks)
    assert kinds == ["data_dependent", "data_dependent", "explicit", "explicit"]


def test_data_dependent_break_is_a_break_not_ok(breaks_run):
    """tlparse files a data-dependent break (no restart) under OK; we must not."""
    session = open_path(breaks_run.trace_dir)
    first = next(unit for unit in session.units if str(unit.compile_id) == "[0/0]")
    assert first.status.value == "graph_break"
    assert first.breaks[0].kind == "data_dependent"
    assert first.breaks[0].location.code == "if h.sum() > 0:  # data-dependent branch: Dynamo must break the graph here"
    assert not first.breaks[0].restarted


def test_recompiles_match_torch_logs(breaks_run):
    session = open_path(breaks_run.trace_dir)
    logged = {f"[{m['id']}]" for m in _LOG_RECOMPILE.finditer(breaks_run.torch_logs)}
    ours = {str(recompile.compile_id) for recompile in session.recompiles}
    assert logged and ours == logged
    logged_guards = {(f"[{m['id']}]", m["guard"].strip()) for m in _LOG_GUARD.finditer(breaks_run.torch_logs)}
    our_guards = {(str(r.compile_id), f"{g.against}: {g.guard}") for r in session.recompiles for g in r.failed_guards}
    assert our_guards == logged_guards
    plain = [g.plain for r in session.recompiles for g in r.failed_guards]
    assert any("changed size in dim 0: 8 → 16" in text for text in plain)


def test_unit_metrics_agree_with_parsed_graphs(breaks_run, dynamic_run):
    """graph_op_count / graph_node_count come from torch; the graph parser must count the same."""
    checked = 0
    for run in (breaks_run, dynamic_run):
        for unit in open_path(run.trace_dir).units:
            if "dynamo" not in unit.graphs or unit.metric("graph_op_count") is None:
                continue
            graph = unit.graphs["dynamo"].graph
            assert graph.unreadable == []
            assert len(graph.op_nodes) == unit.metric("graph_op_count"), unit.title
            assert len(graph.nodes) == unit.metric("graph_node_count"), unit.title
            checked += 1
    assert checked >= 4


def test_unit_count_matches_unique_graphs_counter(breaks_run, dynamic_run):
    for run in (breaks_run, dynamic_run):
        session = open_path(run.trace_dir)
        with_graph = [unit for unit in session.units if "dynamo" in unit.graphs]
        assert len(with_graph) == run.counters["stats"]["unique_graphs"]


def test_dynamic_compile_has_symbolic_shapes_and_no_recompile(dynamic_run):
    session = open_path(dynamic_run.trace_dir)
    assert session.recompiles == []
    assert session.breaks == []
    (unit,) = session.units
    placeholder = unit.graphs["dynamo"].graph.nodes
    assert any(dim.startswith("s") for node in placeholder if node.shape for dim in node.shape)
    assert any(artifact.name == "create_symbol" for artifact in unit.artifacts)


def test_kernels_match_provenance_and_compile_time_matches_spans(breaks_run):
    session = open_path(breaks_run.trace_dir)
    for unit in session.units:
        assert unit.provenance is not None
        for kernel in unit.kernels:
            assert kernel.source_origin == "provenance", kernel.name
            keys = [key for key in unit.provenance["cppCodeToPost"] if key.split(":")[0] == kernel.name]
            assert keys, kernel.name
        # the outermost "dynamo" span and compilation_metrics time the same compile
        dynamo = [span for span in unit.spans if span.name == "dynamo"]
        if dynamo and unit.metric("entire_frame_compile_time_s"):
            span_s = dynamo[0].duration_us() / 1e6
            assert abs(span_s - unit.metric("entire_frame_compile_time_s")) < 0.05 + 0.05 * span_s


def test_compile_debug_folder_opens_with_its_graph_folders(compile_debug_run):
    session = open_path(compile_debug_run.folder / "torch_compile_debug")
    assert session.kind == "compile_debug"
    (unit,) = session.units
    names = {artifact.name for artifact in unit.artifacts}
    assert {"ir_pre_fusion.txt", "ir_post_fusion.txt"} <= names
    assert "debug_readable" in unit.graphs and not unit.graphs["debug_readable"].graph.empty
    assert unit.kernels and all(kernel.source_origin == "provenance" for kernel in unit.kernels)


def test_own_stage_times_add_up_to_the_traced_compile_time(breaks_run):
    from inspector.core.analysis.figures import compile_time

    session = open_path(breaks_run.trace_dir)
    timing = compile_time(session)
    traced = sum(root.duration_us() for unit in session.units for root in unit.spans) / 1e6
    # within 0.1%: a child span timestamped a little past its parent's end (seen: 2 ms of a 17 s
    # compile) is its own time and no less its parent's; a stage counted twice would be seconds off
    assert abs(sum(timing.self_s.values()) - traced) < 1e-3 * max(1.0, traced) + 1e-3
    # on CPU the C++ compiler dominates a cold compile of a small model
    assert next(iter(timing.self_s)) in ("compile_file", "Scheduler.codegen", "async_compile.wait")
