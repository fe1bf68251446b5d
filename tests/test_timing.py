"""The speedup verdict and the profile check on saved sessions: the bundled capture (an older one,
without timing rounds) and copies of it whose results.json is edited to what a capture records on a
quiet machine, a busy one, or with a profile that disagrees with the measured call."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import open_and_wait
from cli_runner import run_cli

from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.analysis.profile_ops import profile_check
from inspector.core.analysis.run_diff import check_run, diff_runs
from inspector.core.analysis.comparison import FASTER, INCONCLUSIVE, SLOWER, UNMEASURED, bootstrap_interval
from inspector.core.analysis.speedup import estimate
from inspector.core.model.run_results import RunResults
from inspector.core.outputs.html_report import render_report
from inspector.core.outputs.summary import SCHEMA_VERSION, at_a_glance, summarize
from inspector.core.outputs.summary_text import render_text
from inspector.core.readers.session_loader import open_path

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
QUIET = {"cores": 2, "torch_threads": 1, "others_cpu_cores": 0.05, "load_before": 0.3, "load_during": 1.0}
BUSY = {"cores": 2, "torch_threads": 1, "others_cpu_cores": 1.9, "load_before": 3.1, "load_during": 4.2}


def rounds(pairs: list[tuple[float, float]]) -> list[dict]:
    return [{"eager_s": e, "compiled_s": c, "eager_calls": 100, "compiled_calls": 100} for e, c in pairs]


def timed(pairs, environment) -> RunResults:
    """The results of a capture that timed these (eager, compiled) rounds."""
    return RunResults.from_state(timed_state(pairs, environment))


def timed_state(pairs, environment) -> dict:
    """results.json fields of a capture that timed these (eager, compiled) rounds."""
    eager, compiled = sorted(e for e, _ in pairs), sorted(c for _, c in pairs)
    return {"eager": {"n": len(pairs), "median_s": eager[len(eager) // 2], "min_s": eager[0], "max_s": eager[-1]},
            "compiled": {"n": len(pairs), "median_s": compiled[len(compiled) // 2], "min_s": compiled[0],
                         "max_s": compiled[-1]},
            "timing": {"method": "interleaved rounds", "round_budget_s": 0.05, "rounds": rounds(pairs),
                       "environment": environment}}


CLEARLY_FASTER = [(2e-3 * (1 + 0.03 * (i % 3)), 1e-3 * (1 + 0.02 * (i % 4))) for i in range(12)]
NOISE_AROUND_1 = [(1e-3 * (1 + 0.2 * ((i * 7) % 5 - 2) / 2), 1e-3 * (1 + 0.2 * ((i * 3) % 5 - 2) / 2))
                  for i in range(12)]
SLIGHTLY_FASTER = [(1.1e-3 * (1 + 0.01 * (i % 3)), 1e-3 * (1 + 0.01 * (i % 2))) for i in range(12)]


def edited_copy(tmp_path: Path, **fields) -> Path:
    folder = tmp_path / "session"
    shutil.copytree(BUNDLED, folder)
    results = json.loads((folder / "results.json").read_text())
    results.update(fields)
    (folder / "results.json").write_text(json.dumps(results))
    return folder


def test_interval_and_three_states():
    faster = estimate(timed(CLEARLY_FASTER, QUIET))
    assert (faster.state == FASTER and faster.low > 1.5 and faster.high < 2.5
            and faster.low <= faster.value <= faster.high)
    noisy = estimate(timed(NOISE_AROUND_1, QUIET))
    assert noisy.state == INCONCLUSIVE and noisy.low < 1 < noisy.high and "spans 1" in noisy.reason
    slower = estimate(timed([(c, e) for e, c in CLEARLY_FASTER], QUIET))
    assert slower.state == SLOWER and slower.high < 1
    assert bootstrap_interval(CLEARLY_FASTER) == bootstrap_interval(CLEARLY_FASTER)  # seeded: reproducible


WIDELY_SLOWER = [(1e-3 * (1 + 0.01 * (i % 3)), c) for i, c in enumerate(
    (2.5e-3, 24e-3, 3e-3, 22e-3, 2.8e-3, 25e-3, 4e-3, 23e-3, 2.6e-3, 21e-3, 3.5e-3, 24.5e-3))]


def test_a_wide_interval_wholly_below_1_states_the_direction_not_the_size(tmp_path):
    """Issue 29: 'INCONCLUSIVE' although the whole interval lay below 1 — the direction is certain."""
    slower = estimate(timed(WIDELY_SLOWER, QUIET))
    assert slower.state == SLOWER and not slower.size_certain and slower.high < 1 and slower.high / slower.low > 3
    assert "the direction is certain, the size is not" in slower.sentence()
    low, high = 1 / slower.high, 1 / slower.low
    assert slower.range_text() == f"{low:.2g}–{high:.2g}×"
    folder = edited_copy(tmp_path, **timed_state(WIDELY_SLOWER, QUIET))
    analysis = SessionAnalysis(open_path(folder))
    headline = at_a_glance(analysis).headline
    assert f"Compiled is {low:.2g}–{high:.2g}× SLOWER than eager" in headline
    assert "INCONCLUSIVE" not in headline
    (problem,) = [problem for problem in analysis.issues if problem.kind.value == "slower"]
    assert f"{low:.2g}–{high:.2g}× slower" in problem.title
    summary = summarize(analysis)
    assert summary["speedup"]["state"] == "slower" and summary["speedup"]["size_certain"] is False


def test_a_busy_machine_is_named_beside_what_the_interval_supports():
    """Issue 46: a busy machine no longer turns an interval wholly on one side of 1 into
    'INCONCLUSIVE, the difference is small': the interleaved rounds carry the load's noise, the
    interval says what it supports, and the machine's state is said beside it."""
    quiet = estimate(timed(SLIGHTLY_FASTER, QUIET))
    busy = estimate(timed(SLIGHTLY_FASTER, BUSY))
    assert quiet.state == FASTER and not quiet.machine.busy
    assert busy.state == FASTER and busy.machine.busy and busy.low > 1
    assert "machine busy: timing unreliable" in busy.machine.note and "1.9 of 2 cores" in busy.machine.note
    assert "load average 3.10 before, 4.20 after" in busy.machine.note
    assert "Machine busy: timing unreliable" in busy.sentence()
    # a large difference is still stated on a busy machine, with the warning beside it
    clear = estimate(timed(CLEARLY_FASTER, BUSY))
    assert clear.state == FASTER and "Machine busy" in clear.sentence()


