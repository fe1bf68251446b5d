"""Graph-break records against torch's own account of real compiles (issue #31): restarts that are no
break, frame skips kept apart from breaks, breaks inside the standard library located at the user's
line, backend failures with their root cause, units torch wrote without a name, and the registry's
words for each break type. torch's counters and TORCH_LOGS=graph_breaks are the oracle."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import SCENARIOS, capture, run_traced
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers.session_loader import open_path

pytestmark = pytest.mark.slow

_LOG_PREFIX = re.compile(r"^\S+ \S+ \d+ \S+\] \[(?P<id>[^\]]+)\] \[__graph_breaks\] ?(?P<text>.*)$")
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<fn>\S+)$')
GENERATOR_SKIP = "Attempt to trace generator"
RECOMPILE_LIMIT = "Dynamo recompile limit exceeded"


def _traced(name: str, tmp_path_factory, inductor_cache):
    return run_traced(SCENARIOS / f"fidelity_breaks_{name}.py", tmp_path_factory.mktemp(name), inductor_cache)


@pytest.fixture(scope="module")
def library_run(tmp_path_factory, inductor_cache):
    return _traced("library", tmp_path_factory, inductor_cache)


@pytest.fixture(scope="module")
def data_run(tmp_path_factory, inductor_cache):
    return _traced("data", tmp_path_factory, inductor_cache)


@pytest.fixture(scope="module")
def restart_run(tmp_path_factory, inductor_cache):
    return _traced("restart", tmp_path_factory, inductor_cache)


@pytest.fixture(scope="module")
def fallbacks_run(tmp_path_factory, inductor_cache):
    return _traced("fallbacks", tmp_path_factory, inductor_cache)


@pytest.fixture(scope="module")
def library_capture(tmp_path_factory, inductor_cache) -> Path:
    """The library scenario through our own capture, which records torch's counters beside the log."""
    session = tmp_path_factory.mktemp("library_capture")
    process = capture(SCENARIOS / "fidelity_breaks_library.py", session, inductor_cache, backend="eager")
    assert process.exit_code == 0, (session / "stderr.txt").read_text()[-3000:]
    return session


def torch_logged_breaks(torch_logs: str) -> list[dict]:
    """Each break TORCH_LOGS=graph_breaks printed: where torch says it is, its explanation, and the
    frames of its user code traceback."""
    breaks: list[dict] = []
    in_traceback = False
    for raw in torch_logs.splitlines():
        match = _LOG_PREFIX.match(raw)
        if not match:
            continue
        text = match["text"]
        where = re.match(r"Graph break.* in user code at (\S+):(\d+)$", text)
        if where:
            breaks.append({"id": match["id"], "file": where[1], "line": int(where[2]), "explanation": "", "frames": []})
            in_traceback = False
        elif breaks and text.strip().startswith("Explanation:") and not breaks[-1]["explanation"]:
            breaks[-1]["explanation"] = text.strip().removeprefix("Explanation:").strip()
        elif breaks and text.startswith("User code traceback:"):
            in_traceback = True
        elif breaks and in_traceback and (frame := _FRAME.match(text)):
            breaks[-1]["frames"].append((frame["file"], int(frame["line"]), frame["fn"]))
    return breaks


def counter_entries(counters: dict) -> dict[str, int]:
    """torch's graph_break and unimplemented counters by break type (the first line of each key)."""
    totals: dict[str, int] = {}
    for group in ("graph_break", "unimplemented"):
        for message, times in counters.get(group, {}).items():
            kind = message.split("\n", 1)[0].strip()
            totals[kind] = totals.get(kind, 0) + times
    return totals


def summary_of(path: Path) -> tuple[dict, str]:
    summary = json.loads(json.dumps(summarize(open_path(path))))  # as --json writes it
    return summary, render_text(summary)


@pytest.mark.parametrize("scenario", ["library", "data", "restart", "fallbacks"])
def test_breaks_and_sites_equal_torchs_and_skips_stay_apart(scenario, request):
    run = request.getfixturevalue(f"{scenario}_run")
    logged = torch_logged_breaks(run.torch_logs)
    entries = counter_entries(run.counters)
    skips = {kind: times for kind, times in entries.items() if kind in (GENERATOR_SKIP, RECOMPILE_LIMIT)}
    summary, _ = summary_of(run.trace_dir)
    assert len(summary["graph_breaks"]) == len(logged) == sum(entries.values()) - sum(skips.values())
    assert len(summary["break_sites"]) == len({(b["file"], b["line"]) for b in logged})
    assert len(summary.get("frame_skips", [])) == skips.get(RECOMPILE_LIMIT, 0)  # a generator skip leaves no record


def test_a_break_in_the_standard_library_is_located_at_the_users_line(library_run):
    logged = torch_logged_breaks(library_run.torch_logs)
    script = str(SCENARIOS / "fidelity_breaks_library.py")
    assert {Path(b["file"]).name for b in logged} == {"copy.py", "inspect.py"}  # torch names the library line
    summary, text = summary_of(library_run.trace_dir)
    ours = {(b["file"], b["line"], b["function"], tuple(b["via"])) for b in summary["graph_breaks"]}
    expected = set()
    for brk in logged:
        at = max(index for index, frame in enumerate(brk["frames"]) if frame[0] == script)  # innermost script line
        user, via = brk["frames"][at], brk["frames"][at + 1:]
        assert via[-1][:2] == (brk["file"], brk["line"])
        expected.add((*user, tuple(f"{file}:{line} in {fn}" for file, line, fn in via)))
        shown = " → ".join(f"{Path(file).name}:{line}" for file, line, _ in via)
        assert f"{user[0]}:{user[1]} in {user[2]} (via {shown})" in text
    assert ours == expected
    assert all(b["code"] for b in summary["graph_breaks"])  # the user's line, as written


