"""The bench scripts still run, in a reduced mode (small inputs, one repeat): a bench that broke
with the code it measures would otherwise be found only when someone needs its figures. Their
timings are not checked here (docs/benchmarks.md holds those); what they report finding is."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import CORPUS

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
# Slow: each runs a bench script end to end in its own process, on inputs it generates, and guards the
# bench harness rather than what the app shows; together they were a long pole of `make test-fast`
# (one module runs on one worker). `make test` runs them.
pytestmark = pytest.mark.slow


def run_bench(tmp_path: Path, *args: str) -> str:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CACHE_HOME=str(tmp_path / "cache"))
    done = subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return done.stdout


def test_trace_reader_bench_measures_a_small_synthetic_log_against_tlparse(tmp_path):
    if shutil.which("tlparse", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("tlparse is not installed")
    out = run_bench(tmp_path, str(BENCH / "bench_trace_reader.py"), "--rows", "synthetic", "--mb", "2", "--repeat", "1")
    assert "first view" in out and "× tlparse" in out and "reopen" in out


def test_ranks_bench_finds_every_planted_difference_in_a_small_job(tmp_path):
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present beside this checkout")
    out = run_bench(tmp_path, str(BENCH / "bench_ranks.py"), "--ranks", "16", "--workers", "1")
    assert "planted differences: all reported, nothing else" in out


def test_graph_diff_bench_reports_the_inserted_ops(tmp_path):
    out = run_bench(tmp_path, str(BENCH / "bench_graph_diff.py"))
    assert "5000 nodes:" in out and "removed 0" in out


def test_views_bench_paints_the_timeline_and_opens_big_output_code(tmp_path):
    pytest.importorskip("PySide6")
    out = run_bench(tmp_path, str(BENCH / "bench_views.py"))
    assert "Gantt painting per frame" in out and "output code" in out


def test_xla_dump_bench_reads_a_small_dump(tmp_path):
    pytest.importorskip("jax")
    out = run_bench(tmp_path, str(BENCH / "bench_xla_dump.py"), "2")
    assert "open + summarise" in out and "HLO graph" in out


def test_session_arrival_bench_times_the_views_on_a_small_job(tmp_path):
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present beside this checkout")
    run_bench(tmp_path, str(BENCH / "make_many_ranks.py"), str(tmp_path / "job"), "--ranks", "16")
    out = run_bench(tmp_path, str(BENCH / "bench_session_arrival.py"), str(tmp_path / "job"), "--anchor")
    assert "round 1 build" in out and "round 1 anchor" in out
    assert "every view had the session after median" in out and "longest stall median" in out