def test_too_few_rounds_or_nonsense_times_state_no_direction():
    assert estimate(timed(CLEARLY_FASTER[:3], QUIET)).state == INCONCLUSIVE
    negative = timed_state(CLEARLY_FASTER, QUIET)
    negative["timing"]["rounds"][2]["compiled_s"] = -1e-3
    negative = RunResults.from_state(negative)
    assert estimate(negative).state == UNMEASURED and estimate(negative).value is None


def test_an_older_session_opens_with_no_interval(tmp_path):
    summary = summarize(open_path(BUNDLED))
    assert summary["schema_version"] == SCHEMA_VERSION == 5
    speedup = summary["speedup"]
    assert speedup["value"] == pytest.approx(summary["measurements"]["eager"]["median_s"]
                                             / summary["measurements"]["compiled"]["median_s"])
    assert speedup["low"] is None and "no interval: older capture" in speedup["reason"]
    assert "no interval: older capture" in render_text(summary)
    figures = {figure["key"]: figure for figure in summary["verdict"]}
    assert "no interval: older capture" in figures["speedup"]["source"]
    assert "No confidence interval: an older capture timed eager and compiled in separate blocks" in render_report(
        open_path(BUNDLED))


def test_inconclusive_speedup_shows_no_break_even_anywhere(tmp_path):
    folder = edited_copy(tmp_path, **timed_state(NOISE_AROUND_1, BUSY))
    summary = summarize(open_path(folder))
    figures = {figure["key"]: figure for figure in summary["verdict"]}
    assert figures["break_even"]["value"] is None and "inconclusive" in figures["break_even"]["source"]
    assert summary["speedup"]["state"] == "inconclusive"
    text = render_text(summary)
    assert "Speedup INCONCLUSIVE" in text and "pays for itself" not in text
    html = render_report(open_path(folder))
    assert "Speedup INCONCLUSIVE" in html and "Machine busy: timing unreliable" in html
    diff = diff_runs(open_path(folder), open_path(BUNDLED))["steady_state"]
    assert diff["verdict_a"]["state"] == "inconclusive" and diff["verdict_b"]["low"] is None


