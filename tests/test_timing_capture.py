"""The timing method on real captures: interleaved rounds and the machine recorded, a profile that
agrees with the measured call, and a capture made while every core is kept busy that never states
the opposite direction of a quiet one."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import EXAMPLES, capture

from inspector.core.analysis.profile_ops import profile_check
from inspector.core.analysis.comparison import FASTER, SLOWER
from inspector.core.analysis.speedup import estimate
from inspector.core.outputs.summary import summarize
from inspector.core.readers.session_loader import open_path

BURN = "while True: pass"


def test_capture_records_interleaved_rounds_and_the_machine(captured_examples):
    results = json.loads((captured_examples["small_resnet"] / "results.json").read_text())
    timing = results["timing"]
    assert len(timing["rounds"]) == results["runs"] == 5
    assert [row["order"] for row in timing["rounds"]][:2] == ["eager first", "compiled first"]
    assert all(row["eager_s"] > 0 and row["compiled_s"] > 0 and row["eager_calls"] >= 1 and row["compiled_calls"] >= 1
               for row in timing["rounds"])
    environment = timing["environment"]
    assert environment["cores"] == len(os.sched_getaffinity(0)) and environment["torch_threads"] == 1
    assert environment["thread_variables"]["OMP_NUM_THREADS"] == "1"
    assert environment["load_before"] is not None and environment["others_cpu_cores"] is not None
    profile = results["profile"]["compiled"]
    assert profile["runs"] >= 10 and profile["warmup_excluded"] == 1
    speedup = summarize(open_path(captured_examples["small_resnet"]))["speedup"]
    assert speedup["low"] <= speedup["value"] <= speedup["high"] and speedup["rounds"] == 5
    assert speedup["machine"]["note"]


@pytest.mark.parametrize("example", ["mlp_breaks", "small_resnet"])
def test_a_normal_capture_has_kernel_times_that_fit_in_the_call(captured_examples, example):
    check = profile_check(open_path(captured_examples[example]).results)
    assert check.consistent is True, check.note
    assert 0 < check.kernel_us_per_call <= 2 * check.slowest_call_us


def test_a_capture_on_a_machine_kept_busy_never_states_the_opposite_direction(captured_examples, tmp_path,
                                                                             inductor_cache):
    """The MLP example (compiled is slower there: graph-break overhead on a tiny model), captured
    again while burner processes keep every core busy."""
    quiet = estimate(open_path(captured_examples["mlp_breaks"]).results)
    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(os.cpu_count() or 1)]
    try:
        process = capture(EXAMPLES / "mlp_breaks.py", tmp_path / "loaded", inductor_cache)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    assert process.exit_code == 0
    loaded = estimate(open_path(tmp_path / "loaded").results)
    assert loaded.machine.busy, loaded.machine.note  # the burners were seen
    assert {quiet.state, loaded.state} != {FASTER, SLOWER}, (quiet.sentence(), loaded.sentence())
    summary = summarize(open_path(tmp_path / "loaded"))
    assert "Machine busy: timing unreliable" in summary["speedup"]["text"]