def test_generator_skips_are_not_counted_as_breaks_against_torchs_counters(library_capture):
    counters = json.loads((library_capture / "results.json").read_text())["counters"]
    entries = counter_entries(counters)
    assert entries.get(GENERATOR_SKIP), "inspect.stack() should make Dynamo skip generator frames"
    summary, text = summary_of(library_capture)
    run = summary["run"]
    assert (run["torch_counted_breaks"] == len(summary["graph_breaks"])
            == sum(entries.values()) - entries[GENERATOR_SKIP])
    assert run["breaks_agree_with_torch"] is True and "torch's counters saw" not in text
    # the resumed frame is guarded on the stack's depth, which differs between the capture's calls: it may
    # recompile up to the limit, one more frame skip
    skipped = {kind: times for kind, times in entries.items() if kind in (GENERATOR_SKIP, RECOMPILE_LIMIT)}
    assert run["torch_counted_frame_skips"] == skipped
    assert len(summary.get("frame_skips", [])) == skipped.get(RECOMPILE_LIMIT, 0)
    assert f"frames skipped per torch's counters (not breaks): {GENERATOR_SKIP} ×{entries[GENERATOR_SKIP]}" in text


def test_a_tensorify_restart_is_an_attempt_not_a_break(restart_run):
    assert not counter_entries(restart_run.counters) and not torch_logged_breaks(restart_run.torch_logs)
    session = open_path(restart_run.trace_dir)
    restarted = [unit for unit in session.units if "TensorifyScalarRestartAnalysis" in " ".join(unit.restart_reasons)]
    assert restarted, "torch should have restarted analysis to specialise the float"
    summary, text = summary_of(restart_run.trace_dir)
    assert summary["graph_breaks"] == [] and summary["break_sites"] == []
    units = {unit["compile_id"]: unit for unit in summary["units"]}
    for unit in restarted:
        assert units[str(unit.compile_id)]["status"] == "restart" and units[str(unit.compile_id)]["attempts"] == 2
        assert f"not a break: {unit.compile_id} attend restarted analysis (TensorifyScalarRestartAnalysis)" in text
    assert [r["compile_id"] for r in summary["analysis_restarts"]] == [str(unit.compile_id) for unit in restarted]


def test_fallbacks_keep_the_root_cause_and_every_unit_is_named(fallbacks_run):
    session = open_path(fallbacks_run.trace_dir)
    failed = {unit.function: unit for unit in session.units if unit.fail_type}
    backend = failed["wave"]
    cause = backend.fail_reason.split("\n")[1].strip()  # torch's line after "backend='broken_backend' raised:"
    assert backend.fail_type == "BackendCompilerFailed" and "cannot lower aten.sin" in cause
    summary, text = summary_of(fallbacks_run.trace_dir)
    assert any(warning.endswith(f"raised: {cause}") for warning in summary["warnings"])
    assert f"raised: {cause}" in text
    limited = failed["scaled"]  # torch wrote neither dynamo_start nor co_name for the unit at the limit
    assert (not limited.metrics.get("co_name") and not limited.started
            and limited.fail_reason.startswith(RECOMPILE_LIMIT))
    named = next(unit for unit in session.units if unit.compile_id.frame == limited.compile_id.frame and unit.started)
    assert limited.function == named.function == named.metrics["co_name"] and limited.location == named.location
    assert all(unit["function"] and unit["location"] for unit in summary["units"])
    assert [skip["compile_id"] for skip in summary["frame_skips"]] == [str(limited.compile_id)]
    assert f"frame skipped (runs eagerly, not a break): {limited.compile_id} scaled: {RECOMPILE_LIMIT}" in text
    assert counter_entries(fallbacks_run.counters) == {RECOMPILE_LIMIT: 1}


def test_data_dependent_types_share_a_kind_and_each_type_has_its_explanation(data_run, library_run):
    summary, _ = summary_of(data_run.trace_dir)
    kinds = {site["type"]["gb_id"]: next(s["kind"] for s in summary["break_sites"] if s["location"] == site["location"])
             for site in summary["break_types"]["sites"]}
    assert kinds == {"GB0036": "data_dependent", "GB0033": "data_dependent"}
    summary, text = summary_of(library_run.trace_dir)
    typed = {site["type"]["gb_id"]: site["type"] for site in summary["break_types"]["sites"]}
    assert "GB0007" in typed  # the registry builds GB0007's explanation at run time: torch's own words show
    logged = {brk["explanation"] for brk in torch_logged_breaks(library_run.torch_logs)}
    for gb_type in typed.values():
        assert gb_type["explanation"] and any(explanation in gb_type["explanation"] for explanation in logged)
        assert gb_type["explanation"][:100] in text
