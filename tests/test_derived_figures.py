"""The verdict's derived figures (issue 46, item 8), each against torch's own record: K divides by the
kernel launches the output code's call function makes, N_fused counts only ops fused with others,
T_compile leaves out the compiles torch starts itself for eager torch.cond calls, and S_max comes from
the profiles rather than through the noise of S."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_traced
from test_timing import QUIET, edited_copy, timed_state

from inspector.core.analysis.unit_origin import eager_trigger as started_by_torch
from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.readers.session_loader import open_path

ROOT = Path(__file__).resolve().parent.parent
TWICE = '''import torch


class Twice(torch.nn.Module):
    """The same elementwise tail after two matrix products of one shape: one kernel, launched twice."""

    def __init__(self):
        super().__init__()
        self.first, self.second = torch.nn.Linear(16, 16), torch.nn.Linear(16, 16)

    def forward(self, x):
        x = torch.relu(self.first(x) * 2 + 1)
        return torch.relu(self.second(x) * 2 + 1)


if __name__ == "__main__":
    torch.manual_seed(0)
    with torch.no_grad():
        torch.compile(Twice().eval())(torch.randn(4, 16))
'''
EAGER_COND = '''import torch


class Branchy(torch.nn.Module):
    """torch.cond in forward: the eager timing calls it eagerly, and torch compiles its branches."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(16, 16)

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda y: y.sin() * 2, lambda y: y.cos() + 1, (self.linear(x),))


def inspector_model():
    torch.manual_seed(0)
    return Branchy().eval(), (torch.randn(4, 16),)
'''
LAUNCH = re.compile(r"^\s+(?:\w+\.run|cpp_fused_\w+|triton_\w+|extern_kernels\.\w+)\(", re.M)


@pytest.fixture(scope="module")
def twice_run(tmp_path_factory, compiles):
    folder = tmp_path_factory.mktemp("twice")
    script = folder / "twice.py"
    script.write_text(TWICE)
    return run_traced(script, folder / "run", folder / "cache")


def test_k_divides_by_launches_and_n_fused_leaves_lone_library_calls_out(twice_run):
    analysis = SessionAnalysis(open_path(twice_run.trace_dir))
    fusion = analysis.fusion
    (unit,) = analysis.session.units
    call = "\n".join(artifact.text.split("def call(")[-1] for artifact in unit.output_code)
    launches = len(LAUNCH.findall(call))
    library = len(re.findall(r"^\s+extern_kernels\.\w+\(", call, re.M))
    # torch's code: one fused kernel defined once and launched twice, and two lone addmm calls
    assert fusion.n_kernels == 3 and launches == 4 and library == 2
    assert fusion.n_launch_sites == launches
    assert analysis.verdict.value("fusion") == pytest.approx(fusion.n_ops / launches)
    # every op is fused with others, a lone library call, or folded into no kernel at all
    assert fusion.n_fused == fusion.n_ops - library - fusion.n_eliminated
    assert "ops inside generated kernels made from ≥ 2 ops" in analysis.verdict["fused_ops"].formula


def test_t_compile_leaves_out_what_torch_compiled_for_an_eager_cond(tmp_path, inductor_cache):
    script = tmp_path / "eager_cond.py"
    script.write_text(EAGER_COND)
    done = subprocess.run([sys.executable, "-m", "inspector", "capture", str(script), "-o", str(tmp_path / "s"),
                           "--runs", "6", "--round-time", "0.01", "--warmup", "1", "--threads", "1", "--quiet"],
                          capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    analysis = SessionAnalysis(open_path(tmp_path / "s"))
    units = analysis.session.units
    theirs = [unit for unit in units if started_by_torch(unit)]
    ours = [unit for unit in units if not started_by_torch(unit)]
    assert theirs and ours and all(unit.function == "_cond_op_wrapper" for unit in theirs)
    t_compile = analysis.verdict["t_compile"]
    assert t_compile.value == pytest.approx(sum(unit.compile_s for unit in ours))
    assert f"not counted: {len(theirs)} compile(s)" in t_compile.source and "eager torch.cond" in t_compile.source
    assert all(str(unit.compile_id) in t_compile.source for unit in theirs)
    # break-even, where stated, pays back the model's compile only
    calls = analysis.verdict.value("break_even")
    if calls is not None:
        eager, compiled = analysis.verdict.value("t_eager"), analysis.verdict.value("t_execute")
        assert calls == pytest.approx(t_compile.value / (eager - compiled))


def test_s_max_does_not_move_with_the_noise_of_s(tmp_path):
    """The bundled capture (its eager and compiled profiles as they are) with its timing rounds edited:
    S_max is the profiles' figure whatever S the timing found, and is left unstated, saying why, when
    the timing's S and the profiles' disagree beyond a factor of 2."""
    def ceiling(eager_over_compiled: float, name: str):
        pairs = [(eager_over_compiled * 1e-3 * (1 + 0.01 * (i % 3)), 1e-3 * (1 + 0.01 * (i % 2))) for i in range(12)]
        folder = edited_copy(tmp_path / name, **timed_state(pairs, QUIET))
        return SessionAnalysis(open_path(folder)).verdict["amdahl"]

    near_one, faster = ceiling(1.0, "near"), ceiling(1.4, "faster")
    assert near_one.value is not None and near_one.value == faster.value  # S moved by 40 %, the ceiling did not
    assert "both from the profiles, not through S" in near_one.source
    noisy = ceiling(3.3, "noisy")
    assert noisy.value is None and "not stated: inputs too noisy" in noisy.source
