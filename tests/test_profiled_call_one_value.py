"""One profiled compiled call, one length (issue 46's demanding user, second walk): "where a compiled
call's time goes" divided the capture's timed profiled call (555.5 µs on a 2-layer GPT-2) while the
compiled regions' table divided the profiler's ProfilerStep spans (565.6 µs), which also hold the
profiler's own work between calls — and counted that work as the model's eager work outside every
region (32.9 µs where the call had 22.8). Real captures of the bundled examples; the raw trace and
results.json are read with nothing of ours."""

from __future__ import annotations

import json

import pytest

from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.readers.session_loader import open_path


def test_the_regions_table_and_the_time_split_state_the_same_call(captured_examples):
    checked = 0
    for name, folder in captured_examples.items():
        results = json.loads((folder / "results.json").read_text())
        compiled = results.get("profile", {}).get("compiled")
        if not compiled or not compiled.get("trace"):
            continue
        events = json.loads((folder / compiled["trace"]).read_text())["traceEvents"]
        steps = [event for event in events if event.get("ph") == "X" and event["name"].startswith("ProfilerStep#")]
        if len(steps) != compiled["runs"]:
            continue
        analysis = SessionAnalysis(open_path(folder))
        accounting, why = analysis.regions
        assert accounting is not None, f"{name}: {why}"
        timed_us = compiled["wall_s"] * 1e6 / compiled["runs"]
        assert sum(step["dur"] for step in steps) / len(steps) > timed_us, f"{name}: a step holds the call"
        assert accounting.calls == len(steps)
        assert accounting.call_us == pytest.approx(timed_us) == analysis.slowness.call_us, name
        own = sum(row.own_us for row in accounting.regions)  # every region's span once
        assert own + accounting.overhead_outside_us + accounting.eager_outside_us == pytest.approx(timed_us), name
        checked += 1
    assert checked, "no bundled example was profiled with ProfilerStep spans"
