"""`diff`'s compile-time line says what each side's total sums (how many units' compiles, over how
many ranks) and why it has no interval, only when both sides have a total; a side without compile time
is named, never described as "one compile"."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from inspector.core.analysis.figures import model_compile_s
from inspector.core.readers.session_loader import open_path
from cli_runner import run_cli
from conftest import MULTI_RANK

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "resources" / "sessions" / "mlp_breaks"


def compile_line(*paths: Path) -> str:
    done = run_cli("diff", *map(str, paths))
    assert done.returncode == 0, done.stderr
    return next(line for line in done.stdout.splitlines() if line.startswith("Compile time:"))


def measured_units(path: Path) -> int:
    return model_compile_s(open_path(path).units)[1]


@pytest.mark.skipif(not MULTI_RANK.exists(), reason="corpus multi_rank_logs not present")
def test_a_job_of_four_ranks_against_one_rank_log_says_what_each_total_sums():
    rank_0 = next(MULTI_RANK.glob("*rank_0.log"))
    line = compile_line(MULTI_RANK, BUNDLED)
    assert "one compile of each run" not in line
    units = measured_units(MULTI_RANK)
    assert units > 1 and f"A: {units} unit compiles over 4 ranks" in line, line
    assert f"B: {measured_units(BUNDLED)} unit compiles;" in line and "no interval" in line
    line = compile_line(MULTI_RANK, rank_0)  # the rank's own log holds no compilation metrics
    assert line.endswith("→ — (B: no compile time recorded)"), line
    assert "one compile" not in line and "no interval" not in line


def test_a_single_process_run_against_itself_counts_its_units():
    line = compile_line(BUNDLED, BUNDLED)
    count = measured_units(BUNDLED)
    assert re.search(rf"\(A: {count} unit compiles, B: {count} unit compiles; each compile happened once: no interval",
                     line), line
