"""S_max, the Amdahl ceiling, divides by all of a compiled call that a faster compiled graph cannot
shorten: the eager work the breaks leave *and* the guard checks and torch's wrappers around each
graph (issue 46's demanding user, second walk). Dividing by the eager work alone overstated the
ceiling (a 2-layer GPT-2 with two breaks: 19.6× where the call outside its graphs allows 8.9×).
Checked against the raw profiler trace of the bundled capture and its results.json, nothing of ours."""

from __future__ import annotations

import json
import re

from conftest import ROOT
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers.session_loader import open_path

BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def _raw_call_parts() -> tuple[float, float, float]:
    """µs per profiled call: an eager call, a compiled call, and the compiled graphs inside it (the
    `## Call CompiledFxGraph` spans of the trace), from the capture's own files."""
    results = json.loads((BUNDLED / "results.json").read_text())
    eager, compiled = results["profile"]["eager"], results["profile"]["compiled"]
    events = json.loads((BUNDLED / compiled["trace"]).read_text())["traceEvents"]
    graphs = sum(event["dur"] for event in events
                 if event.get("ph") == "X" and event["name"].startswith("## Call CompiledFxGraph"))
    return (eager["wall_s"] * 1e6 / eager["runs"], compiled["wall_s"] * 1e6 / compiled["runs"],
            graphs / compiled["runs"])


def test_the_ceiling_divides_by_everything_outside_the_compiled_graphs():
    eager_us, call_us, graphs_us = _raw_call_parts()
    outside_us = call_us - graphs_us  # guard checks, wrappers and eager work: what faster graphs leave
    analysis = SessionAnalysis(open_path(BUNDLED))
    ceiling = analysis.verdict["amdahl"]
    stated = re.search(r"a profiled eager call \((\d+) µs\) / the part of a profiled compiled call outside its "
                       r"compiled graphs \((\d+) µs, (\d+)% of it", ceiling.source)
    assert stated, ceiling.source
    assert int(stated[1]) == round(eager_us) and int(stated[2]) == round(outside_us)
    assert int(stated[3]) == round(100 * outside_us / call_us)
    eager_work = next(cost.us_per_call for cost in analysis.slowness.costs if cost.key == "eager_between")
    assert eager_work < outside_us  # the guard checks and wrappers are part of what stays
    if ceiling.value is not None:
        assert ceiling.value == eager_us / outside_us
    else:  # this capture's profiles disagree with its timing: unstated, with its inputs named
        assert "inputs too noisy" in ceiling.source
    text = render_text(summarize(analysis))
    assert "T_gap: the part of a compiled call outside its compiled graphs" in text
