"""A profiled graph call whose code the log holds is not called code the log does not hold: checked
against torch's own record of the same run, the profiler's `## Call CompiledFxGraph <key> ##` events
and the log's FX graph cache key of that graph."""

from __future__ import annotations

import json
import re

import pytest

from conftest import SCENARIOS, run_traced
from inspector import cli
from inspector.core.outputs.gpu_summary import SOURCE_TIME_KEY



@pytest.fixture(scope="module")
def run(tmp_path_factory, inductor_cache):
    return run_traced(SCENARIOS / "facts_profiled_cpp_only.py", tmp_path_factory.mktemp("cpp_only"), inductor_cache)


def test_calls_of_code_the_log_holds_are_not_called_unknown(run, capsys):
    profile = json.loads((run.folder / "profile.pt.trace.json").read_text())
    calls = [event["name"] for event in profile["traceEvents"]
             if event.get("name", "").startswith("## Call CompiledFxGraph")]
    keys = {name.removeprefix("## Call CompiledFxGraph").strip(" #") for name in calls}
    [log] = run.trace_dir.glob("*.log")
    assert calls and all(f'"key": "{key}"' in log.read_text() for key in keys)  # torch logged each call's code
    assert cli.main(["summary", str(log), "--no-cache"]) == 0
    text = capsys.readouterr().out
    assert "of code the log does not hold" not in text
    assert (f"{len(calls)} call(s) of code the log holds (its cache key) with none of its launches in the profile"
            in text)
    assert "cpp.enable_kernel_profile = True" in text
    assert cli.main(["summary", str(log), "--json", "--no-cache"]) == 0
    section = json.loads(capsys.readouterr().out)[SOURCE_TIME_KEY]
    assert (section["unmatched_graph_calls"], section["unseen_launch_calls"]) == (0, len(calls))
    assert re.search(r"cpp_fused_\w+ = async_compile", log.read_text())  # the C++ kernel the profile cannot name
