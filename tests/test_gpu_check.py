"""bench/gpu_check.py, the prepared device check of issue 25, where no GPU is: without CUDA it says
so in one line and SKIPs everything; its --cpu-dry-run runs the same pipeline (our capture, our
reader, the profile join, the CLI) on CPU, where the checks that apply PASS and the CUDA-only ones
SKIP with their reason."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT

SCRIPT = ROOT / "bench" / "gpu_check.py"
CPU_CHECKS = ("capture", "timing", "kernels", "profile_join", "cli_profile_join", "reduce_overhead")
CUDA_ONLY = ("cuda_memory", "cudagraphs")


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def _run(out: Path, *options: str, timeout: float) -> tuple[subprocess.CompletedProcess, dict]:
    done = subprocess.run([sys.executable, str(SCRIPT), "--out", str(out), "--python", sys.executable, *options],
                          capture_output=True, text=True, timeout=timeout, cwd=str(ROOT))
    return done, json.loads((out / "gpu_check.json").read_text(encoding="utf-8"))


def test_without_cuda_every_check_skips_in_one_line(tmp_path, torch_runtime):
    if _cuda():
        pytest.skip("this machine has CUDA: the check would run for real")
    done, report = _run(tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().count("\n") == 0 and "no CUDA device" in done.stdout
    assert {check["status"] for check in report["checks"].values()} == {"SKIP"}
    assert all("no CUDA device" in check["reason"] for check in report["checks"].values())
    assert report["finished"] and report["failed"] == []


def test_cpu_dry_run_proves_the_pipeline(tmp_path, compiles):
    out = tmp_path / "out"
    done, report = _run(out, "--cpu-dry-run", "--budget", "280", timeout=330)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    checks = report["checks"]
    assert set(checks) == set(CPU_CHECKS) | set(CUDA_ONLY)
    for name in CPU_CHECKS:
        assert checks[name]["status"] == "PASS", (name, checks[name])
        assert f"PASS {name}:" in done.stdout
    for name in CUDA_ONLY:
        assert checks[name]["status"] == "SKIP", (name, checks[name])
        assert checks[name]["reason"].startswith("CUDA only:"), checks[name]["reason"]
    assert report["finished"] and report["failed"] == [] and report["wall_s"] < 300

    # what each check measured is in the report, from our reader's view of the CPU sessions
    assert "blocked_autorange" in checks["timing"]["measured"]["method"]
    assert checks["kernels"]["measured"]["kernel_kinds"].get("cpp", 0) >= 1
    joined = checks["profile_join"]["measured"]
    assert joined["device"] == "CPU" and joined["graph_calls"] > 0 and joined["total_us"] > 0 and joined["lines"] > 0
    assert checks["cli_profile_join"]["measured"]["graph_calls"] == joined["graph_calls"]
    memory = checks["cuda_memory"]["measured"]["memory"]
    assert all("cuda_max_allocated_mb" not in figures and figures["cpu_rss_high_water_mb"] > 0
               for figures in memory.values())
    assert "PASS" in (out / "gpu_check.txt").read_text(encoding="utf-8")

    # the sessions come back as bundles our reader opens (a device machine returns at most 8 files)
    from inspector.core.readers.session_loader import close_session, open_path

    for name in ("session_default", "session_reduce_overhead"):
        assert report["files"][name]["bundle"] == f"{name}.tcinspect"
        session = open_path(out / f"{name}.tcinspect")
        try:
            assert session.kind == "capture" and session.complete and session.units
        finally:
            close_session(session)
    assert sorted(path.name for path in out.iterdir()) == [
        "gpu_check.json", "gpu_check.txt", "session_default.tcinspect", "session_reduce_overhead.tcinspect"]


# ---- the CUDA branches of the checks, fed what a CUDA capture records (no GPU needed) -------------

def _checks():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import gpu_check
    finally:
        sys.path.remove(str(SCRIPT.parent))
    return gpu_check


def _session(results: dict, units=(), source: Path = Path("/nonexistent")):
    from types import SimpleNamespace

    from inspector.core.model.run_results import RunResults

    return SimpleNamespace(results=RunResults.from_state(results), units=list(units), ranks=[], source=source,
                           extracted_to=None)


CUDA_ROUND = {"order": "eager first", "eager_s": 2e-4, "eager_calls": 512, "compiled_s": 8e-5, "compiled_calls": 1024}


def test_cuda_timing_and_memory_read_as_the_runner_writes_them():
    checks = _checks()
    spread = {"n": 2, "median_s": 8e-5}
    cuda = _session({"timing": {"method": "interleaved rounds, CUDA events", "rounds": [CUDA_ROUND, CUDA_ROUND]},
                     "eager": spread, "compiled": spread,
                     "memory_eager": {"cpu_rss_high_water_mb": 900.0, "cuda_max_allocated_mb": 1.3},
                     "memory_compiled": {"cpu_rss_high_water_mb": 950.0, "cuda_max_allocated_mb": 2.1}})
    for function in (checks.check_timing, checks.check_memory):
        check = checks.Check("x")
        function(check, cuda, "cuda")
        assert check.status == "PASS", check.reason
    cpu_timed = _session({"timing": {"method": "interleaved rounds, torch.utils.benchmark.Timer.blocked_autorange",
                                     "rounds": [CUDA_ROUND]},
                          "memory_eager": {"cpu_rss_high_water_mb": 900.0},
                          "memory_compiled": {"cpu_rss_high_water_mb": 9.0}})
    for function in (checks.check_timing, checks.check_memory):
        check = checks.Check("x")
        function(check, cpu_timed, "cuda")
        assert check.status == "FAIL", check.reason
    zero = _session({"timing": {"method": "interleaved rounds, CUDA events",
                                "rounds": [dict(CUDA_ROUND, compiled_s=0.0)]}})
    check = checks.Check("timing")
    checks.check_timing(check, zero, "cuda")
    assert check.status == "FAIL" and "round(s) [0]" in check.reason


def test_cuda_kernels_found_in_a_real_cuda_log(corpus):
    from inspector.core.readers.session_loader import open_path

    checks = _checks()
    session = open_path(corpus / "inductor_provenance_jit_cuda_log.txt")
    check = checks.Check("kernels")
    checks.check_kernels(check, session, "cuda")
    assert check.status == "PASS", check.reason
    assert check.measured["kernel_kinds"]["triton"] == 3 and all(check.measured["markers"].values())
    check = checks.Check("kernels")
    checks.check_kernels(check, session, "cpu")  # no C++ kernel in a CUDA log
    assert check.status == "FAIL"


def test_cudagraphs_fail_on_a_skip_notice_or_no_record():
    from types import SimpleNamespace

    checks = _checks()
    skipped = SimpleNamespace(compile_id="0/0",
                              warnings=["CUDA graphs skipped: skipping cudagraphs due to mutated inputs"],
                              metrics={"cudagraph_skip_reason": "skipping cudagraphs due to mutated inputs"}, spans=[])
    check = checks.Check("cudagraphs")
    checks.check_cudagraphs(check, _session({"counters": {"inductor": {"cudagraph_skips": 1}}}, [skipped]), "cuda")
    assert check.status == "FAIL" and "mutated inputs" in check.reason and "counted 1" in check.reason
    assert "no cudagraph record in the log" in check.reason and "no cudaGraphLaunch" in check.reason
    check = checks.Check("cudagraphs")
    checks.check_cudagraphs(check, _session({"counters": {"inductor": {"cudagraph_skips": 1}}}, [skipped]), "cpu")
    assert check.status == "SKIP" and check.reason.startswith("CUDA only:") and "mutated inputs" in check.reason


def test_cudagraphs_pass_on_records_and_graph_launches(tmp_path):
    from types import SimpleNamespace

    from inspector.core.model.compile_spans import Span

    checks = _checks()
    (tmp_path / "profile").mkdir()
    (tmp_path / "profile" / "compiled.json").write_text(json.dumps({"traceEvents": [
        {"ph": "X", "name": "cudaGraphLaunch", "ts": 10, "dur": 3, "pid": 1, "tid": 1, "cat": "cuda_runtime"}]}))
    recorded = SimpleNamespace(compile_id="0/0", warnings=[], metrics={"runtime_cudagraphify_time_us": 5123},
                               spans=[Span("CUDAGraphNode.record", 0.0, 4.0, "0/0")])
    check = checks.Check("cudagraphs")
    checks.check_cudagraphs(check, _session({"counters": {"inductor": {}}}, [recorded], source=tmp_path), "cuda")
    assert check.status == "PASS", check.reason
    assert check.measured["spans"] == {"CUDAGraphNode.record": 1} and check.measured["profile_graph_launches"] == 1
