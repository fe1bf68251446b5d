"""The verdict's run-time figures against the profiler's own trace, and compile time against torch's
own count of compiled graphs: a break nests the resumed frame's region inside its caller's, so the
ceiling must come from the eager part of a call, not from the union of the region spans; and a
training step compiles its backward graphs too, lazily, outside the frame's compile."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from conftest import ROOT, SCENARIOS, capture, run_traced
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.html_report import render_report
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers.session_loader import open_path

BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


@pytest.fixture(scope="module")
def regions_session(tmp_path_factory, inductor_cache):
    """fidelity_regions.py captured with our launcher (timed and profiled)."""
    session = tmp_path_factory.mktemp("regions")
    process = capture(SCENARIOS / "fidelity_regions.py", session, inductor_cache)
    assert process.exit_code == 0, (session / "stderr.txt").read_text()[-3000:]
    return session


def _trace_events(session) -> list[dict]:
    trace = json.loads((session / "profile" / "compiled.json").read_text())
    return [event for event in trace["traceEvents"] if event.get("ph") == "X"]


def test_the_ceiling_of_a_broken_graph_is_its_eager_part_not_the_union_of_its_regions(regions_session):
    analysis = SessionAnalysis(open_path(regions_session))
    events = _trace_events(regions_session)
    steps = [event for event in events if event["name"].startswith("ProfilerStep#")]
    calls = sum(step["dur"] for step in steps)
    regions = [event for event in events if event["name"].startswith("Torch-Compiled Region")]
    graphs = sum(event["dur"] for event in events if event["name"].startswith("## Call CompiledFxGraph"))
    outer = max(regions, key=lambda event: event["dur"])
    nested = [event for event in regions if event is not outer
              and outer["ts"] <= event["ts"] < outer["ts"] + outer["dur"]]
    # what the profiler recorded: the resumed frame runs inside its caller's region, whose span
    # covers most of the call, while the compiled graphs take a small part of it
    assert nested and outer["dur"] / (calls / len(steps)) > 0.6
    assert graphs / calls < 0.3

    between = next(cost for cost in analysis.slowness.costs if cost.key == "eager_between")
    eager_share = between.share
    t_exec = analysis.verdict.value("t_execute")
    assert analysis.verdict.value("break_cost") == pytest.approx(t_exec * eager_share)
    # S_max from the two profiles (an eager call / the part of a compiled call outside its compiled
    # graphs), not through S; unstated when the profiles' own speedup and the timing's disagree
    eager_profile, compiled_profile = (analysis.session.results.profile[key] for key in ("eager", "compiled"))
    outside_graphs = (compiled_profile.wall_s * 1e6 - graphs) / compiled_profile.runs
    ceiling = analysis.verdict["amdahl"]
    if ceiling.value is not None:
        assert ceiling.value == pytest.approx(eager_profile.wall_s * 1e6 / eager_profile.runs / outside_graphs)
        assert ceiling.value < 1 / (1 - 0.6)  # the union of the regions would have claimed far more
    else:
        assert "inputs too noisy" in ceiling.source

    accounting, _ = analysis.regions
    by_id = {row.compile_id: row for row in accounting.regions}
    assert set(by_id) == {"0/0", "1/0"}
    assert by_id["0/0"].span_us - by_id["0/0"].own_us == pytest.approx(by_id["1/0"].span_us)
    assert sum(row.graph_us for row in accounting.regions) == pytest.approx(graphs / len(steps))
    eager_us = sum(row.eager_us for row in accounting.regions) + accounting.eager_outside_us
    assert eager_us / accounting.call_us == pytest.approx(eager_share, abs=0.1)  # the two readings of the profile agree

    text = render_text(summarize(analysis))
    assert re.search(r"S_max\s+(\d|— .*inputs too noisy)", text)
    assert "eager work between and inside compiled regions" in text
    assert re.search(r"^  0/0 +1× ", text, re.M) and re.search(r"^  1/0 +1× ", text, re.M)
    assert "Compiled regions at run time" in render_report(analysis)


def test_a_graph_without_breaks_states_no_ceiling_from_eager_gaps(captured_examples):
    for name, folder in captured_examples.items():
        analysis = SessionAnalysis(open_path(folder))
        if analysis.break_sites or any(unit.fail_type for unit in analysis.session.units):
            continue
        ceiling = analysis.verdict["amdahl"]
        assert ceiling.value is None and analysis.verdict.value("break_cost") is None, name
        assert "no graph break" in ceiling.source
        return
    pytest.fail("no bundled example compiles without a break")


def test_bundled_session_regions_add_up_to_the_call():
    """The bundled capture predates ProfilerStep spans in its trace: its calls come from results.json."""
    analysis = SessionAnalysis(open_path(BUNDLED))
    accounting, why = analysis.regions
    assert accounting is not None, why
    assert accounting.calls == analysis.session.results.profile["compiled"].runs
    own = sum(row.own_us for row in accounting.regions)  # every region's span once
    outside = accounting.overhead_outside_us + accounting.eager_outside_us
    assert own + outside == pytest.approx(accounting.call_us, rel=0.01)
    for row in accounting.regions:
        assert row.graph_us + row.overhead_us + row.eager_us == pytest.approx(row.own_us, abs=0.01)


def test_a_damaged_profile_trace_leaves_the_summary_whole(tmp_path):
    session = tmp_path / "session"
    shutil.copytree(BUNDLED, session)
    trace = session / "profile" / "compiled.json"
    trace.write_text(trace.read_text()[:5000])  # cut mid-event
    analysis = SessionAnalysis(open_path(session))
    accounting, why = analysis.regions
    assert accounting is None and "not readable" in why
    text = render_text(summarize(analysis))
    assert "profile trace not readable" in text
    whole = SessionAnalysis(open_path(BUNDLED)).verdict["amdahl"]  # the ceiling comes from the profile's table
    assert (analysis.verdict["amdahl"].value, analysis.verdict["amdahl"].source) == (whole.value, whole.source)


@pytest.fixture(scope="module")
def training_run(tmp_path_factory, inductor_cache):
    return run_traced(SCENARIOS / "fidelity_training.py", tmp_path_factory.mktemp("training"), inductor_cache)


def test_compile_time_of_a_training_step_includes_its_backward_graphs(training_run):
    session = open_path(training_run.trace_dir)
    analysis = SessionAnalysis(session)
    records = [json.loads(line[line.index("{"):]) for log in training_run.trace_dir.glob("*.log")
               for line in log.read_text().splitlines() if "compilation_metrics" in line[:200] and "{" in line]
    forward = [{**r["compilation_metrics"], "frame": r["frame_id"]} for r in records if "compilation_metrics" in r]
    backward = [r["bwd_compilation_metrics"] for r in records if "bwd_compilation_metrics" in r]
    assert backward, "the training step should compile backward graphs"
    # torch's own count: every graph Inductor compiled looked up the FX graph cache once
    inductor = training_run.counters["inductor"]
    compiled_graphs = inductor.get("fxgraph_cache_miss", 0) + inductor.get("fxgraph_cache_hit", 0)
    timing = analysis.compile_time
    assert len(session.units) + len(timing.backward_units) == compiled_graphs
    expected = (sum(m["entire_frame_compile_time_s"] for m in forward)
                + sum(m["backward_cumulative_compile_time_us"] for m in backward) / 1e6)
    assert analysis.verdict.value("t_compile") == pytest.approx(expected)
    assert timing.backward_s == pytest.approx(sum(m["backward_cumulative_compile_time_us"] for m in backward) / 1e6)
    # the frame's own figures stay the frame's: the lazy backward compile does not overwrite them
    for unit in session.units:
        own = next(m for m in forward if m["frame"] == unit.compile_id.frame)
        assert unit.metric("start_time") == own["start_time"]
    summary = summarize(analysis)
    assert all(unit["backward_graph"] and unit["backward_compile_time_s"] for unit in summary["units"])
    text = render_text(summary)
    assert text.count("(backward graph, compiled in") == len(session.units)
    assert "of which backward graphs:" in text


def test_a_training_steps_backward_stages_and_code_are_named_backward(training_run, qtbot, window):
    """Inductor compiles the backward graph through the same stages as the forward one: the stage list
    and the Code pane say which is which, not `post_grad #2` / `output code #2`."""
    from conftest import open_and_wait

    session = open_path(training_run.trace_dir)
    for unit in session.units:
        assert {"post_grad", "post_grad (backward)", "before_post_grad_graph (backward)"} <= set(unit.graphs)
        assert not any("#" in stage for stage in unit.graphs), list(unit.graphs)
        assert [code.code.role for code in unit.output_code] == ["forward", "backward"]
        assert unit.graphs["post_grad (backward)"].graph.nodes, "the backward graph is a graph of its own"
    open_and_wait(qtbot, window, training_run.trace_dir)
    graph, code = window.graph_view, window.code_view
    window.tabs.setCurrentWidget(graph)  # a hidden Graph tab takes the unit when it is opened
    stages = [graph.stage.itemText(index) for index in range(graph.stage.count())]
    assert "post_grad (backward)" in stages and not any("#" in stage for stage in stages), stages
    texts = [code.texts.itemText(index) for index in range(code.texts.count())]
    assert "output code #1 (forward)" in texts and "output code #2 (backward)" in texts, texts
