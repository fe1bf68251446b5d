"""The CI gate reads the whole interval against its floor, a run without an interval states no
direction it cannot support, and `modes` names the mode whose compiled call is fastest.

Copies of the bundled real capture (resources/sessions/mlp_breaks) with their timing rounds edited,
as tests/test_timing.py does: a steady baseline at S = 2 and noisy runs whose interval spans 1. Each
expectation is read from the interval itself (its ends against the floor), never from the function
under test."""

from __future__ import annotations

import json
import random
import subprocess
import time
from pathlib import Path

from test_timing import QUIET, edited_copy, timed_state

from inspector.core.analysis.comparison import FASTER, INCONCLUSIVE, MAX_WIDTH, NO_DIFFERENCE, SLOWER
from inspector.core.analysis.mode_comparison import compare_modes, fastest
from inspector.core.analysis.run_diff import run_comparison
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.history.alerts import speed_against
from inspector.core.history.run_record import record_of
from inspector.core.outputs.cached_summary import session_summary
from inspector.core.outputs.summary_model import Summary
from inspector.core.readers.session_loader import detect_modes, open_path
from cli_runner import run_cli

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"
EXIT = {"PASS": 0, "FAIL": 1, "INCONCLUSIVE": 4}


def noisy(scale_eager: float, spread: tuple[float, float], scale_compiled: float, seed: int) -> list[tuple]:
    generator = random.Random(seed)
    return [(scale_eager * generator.uniform(*spread), scale_compiled * generator.uniform(0.9, 1.1))
            for _ in range(12)]


STEADY_BASE = [(2e-4 * (1 + 0.01 * (i % 3 - 1)), 1e-4 * (1 + 0.01 * (i % 2))) for i in range(12)]  # S = 2.0
NOISY_RUN = noisy(2e-4, (0.85, 1.35), 1e-4, seed=4)  # S about 2.2, its rounds disagree
AROUND_1 = noisy(1e-4, (0.85, 1.45), 1e-4, seed=1)  # S about 1.1, the interval spans 1


def gate_word(low: float, high: float, floor: float) -> str:
    """What the gate must say, from the interval's ends alone (docs/measurement.md, Gates)."""
    if high / low > MAX_WIDTH:
        return "INCONCLUSIVE"
    return "PASS" if low >= floor else "FAIL" if high < floor else "INCONCLUSIVE"


def check_line(done: subprocess.CompletedProcess, name: str) -> str:
    return next(line for line in done.stdout.splitlines() if f" {name}:" in line)


def test_min_speedup_passes_an_interval_that_spans_1_but_lies_wholly_above_the_floor(tmp_path):
    session = edited_copy(tmp_path / "around", **timed_state(AROUND_1, QUIET))
    speedup = SessionAnalysis(open_path(session)).speedup
    assert speedup.state == INCONCLUSIVE and speedup.low < 1 < speedup.high  # the case the gate got wrong
    for floor in (0.5, speedup.high * 1.2, 1.0):
        expected = gate_word(speedup.low, speedup.high, floor)
        done = run_cli("check", str(session), "--min-speedup", str(floor))
        assert check_line(done, "min-speedup").startswith(expected), (floor, done.stdout)
        assert done.returncode == EXIT[expected]
    assert gate_word(speedup.low, speedup.high, 0.5) == "PASS"  # the first floor is the reported bug


