"""bench/bench_figures.py's checker on a stored capture (no capture, no torch): the invariants hold on
the figures `summary --json` gives today, and each check catches the broken figure issue #46 found
(shares of one unit adding up to 191 %, own compile times summing past the wall time, "agree" said at
a factor far past the bound) — a checker that could not fail would vouch for nothing."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SESSION = ROOT / "resources" / "sessions" / "mlp_breaks"
sys.path.insert(0, str(ROOT / "bench"))

import bench_figures  # noqa: E402


@pytest.fixture(scope="module")
def summary() -> dict:
    return bench_figures.summary_json(SESSION)


def findings_of(summary: dict) -> dict[str, bench_figures.Finding]:
    return {finding.invariant: finding for finding in bench_figures.check_summary("mlp_breaks", summary, cold=True)}


def test_the_bench_checks_a_stored_session_and_prints_its_table():
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_figures.py"), "--check-session", str(SESSION)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "| mlp_breaks  | ok | ok | ok | ok | ok |" in done.stdout
    assert "3 unit(s), largest Σ share" in done.stdout and "all 5 checks hold" in done.stdout


def test_the_stored_session_holds_every_invariant(summary):
    found = findings_of(summary)
    assert {name: finding.ok for name, finding in found.items()} == {
        "shares ≤ 100 %": True, "launch × n = total": True, "own ≤ incl., Σ own ≤ wall": True,
        "agree ≤ factor": True, "memory per phase": True, "cold cache": True}
    own, wall = sum(summary["compile_time"]["self_s"].values()), summary["compile_time"]["wall_s"]
    assert f"Σ own {own:.2f} s ≤ wall {wall:.2f} s" in found["own ≤ incl., Σ own ≤ wall"].detail


def test_a_kernel_total_filed_under_every_call_site_breaks_the_unit_shares(summary):
    broken = copy.deepcopy(summary)
    kernels = broken["profile_source_time"]["kernels"]
    first = next(row for row in kernels if row["compile_id"] == "0/1")
    kernels.append(dict(first, call_line=first["call_line"] + 1))  # the name's total again, as #46's addmm rows
    finding = findings_of(broken)["shares ≤ 100 %"]
    assert finding.ok is False and "[0/1] shares add up to 10" in finding.detail and "Σ kernels" in finding.detail


def test_a_per_launch_time_that_does_not_multiply_to_the_total_fails(summary):
    broken = copy.deepcopy(summary)
    row = broken["profile_source_time"]["kernels"][0]
    row["per_launch_us"] = row["us"]  # the total shown as each launch's time
    finding = findings_of(broken)["launch × n = total"]
    assert finding.ok is False and f"× {row['launches']} = " in finding.detail


def test_parallel_workers_summed_into_own_time_fail_against_the_wall_time(summary):
    broken = copy.deepcopy(summary)
    compile_time = broken["compile_time"]
    compile_time["self_s"]["compile_file"] += compile_time["wall_s"]  # a worker's time summed in, as in #46
    finding = findings_of(broken)["own ≤ incl., Σ own ≤ wall"]
    assert finding.ok is False and "compile_file: own" in finding.detail and "> wall" in finding.detail


def test_agreement_claimed_past_its_stated_factor_fails(summary):
    broken = copy.deepcopy(summary)
    check = broken["run"]["profile_check"]
    check.update(consistent=True, kernel_us_per_call=check["call_us"] * 10)  # #46: "agree" at ~10×
    finding = findings_of(broken)["agree ≤ factor"]
    assert finding.ok is False and "claims agreement within 1.5× at 10.00×" in finding.detail


def test_a_cache_hit_in_a_cold_capture_fails(summary):
    broken = copy.deepcopy(summary)
    broken["cache"]["fx_graph"]["hit"] = 2
    assert findings_of(broken)["cold cache"].ok is False


def test_a_phase_peak_below_its_start_fails(summary):
    broken = copy.deepcopy(summary)
    broken["run"]["memory"]["compiled"] = {"cpu_rss_high_water_mb": 300.0, "cpu_rss_start_mb": 400.0}
    finding = findings_of(broken)["memory per phase"]
    assert finding.ok is False and "compiled: peak 300.0 MB < start 400.0 MB" in finding.detail