def test_check_min_speedup_says_inconclusive_instead_of_passing_on_noise(tmp_path):
    folder = edited_copy(tmp_path, **timed_state(NOISE_AROUND_1, QUIET))
    (check,) = [c for c in check_run(open_path(folder), min_speedup=1.0) if c.name == "min-speedup"]
    assert check.passed is None and "inconclusive" in check.reason
    done = run_cli("check", str(folder), "--min-speedup", "1.0")
    assert done.returncode == 4 and "INCONCLUSIVE min-speedup" in done.stdout
    # a conclusive run passes or fails on its interval
    fast = edited_copy(tmp_path / "fast", **timed_state(CLEARLY_FASTER, QUIET))
    checks = {c.name: c for c in check_run(open_path(fast), min_speedup=1.2)}
    assert checks["min-speedup"].passed is True
    assert {c.name: c for c in check_run(open_path(fast), min_speedup=3.0)}["min-speedup"].passed is False
    # the threshold inside the interval: the measurement cannot tell
    assert {c.name: c for c in check_run(open_path(fast), min_speedup=2.0)}["min-speedup"].passed is None


def test_check_refuses_nonsense_thresholds():
    for args in (("--min-speedup", "-1"), ("--tolerance", "-0.1"), ("--max-compile-time", "-5"),
                 ("--max-breaks", "-1")):
        done = run_cli("check", str(BUNDLED), *args)
        assert done.returncode == 2 and "is not" in done.stderr and "Traceback" not in done.stderr
    with pytest.raises(ValueError):
        check_run(open_path(BUNDLED), tolerance=-0.5)


def test_profile_check_is_quiet_on_the_bundled_capture_and_fires_on_an_inconsistent_profile(tmp_path):
    normal = open_path(BUNDLED)
    assert profile_check(normal.results).consistent is True
    assert not SessionAnalysis(normal).kernel_time.suspect
    results = json.loads((BUNDLED / "results.json").read_text())
    for row in results["profile"]["compiled"]["ops"]:  # what a profile of a loaded machine looked like
        row["self_cpu_us"] *= 60
    folder = edited_copy(tmp_path, profile=results["profile"])
    session = open_path(folder)
    check = profile_check(session.results)
    assert check.consistent is False and check.kernel_us_per_call > 2 * check.slowest_call_us
    assert "PROFILE INCONSISTENT" in check.note
    table = SessionAnalysis(session).kernel_time
    assert table.kernels and "PROFILE INCONSISTENT" in table.suspect
    summary = summarize(session)
    assert summary["run"]["profile_check"]["consistent"] is False
    assert not any(row["time_consistent"] for row in summary["run"]["top_kernels"])
    assert "NOT CONSISTENT with the measured call" in render_text(summary)
    assert "PROFILE INCONSISTENT" in render_report(session)


def test_dashboard_and_code_outline_flag_doubtful_numbers(qtbot, window, tmp_path):
    results = json.loads((BUNDLED / "results.json").read_text())
    for row in results["profile"]["compiled"]["ops"]:
        row["self_cpu_us"] *= 60
    folder = edited_copy(tmp_path, profile=results["profile"], **timed_state(NOISE_AROUND_1, BUSY))
    loaded = open_and_wait(qtbot, window, folder)
    dashboard = window.summary_view
    assert "INCONCLUSIVE" in dashboard.title.text()
    assert "Machine busy: timing unreliable" in dashboard.timing.text()
    assert "PROFILE INCONSISTENT" in dashboard.timing.text() and "b42318" in dashboard.timing.styleSheet()
    values = {dashboard.table.item(r, 0).text(): dashboard.table.item(r, 1).text()
              for r in range(dashboard.table.rowCount())}
    assert values["break-even calls"] == "—"
    window.tabs.setCurrentWidget(window.kernels_view)  # a tab takes the session when it is opened
    assert "PROFILE INCONSISTENT" in window.kernels_view.note.text()
    site = next(row for row in loaded.kernel_time.kernels if row.events)
    window.model.select_kernel(site.compile_unit, site.kernel)
    code = window.code_view
    qtbot.waitUntil(lambda: code.outline.rowCount() > 0, timeout=60_000)
    cells = [code.outline.item(r, 2) for r in range(code.outline.rowCount())]
    flagged = [cell for cell in cells if cell.text() != "—"]
    assert flagged and all(cell.text().endswith("⚠") and "PROFILE INCONSISTENT" in cell.toolTip() for cell in flagged)


