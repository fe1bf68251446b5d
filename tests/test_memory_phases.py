"""Memory eager against compiled, each phase's peak measured on its own: on a real capture whose
eager run makes 128 MB of temporaries that the compiled run fuses away, the compiled peak comes out
lower than the eager one, and the summary says what was measured. (The process's running peak, read
one phase after the other, could never show a compiled run lower than the eager run before it.)"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import ROOT, SCENARIOS, capture
from inspector.core.readers.session_loader import open_path

MB_TEMPORARIES = 128  # two temporaries of 64 MB each in the eager run


@pytest.fixture(scope="module")
def memory_session(tmp_path_factory, compiles):
    if not open("/proc/self/status").read():  # noqa: SIM115 - Linux only: the reset is /proc/self/clear_refs
        pytest.skip("no /proc")
    folder = tmp_path_factory.mktemp("memory")
    process = capture(SCENARIOS / "memory_phases.py", folder / "session", folder / "cache", profile=False)
    assert process.exit_code == 0, (folder / "session" / "stderr.txt").read_text()[-3000:]
    return folder / "session"


def test_each_phase_has_its_own_peak_and_compiled_comes_out_lower(memory_session):
    results = open_path(memory_session).results
    eager, compiled = results.memory_eager, results.memory_compiled
    assert "reset at each phase's start" in results.memory_method
    # the eager phase grew by its two temporaries; the compiled phase, fused, by far less
    assert eager["cpu_rss_high_water_mb"] - eager["cpu_rss_start_mb"] >= 0.9 * MB_TEMPORARIES, eager
    assert compiled["cpu_rss_high_water_mb"] - compiled["cpu_rss_start_mb"] < 0.5 * MB_TEMPORARIES, compiled
    assert compiled["cpu_rss_high_water_mb"] < eager["cpu_rss_high_water_mb"]
    assert results.memory_compile["cpu_rss_high_water_mb"] >= results.memory_compile["cpu_rss_start_mb"]

    done = subprocess.run([sys.executable, "-m", "inspector", "summary", str(memory_session), "--no-cache"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    line = re.search(r"memory, eager → compiled \((peak per phase[^)]*\))\): cpu_rss_high_water (\d+) → (\d+) MB",
                     done.stdout)
    assert line, done.stdout
    assert int(line[3]) < int(line[2])  # what the user reads is the lower compiled peak
    growth = re.search(r"above each phase's start \(what its calls took\): cpu_rss_high_water \+(\d+) → \+(\d+) MB",
                       done.stdout)
    assert growth and int(growth[1]) >= 0.9 * MB_TEMPORARIES > 2 * int(growth[2]), done.stdout
    assert "compiling (the first compiled call): cpu_rss_high_water" in done.stdout