def test_baseline_gate_passes_when_the_whole_ratio_interval_clears_the_floor(tmp_path):
    base = edited_copy(tmp_path / "base", **timed_state(STEADY_BASE, QUIET))
    run = edited_copy(tmp_path / "run", **timed_state(NOISY_RUN, QUIET))
    comparison = run_comparison(SessionAnalysis(open_path(base)), SessionAnalysis(open_path(run)))
    assert comparison.state == INCONCLUSIVE and 0.9 <= comparison.low < 1 < comparison.high  # the reported case
    done = run_cli("check", str(run), "--baseline", str(base))
    expected = gate_word(comparison.low, comparison.high, 0.9)
    line = check_line(done, "speedup-vs-baseline")
    assert expected == "PASS" and line.startswith("PASS"), done.stdout
    assert "a regression of more than 10% is excluded" in line and done.returncode == 0
    # the same pair against a floor inside the interval: neither pass nor fail
    floor = (comparison.low + 1) / 2
    tolerance = f"{1 - floor:.4f}"
    done = run_cli("check", str(run), "--baseline", str(base), "--tolerance", tolerance)
    assert gate_word(comparison.low, comparison.high, 1 - float(tolerance)) == "INCONCLUSIVE"
    assert check_line(done, "speedup-vs-baseline").startswith("INCONCLUSIVE") and done.returncode == 4


def test_an_interval_wider_than_max_width_gates_nothing_even_above_the_floor(tmp_path):
    wide = [(e * 1e-3, 1e-3) for e in (1.2, 6.8, 60, 1.15, 7, 57, 6.5, 1.22, 6.9, 58, 6.6, 1.18)]
    session = edited_copy(tmp_path / "wide", **timed_state(wide, QUIET))
    speedup = SessionAnalysis(open_path(session)).speedup
    assert speedup.low >= 0.5 and speedup.high / speedup.low > MAX_WIDTH
    done = run_cli("check", str(session), "--min-speedup", "0.5")
    assert check_line(done, "min-speedup").startswith("INCONCLUSIVE") and done.returncode == 4


def older_capture(tmp_path: Path, name: str, eager_s: float, compiled_s: float) -> Path:
    """The bundled capture (timed before interleaved rounds: medians, no interval) with its medians set."""
    results = json.loads((BUNDLED / "results.json").read_text())
    eager = {**results["eager"], "median_s": eager_s}
    compiled = {**results["compiled"], "median_s": compiled_s}
    return edited_copy(tmp_path / name, eager=eager, compiled=compiled, t_eager_s=eager_s, t_execute_s=compiled_s,
                       speedup=eager_s / compiled_s)


def test_a_run_against_itself_without_an_interval_is_no_difference_and_gates_nothing():
    """The comparison may call a point within the threshold "no difference"; a gate asks whether a
    regression is excluded, which a point without an interval cannot tell: INCONCLUSIVE (exit 4)."""
    done = run_cli("diff", str(BUNDLED), str(BUNDLED))
    line = next(line for line in done.stdout.splitlines() if "B against A" in line)
    assert "no difference" in line and "faster" not in line and "no interval: older capture" in line
    done = run_cli("check", str(BUNDLED), "--baseline", str(BUNDLED))
    line = check_line(done, "speedup-vs-baseline")
    assert line.startswith("INCONCLUSIVE") and done.returncode == 4, done.stdout
    assert "no interval a gate can trust" in line and "judged on the point" not in line


def test_no_gate_passes_on_a_point_without_an_interval(tmp_path):
    """`--min-speedup` and `--baseline` on a capture without an interval: whichever way its point lies
    against the floor, INCONCLUSIVE with exit 4 and the reason (the point alone used to PASS)."""
    assert not SessionAnalysis(open_path(BUNDLED)).speedup.has_interval
    for floor in (0.1, 0.5):  # the point, 0.302×, above then below the floor
        done = run_cli("check", str(BUNDLED), "--min-speedup", str(floor))
        line = check_line(done, "min-speedup")
        assert line.startswith("INCONCLUSIVE") and done.returncode == 4, done.stdout
        assert "no interval: older capture" in line
    fast = older_capture(tmp_path, "fast", 4e-4, 1e-4)  # S = 4 without an interval, against a steady S = 2
    base = edited_copy(tmp_path / "base", **timed_state(STEADY_BASE, QUIET))
    done = run_cli("check", str(fast), "--baseline", str(base))
    assert check_line(done, "speedup-vs-baseline").startswith("INCONCLUSIVE") and done.returncode == 4
    done = run_cli("check", str(base), "--baseline", str(fast))  # and with the interval on this side only
    assert check_line(done, "speedup-vs-baseline").startswith("INCONCLUSIVE") and done.returncode == 4