def test_an_inconsistent_eager_profile_is_flagged_beside_the_charts_it_feeds(qtbot, window, tmp_path):
    """The eager profile gets the same check as the compiled one (its op times fill the Kernels tab's
    eager bars). The bundled capture's eager profile holds its first call and 5 calls only: 102 µs of ops
    per 40 µs call, flagged in the JSON, the text and next to the op-family chart, while its compiled
    profile's check stays quiet; scaled to what the call allows, the flag goes."""
    summary = summarize(open_path(BUNDLED))
    assert summary["run"]["eager_profile_check"]["consistent"] is False
    assert summary["run"]["profile_check"]["consistent"] is True
    assert "EAGER PROFILE INCONSISTENT: ops " in render_text(summary)
    open_and_wait(qtbot, window, BUNDLED)
    window.tabs.setCurrentWidget(window.kernels_view)  # a tab takes the session when it is opened
    note = window.kernels_view.note.text()
    assert "op families, eager: EAGER PROFILE INCONSISTENT" in note and "COMPILED PROFILE" not in note
    results = json.loads((BUNDLED / "results.json").read_text())
    for row in results["profile"]["eager"]["ops"]:
        row["self_cpu_us"] *= 0.3
    folder = edited_copy(tmp_path, profile=results["profile"])
    assert summarize(open_path(folder))["run"]["eager_profile_check"]["consistent"] is True
    open_and_wait(qtbot, window, folder)  # the open tab takes the next session at once
    assert "PROFILE INCONSISTENT" not in window.kernels_view.note.text()


def test_an_entry_point_run_that_failed_before_its_timing_says_so_not_to_capture_one(tmp_path):
    """A script with inspector_model() that raised before it was timed: the headline and the verdict's
    missing figures say the run failed (or ended) before it was timed, not "capture an entry-point
    script", which it is; a plain script keeps that advice."""
    def without_timing(**fields):
        folder = edited_copy(tmp_path / str(len(list(tmp_path.iterdir()))), **fields)
        results = json.loads((folder / "results.json").read_text())
        for key in ("timing", "eager", "compiled"):
            results.pop(key, None)
        (folder / "results.json").write_text(json.dumps(results))
        analysis = SessionAnalysis(open_path(folder))
        return analysis, at_a_glance(analysis).headline

    failed, headline = without_timing(entry_point=True,
                                      error={"kind": "script_error", "message": "ZeroDivisionError: x"})
    assert headline.startswith("Run time not measured: the run failed before it was timed (script_error")
    assert "failed before it was timed" in failed.verdict["t_eager"].source
    assert "ended before it was timed" in without_timing(entry_point=True)[1]
    assert "capture an entry-point script (inspector_model())" in without_timing(entry_point=False)[1]


def test_a_session_without_kernels_does_not_ask_for_provenance(tmp_path):
    """N_fused of a run that generated no kernel (it failed before Inductor, or ran the eager backend)
    says there was nothing to fuse, not to turn on provenance tracking."""
    from fuzz_cases import split_records

    log = next((BUNDLED / "trace").glob("*.log"))
    kept = [r for r in split_records(log.read_text()) if "inductor_output_code" not in r.envelope[:200]]
    bare = tmp_path / "dedicated_log_torch_trace_bare.log"
    bare.write_text("\n".join(record.render() for record in kept) + "\n")
    analysis = SessionAnalysis(open_path(bare))
    assert analysis.fusion.n_kernels == 0
    assert analysis.verdict["fused_ops"].source == "no kernels in this session: nothing was fused"
    assert "from the kernels' source nodes" in SessionAnalysis(open_path(BUNDLED)).verdict["fused_ops"].source