def test_too_few_rounds_gate_nothing_even_far_above_the_floor(tmp_path):
    few = edited_copy(tmp_path / "few", **timed_state(STEADY_BASE[:2], QUIET))
    speedup = SessionAnalysis(open_path(few)).speedup
    assert speedup.state == INCONCLUSIVE and speedup.value > 1.5  # S = 2 from 2 rounds
    done = run_cli("check", str(few), "--min-speedup", "0.5")
    line = check_line(done, "min-speedup")
    assert line.startswith("INCONCLUSIVE") and done.returncode == 4 and "timing round" in line, done.stdout


def test_two_older_captures_apart_state_no_direction_and_modes_names_no_fastest(tmp_path):
    a = older_capture(tmp_path, "a", 2e-4, 1e-4)
    b = older_capture(tmp_path, "b", 2e-4, 1.5e-4)
    comparison = run_comparison(SessionAnalysis(open_path(a)), SessionAnalysis(open_path(b)))
    assert not comparison.has_interval and comparison.state == INCONCLUSIVE
    assert "no interval: older capture" in run_cli("diff", str(a), str(b)).stdout
    best = fastest(compare_modes(detect_modes({"default": a, "max-autotune": b})))
    assert best.mode is None and "No mode is measurably fastest" in best.text
    # one older capture alone keeps its direction; at S = 1.0 it is no measurable difference
    assert SessionAnalysis(open_path(a)).speedup.state == FASTER
    assert SessionAnalysis(open_path(older_capture(tmp_path, "even", 1e-4, 1e-4))).speedup.state == NO_DIFFERENCE
    assert SessionAnalysis(open_path(BUNDLED)).speedup.state == SLOWER  # 0.302×


def test_modes_names_the_mode_with_the_shorter_compiled_call_not_the_higher_speedup(tmp_path):
    """default: 100 µs per call at S = 2; max-autotune: 150 µs per call at S about 2.7 (its eager run
    was slower). The user runs one of them: the one with the shorter call is the fastest."""
    short = edited_copy(tmp_path / "default", **timed_state(STEADY_BASE, QUIET))
    long = [(4e-4 * (1 + 0.01 * (i % 3)), 1.5e-4 * (1 + 0.01 * (i % 2))) for i in range(12)]
    slow_call = edited_copy(tmp_path / "max-autotune", **timed_state(long, QUIET))
    rows = compare_modes(detect_modes({"default": short, "max-autotune": slow_call}))
    by_mode = {row.mode: row for row in rows}
    assert max(c for _, c in STEADY_BASE) < min(c for _, c in long)  # every default call is the shorter
    assert by_mode["max-autotune"].speedup > by_mode["default"].speedup  # S would rank the other way
    best = fastest(rows)
    assert best.mode == "default" and best.text.startswith("Fastest per call here: default")
    assert by_mode["default"].note(best.mode).startswith("fastest")
    assert not by_mode["max-autotune"].note(best.mode).startswith("fastest")
    # one mode measured: nothing to be fastest against
    (alone,) = compare_modes(detect_modes({"default": short}))
    only = fastest([alone])
    assert only.mode is None and only.text.startswith("Only default was measured")
    assert "fastest" not in alone.note(only.mode)


def test_history_speed_gates_nothing_without_an_interval(tmp_path):
    """`check --history`'s speed check reads the same rule: against a run without an interval it is
    INCONCLUSIVE, never PASS on the point."""
    def record(path: Path, when: float):
        session = open_path(path)
        return record_of(session, Summary.from_state(session_summary(session)), path.name, when)

    latest = record(BUNDLED, time.time() - 60)  # 0.302×, no interval
    run = record(older_capture(tmp_path, "same", 2e-4, 2e-4 / 0.302), time.time())
    check = speed_against(run, latest, 0.1, "compared with the latest")
    assert check is not None and check.passed is None, check
    assert "no interval a gate can trust" in check.reason
