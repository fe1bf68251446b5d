"""The GPU paths of the capture and the reader, checked in one short run on a machine with CUDA
(issue 25). Run it through bench/gpu_check.sh when a GPU machine is lent; never from CI.

    python bench/gpu_check.py [--out DIR] [--python PY] [--budget S] [--cpu-dry-run] [--keep DIR]

It writes a tiny entry-point model, captures it twice with our own capture (`inspector/capture`, the
same launcher and runner `compile-inspector capture` uses) on `--device cuda`: once in the default
mode and once with `--mode reduce-overhead` (CUDA graphs), opens each session with our own reader
(`readers/session_loader.open_path`) and checks, each PASS, FAIL or SKIP with its reason:

  capture            the default-mode capture ran to its end and opens as a complete capture session
  timing             results.json's timing was taken with CUDA events (`cuda_round`), every round
                     timed with positive seconds and calls
  cuda_memory        memory_eager and memory_compiled hold cuda_max_allocated_mb (positive)
  kernels            the output code holds Triton kernels (`triton_` names, found by our parser as
                     kind `triton`, `@triton.jit` / `async_compile.triton(` in the text)
  profile_join       the capture's torch.profiler trace of the compiled run (profile/compiled.json,
                     paired by `paired_profile`) joins to the log (`source_time`): GPU time tied to
                     the log's Triton kernels
  cli_profile_join   the same through the CLI: `compile-inspector summary LOG --profile TRACE --json`
  reduce_overhead    the reduce-overhead capture ran to its end and opens
  cudagraphs         the reduce-overhead run recorded CUDA graphs: no "CUDA graphs skipped" notice and
                     no counted skip, torch's cudagraph records in the log (CUDAGraphNode.record,
                     cudagraphify… spans, or runtime_cudagraphify_time_us), cudaGraphLaunch in its profile

Everything it measured goes to OUT/gpu_check.json (rewritten after every check, so a run stopped
by the timeout keeps what it had), OUT/gpu_check.txt (the same in words) and the two sessions as
bundles (OUT/session_default.tcinspect, OUT/session_reduce_overhead.tcinspect: the device machine
returns at most 8 files from $OUT). Exit status 1 when a check FAILs, else 0.

Without a CUDA device it says so in one line and exits 0 with every check SKIP. With --cpu-dry-run
it runs the same pipeline on CPU instead (C++ kernels in place of Triton, the Timer in place of
CUDA events; CUDA memory and CUDA graphs SKIP): tests/test_gpu_check.py runs that, so the plumbing
is proven where no GPU is.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PASS, FAIL, SKIP = "PASS", "FAIL", "SKIP"
CHECKS = ("capture", "timing", "cuda_memory", "kernels", "profile_join", "cli_profile_join", "reduce_overhead",
          "cudagraphs")
DEFAULT_BUDGET_S = 280.0  # the wrapper's hard timeout is 300 s
REPORT_RESERVE_S = 25.0  # kept back from the captures for reading, joining and writing the report
CLI_TIMEOUT_S = 60.0
PROBE_TIMEOUT_S = 60.0
CUDAGRAPH_SPANS = ("CUDAGraphNode.record", "cudagraphify", "CUDAGraphTreeManager")
CUDAGRAPH_LAUNCH = "cudaGraphLaunch"

MODEL = '''"""gpu_check's model: two fused blocks (a matmul, then pointwise work and a norm Inductor fuses
into generated kernels), static shapes, no graph break."""

import torch


class Block(torch.nn.Module):
    def __init__(self, width):
        super().__init__()
        self.fc = torch.nn.Linear(width, width)
        self.norm = torch.nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(torch.nn.functional.gelu(self.fc(x)) * 0.5 + x)


class Model(torch.nn.Module):
    def __init__(self, width=256):
        super().__init__()
        self.blocks = torch.nn.Sequential(Block(width), Block(width))
        self.head = torch.nn.Linear(width, 16)

    def forward(self, x):
        return torch.softmax(self.head(self.blocks(x)), dim=-1)


def inspector_model():
    torch.manual_seed(0)
    return Model().eval(), (torch.randn(64, 256),)
'''

PROBE = """import json, sys
info = {"python": sys.version.split()[0], "executable": sys.executable}
try:
    import torch
    info.update(torch=torch.__version__, cuda=torch.cuda.is_available(), cuda_version=torch.version.cuda)
    if info["cuda"]:
        info.update(device_name=torch.cuda.get_device_name(), device_count=torch.cuda.device_count())
    try:
        import triton
        info["triton"] = triton.__version__
    except Exception as error:
        info["triton"] = None
except Exception as error:
    info.update(torch=None, cuda=False, error=f"{type(error).__name__}: {error}")
print(json.dumps(info))
"""


@dataclass
class Check:
    name: str
    status: str = SKIP
    reason: str = "not reached"
    measured: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"status": self.status, "reason": self.reason, "measured": self.measured}


def passed(check: Check, reason: str, **measured) -> None:
    check.status, check.reason = PASS, reason
    check.measured.update(measured)


def failed(check: Check, reason: str, **measured) -> None:
    check.status, check.reason = FAIL, reason
    check.measured.update(measured)


def skipped(check: Check, reason: str, **measured) -> None:
    check.status, check.reason = SKIP, reason
    check.measured.update(measured)


class Report:
    """gpu_check.json and gpu_check.txt, rewritten after every check."""

    def __init__(self, out: Path, mode: str):
        self.out = out
        self.started = time.monotonic()
        self.document: dict = {"schema": "gpu-check/1", "mode": mode, "started": time.time(), "environment": {},
                               "checks": {}, "steps": {}, "files": {}, "finished": False}
        self.checks = {name: Check(name) for name in CHECKS}

    def step(self, name: str, **fields) -> None:
        self.document["steps"][name] = fields
        self.write()

    def write(self, finished: bool = False) -> None:
        self.document["checks"] = {name: check.as_dict() for name, check in self.checks.items()}
        self.document["wall_s"] = round(time.monotonic() - self.started, 2)
        self.document["finished"] = finished
        self.document["failed"] = [name for name, check in self.checks.items() if check.status == FAIL]
        self.out.mkdir(parents=True, exist_ok=True)
        temporary = self.out / "gpu_check.json.tmp"
        temporary.write_text(json.dumps(self.document, indent=1, default=str), encoding="utf-8")
        os.replace(temporary, self.out / "gpu_check.json")
        (self.out / "gpu_check.txt").write_text(self.text(), encoding="utf-8")

    def lines(self) -> list[str]:
        return [f"{check.status} {name}: {check.reason}" for name, check in self.checks.items()]

    def text(self) -> str:
        environment = self.document["environment"]
        head = [f"gpu_check ({self.document['mode']}), {self.document['wall_s']:.0f} s: "
                f"python {environment.get('python')}, "
                f"torch {environment.get('torch')}, CUDA {environment.get('cuda_version')}, "
                f"triton {environment.get('triton')}, "
                f"device {environment.get('device_name') or '-'}"]
        body = []
        for name, check in self.checks.items():
            body.append(f"{check.status} {name}: {check.reason}")
            body += [f"    {key}: {json.dumps(value, default=str)[:300]}" for key, value in check.measured.items()]
        steps = [f"  {name}: {json.dumps(fields, default=str)[:300]}"
                 for name, fields in self.document["steps"].items()]
        return "\n".join(head + body + ["", "steps:"] + steps) + "\n"

    def remaining(self, budget: float) -> float:
        return budget - (time.monotonic() - self.started)


def capture(python: str, script: Path, session: Path, cache: Path, device: str, mode: str, timeout_s: float) -> dict:
    """One capture through our launcher, as `compile-inspector capture SCRIPT -o SESSION --device D
    --mode M` runs it: quick timing settings, the profile on (the default)."""
    from inspector.capture.launcher import CaptureProcess, CaptureSettings, plan_script

    settings = CaptureSettings(device=device, mode=mode, runs=5, warmup=2, round_time=0.05,
                               timeout_s=max(1.0, round(timeout_s)))
    plan = plan_script(script, [], session, settings, python)
    plan.env.update(TORCHINDUCTOR_CACHE_DIR=str(cache), TORCH_LOGS="graph_breaks,recompiles,cudagraphs")
    start = time.monotonic()
    process = CaptureProcess(plan)
    process.wait()
    return {"exit_code": process.exit_code, "error": process.error, "wall_s": round(time.monotonic() - start, 2),
            "timeout_s": settings.timeout_s, "settings": {"device": device, "mode": mode, "runs": settings.runs}}


def stderr_tail(session: Path, chars: int = 1500) -> str:
    try:
        return (session / "stderr.txt").read_text(encoding="utf-8", errors="replace")[-chars:]
    except OSError:
        return ""


def open_capture(session: Path):
    from inspector.core.readers.session_loader import open_path

    return open_path(session)


def results_of(session) -> dict:
    from inspector.core.model.records import state_of

    return state_of(session.results) or {}


def trace_log(session_dir: Path) -> Path | None:
    logs = sorted((session_dir / "trace").glob("*.log"))
    return logs[0] if logs else None


def is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# ---- the checks ---------------------------------------------------------------------------------


def check_capture(check: Check, outcome: dict, session_dir: Path, device: str, mode: str):
    """The run's end and our reader's view of it; the opened Session, or None."""
    if outcome["exit_code"] != 0:
        failed(check, f"capture exited {outcome['exit_code']}: {(outcome['error'] or {}).get('message')}",
               stderr_tail=stderr_tail(session_dir), **outcome)
        return None
    try:
        session = open_capture(session_dir)
    except Exception as error:
        failed(check, f"our reader could not open the session: {type(error).__name__}: {error}", **outcome)
        return None
    results = results_of(session)
    environment = results.get("environment") or {}
    settings = (session.manifest.get_state() if session.manifest is not None else {}).get("settings") or {}
    units = session.units
    measured = dict(outcome, kind=session.kind, complete=session.complete, units=len(units),
                    environment=environment, t_compile_s=results.get("t_compile_s"),
                    t_first_call_s=results.get("t_first_call_s"), allclose=results.get("allclose"),
                    graph_breaks=len(session.breaks), unreadable=dict(session.problems.counts))
    problems = []
    if session.kind != "capture":
        problems.append(f"opened as {session.kind}, not a capture")
    if not session.complete:
        problems.append("the session is not complete")
    if environment.get("device") != device:
        problems.append(f"results.json says device {environment.get('device')!r}, not {device!r}")
    if settings.get("mode") != mode:
        problems.append(f"the manifest says mode {settings.get('mode')!r}, not {mode!r}")
    if not units:
        problems.append("the log holds no compile unit")
    # whether compiled matches eager is the model's business, not a path of ours: said, never failed on
    close = "outputs allclose" if results.get("allclose") is True else \
        f"outputs NOT allclose ({[c.get('max_rel_error') for c in results.get('correctness') or []]} max rel error)"
    if problems:
        failed(check, "; ".join(problems), **measured)
    else:
        passed(check, f"{mode} capture on {device} in {outcome['wall_s']:.0f} s, {len(units)} compile unit(s), "
                      f"compile {results.get('t_compile_s') or 0:.1f} s, {close}", **measured)
    return session


def check_timing(check: Check, session, device: str) -> None:
    results = results_of(session)
    timing = results.get("timing") or {}
    method = str(timing.get("method") or "")
    rounds = timing.get("rounds") or []
    measured = {"method": method, "rounds": len(rounds), "eager": results.get("eager"),
                "compiled": results.get("compiled"),
                "calls": [row.get("compiled_calls") for row in rounds]}
    expected = "CUDA events" if device == "cuda" else "blocked_autorange"
    bad = [index for index, row in enumerate(rounds)
           if not all(is_number(row.get(key)) and row[key] > 0
                      for key in ("eager_s", "compiled_s", "eager_calls", "compiled_calls"))]
    if expected not in method:
        failed(check, f"timing method {method!r} does not name {expected!r}", **measured)
    elif not rounds:
        failed(check, "no timing rounds in results.json", **measured)
    elif bad:
        failed(check, f"round(s) {bad} lack positive seconds and calls", **measured)
    else:
        compiled = (results.get("compiled") or {}).get("median_s") or 0
        eager = (results.get("eager") or {}).get("median_s") or 0
        passed(check, f"{method}: {len(rounds)} rounds, compiled {compiled * 1e6:.1f} us/call, "
                      f"eager {eager * 1e6:.1f} us/call",
               **measured)


def check_memory(check: Check, session, device: str) -> None:
    results = results_of(session)
    figures = {phase: (results.get(phase) or {}) for phase in ("memory_eager", "memory_compiled")}
    cuda = {phase: values.get("cuda_max_allocated_mb") for phase, values in figures.items()}
    measured = {"memory": figures}
    if device != "cuda":
        rss = all(is_number(values.get("cpu_rss_high_water_mb")) for values in figures.values())
        present = [phase for phase, value in cuda.items() if value is not None]
        skipped(check, "CUDA only: a CPU run records no CUDA memory"
                + ("" if rss else "; (and the CPU RSS figures are missing too)")
                + (f"; yet {present} hold cuda_max_allocated_mb" if present else ""), **measured)
        return
    missing = [phase for phase, value in cuda.items() if not (is_number(value) and value > 0)]
    if missing:
        failed(check, f"no positive cuda_max_allocated_mb in {missing}", **measured)
    else:
        passed(check, f"max allocated: eager {cuda['memory_eager']:.2f} MB, compiled {cuda['memory_compiled']:.2f} MB",
               **measured)


def check_kernels(check: Check, session, device: str) -> None:
    kind, prefix = ("triton", "triton_") if device == "cuda" else ("cpp", "cpp_")
    kernels, texts = [], []
    for unit in session.units:
        for artifact in unit.output_code:
            try:
                code = artifact.code
            except Exception as error:
                failed(check, f"our parser failed on {unit.compile_id}'s output code: {type(error).__name__}: {error}")
                return
            texts.append(artifact.text or "")
            kernels += [(str(unit.compile_id), kernel) for kernel in code.kernels]
    kinds: dict[str, int] = {}
    for _, kernel in kernels:
        kinds[kernel.kind] = kinds.get(kernel.kind, 0) + 1
    ours = [kernel.name for _, kernel in kernels if kernel.kind == kind]
    measured = {"output_code_files": len(texts), "kernel_kinds": kinds, "kernels": ours[:20]}
    if device == "cuda":
        markers = {marker: sum(text.count(marker) for text in texts)
                   for marker in ("@triton.jit", "async_compile.triton(")}
        measured["markers"] = markers
    if not texts:
        failed(check, "the log holds no output code", **measured)
    elif not ours:
        failed(check, f"our parser found no {kind} kernel (kinds found: {kinds or 'none'})", **measured)
    elif not all(name.startswith(prefix) for name in ours):
        failed(check, f"{kind} kernels not named {prefix}…: {[n for n in ours if not n.startswith(prefix)][:5]}",
               **measured)
    elif device == "cuda" and not all(measured["markers"].values()):
        failed(check, f"the output code lacks {[m for m, n in measured['markers'].items() if not n]}", **measured)
    else:
        what = "Triton" if device == "cuda" else "C++ (CPU dry run: in place of Triton)"
        passed(check, f"{len(ours)} {what} kernel(s) in {len(texts)} output code file(s), e.g. {ours[0]}", **measured)


def check_profile_join(check: Check, session, device: str) -> Path | None:
    """The capture's profile of the compiled run joined to its log; the profile's path, or None."""
    from inspector.core.analysis.profile_join import source_time
    from inspector.core.readers.profiler_trace import paired_profile, read_profiler_trace

    path, why = paired_profile(session)
    if path is None:
        failed(check, f"no profile paired with the session: {why}")
        return None
    try:
        trace = read_profiler_trace(path)
        joined = source_time(session, trace)
    except Exception as error:
        failed(check, f"profile {path.name} not joined: {type(error).__name__}: {error}")
        return path
    kind = "triton" if device == "cuda" else "cpp"
    timed = [row for row in joined.kernels if row.total_us > 0]
    measured = {"profile": str(path.relative_to(session.source)) if path.is_relative_to(session.source) else str(path),
                "events": len(trace.events), "device": joined.device, "graph_calls": joined.graph_calls,
                "unmatched_calls": joined.unmatched_calls, "total_us": joined.total_us, "graph_us": joined.graph_us,
                "unattributed_us": joined.unattributed_us, "not_profiled": joined.not_profiled[:10],
                "notes": joined.notes,
                "kernels": [{"name": row.name, "kind": row.kind, "launches": row.events, "us": row.total_us}
                            for row in joined.kernels[:10]],
                "nodes": len(joined.nodes), "lines": len(joined.lines)}
    want = "GPU" if device == "cuda" else "CPU"
    if joined.device != want:
        failed(check, f"joined as a {joined.device} profile, not {want}", **measured)
    elif joined.graph_calls <= 0:
        failed(check, f"no compiled graph call of the profile tied to the log ({joined.unmatched_calls} unmatched)",
               **measured)
    elif not any(row.kind == kind for row in timed):
        failed(check, f"no {kind} kernel with measured time ({[(r.name, r.kind) for r in joined.kernels[:5]]})",
               **measured)
    elif not joined.lines:
        failed(check, "kernel time tied to no source line of the model (provenance not joined)", **measured)
    else:
        passed(check, f"{joined.graph_calls} graph call(s) joined, "
                      f"{joined.device} kernel time {joined.total_us:.0f} us over "
                      f"{len(timed)} kernel(s), {len(joined.lines)} source line(s)", **measured)
    return path


def check_cli_join(check: Check, session_dir: Path, profile: Path | None, python: str, work: Path, device: str,
                   timeout_s: float) -> None:
    log = trace_log(session_dir)
    if log is None or profile is None:
        skipped(check, "no trace log or no profile to join" + (" (see profile_join)" if profile is None else ""))
        return
    command = [python, "-c", "import sys; from inspector.cli import main; sys.exit(main(sys.argv[1:]))",
               "summary", str(log), "--profile", str(profile), "--json", "--no-cache"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
               XDG_CACHE_HOME=str(work / "xdg-cache"))
    start = time.monotonic()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, env=env, cwd=str(work))
    except subprocess.TimeoutExpired:
        failed(check, f"`compile-inspector summary LOG --profile TRACE` ran past {timeout_s:.0f} s")
        return
    wall = round(time.monotonic() - start, 2)
    if done.returncode != 0:
        failed(check, f"`compile-inspector summary` exited {done.returncode}", stderr=done.stderr[-1500:], wall_s=wall)
        return
    try:
        section = json.loads(done.stdout).get("profile_source_time") or {}
    except ValueError as error:
        failed(check, f"the summary is not JSON: {error}", stdout=done.stdout[:500], wall_s=wall)
        return
    measured = {"wall_s": wall, "device": section.get("device"), "graph_calls": section.get("graph_calls"),
                "total_us": section.get("total_us"), "kernels": len(section.get("kernels") or []),
                "lines": len(section.get("lines") or [])}
    want = "GPU" if device == "cuda" else "CPU"
    if not section:
        failed(check, "the summary has no profile_source_time section", **measured)
    elif section.get("device") != want or not section.get("graph_calls") or not section.get("kernels"):
        failed(check, f"the section joins nothing ({want} expected)", **measured)
    else:
        passed(check, f"summary LOG --profile TRACE: {section['graph_calls']} graph call(s), "
                      f"{measured['kernels']} kernel(s), "
                      f"{measured['lines']} line(s), {section['device']}", **measured)


def cudagraph_evidence(session, profile: Path | None) -> dict:
    """What the reduce-overhead run left of CUDA graphs: skip notices, torch's cudagraph spans in the
    log, its counters and cudaGraphLaunch events in its profile."""
    from inspector.core.readers.profiler_trace import read_profiler_trace

    notices = [f"{unit.compile_id}: {warning}" for unit in session.units for warning in unit.warnings
               if "cuda graph" in warning.lower() or "cudagraph" in warning.lower()]
    skip_reasons = [f"{unit.compile_id}: {unit.metrics.get('cudagraph_skip_reason')}" for unit in session.units
                    if unit.metrics.get("cudagraph_skip_reason")]
    spans: dict[str, int] = {}

    def walk(span) -> None:
        if any(marker in span.name for marker in CUDAGRAPH_SPANS):
            spans[span.name] = spans.get(span.name, 0) + 1
        for child in span.children:
            walk(child)

    for span in [span for rank in session.ranks for span in rank.spans] + [span for unit in session.units
                                                                           for span in unit.spans]:
        walk(span)
    counters = (results_of(session).get("counters") or {}).get("inductor") or {}
    launches = None
    if profile is not None:
        try:
            launches = sum(1 for event in read_profiler_trace(profile).events if CUDAGRAPH_LAUNCH in event.name)
        except (OSError, ValueError):
            launches = None
    # torch's runtime metrics record
    cudagraphify_us = {str(unit.compile_id): unit.metrics.get("runtime_cudagraphify_time_us") for unit in session.units
                       if unit.metrics.get("runtime_cudagraphify_time_us") is not None}
    return {"notices": notices, "skip_reasons": skip_reasons, "spans": spans,
            "runtime_cudagraphify_us": cudagraphify_us,
            "profile_graph_launches": launches,
            "counters": {key: value for key, value in counters.items() if "cudagraph" in key}}


def check_cudagraphs(check: Check, session, device: str) -> None:
    from inspector.core.readers.profiler_trace import paired_profile

    profile, _ = paired_profile(session)
    evidence = cudagraph_evidence(session, profile)
    if device != "cuda":
        seen = evidence["notices"] or evidence["skip_reasons"]
        counted = evidence["counters"].get("cudagraph_skips")
        skipped(check, "CUDA only: CUDA graphs need a CUDA device"
                + (f"; the reader shows torch's skip notice ({seen[0]})" if seen else
                   f"; torch counted {counted} cudagraph skip(s) and writes no notice for a CPU-only graph" if counted
                   else "; no skip notice or counter in the run"), **evidence)
        return
    problems = []
    if evidence["notices"] or evidence["skip_reasons"]:
        problems.append(f"CUDA graphs skipped: {(evidence['notices'] or evidence['skip_reasons'])[0]}")
    if evidence["counters"].get("cudagraph_skips"):
        problems.append(f"torch counted {evidence['counters']['cudagraph_skips']} cudagraph skip(s)")
    if not evidence["spans"] and not evidence["runtime_cudagraphify_us"]:
        problems.append(f"no cudagraph record in the log as our reader builds it (spans {', '.join(CUDAGRAPH_SPANS)}; "
                        f"runtime_cudagraphify_time_us)")
    if not evidence["profile_graph_launches"]:
        problems.append(f"no {CUDAGRAPH_LAUNCH} in the profile of the compiled run")
    if problems:
        failed(check, "; ".join(problems), **evidence)
    else:
        passed(check, f"CUDA graphs recorded: spans {evidence['spans']}, runtime_cudagraphify_time_us "
                      f"{evidence['runtime_cudagraphify_us']}, {evidence['profile_graph_launches']} "
                      f"{CUDAGRAPH_LAUNCH} event(s) profiled, no skip notice", **evidence)


# ---- the run ------------------------------------------------------------------------------------


def bundle(session_dir: Path, target: Path, report: Report) -> None:
    from inspector.core.readers.session_bundle import save_bundle

    try:
        path, left_out = save_bundle(session_dir, target)
        report.document["files"][target.stem] = {"bundle": path.name, "bytes": path.stat().st_size,
                                                 "left_out": left_out}
    except Exception as error:  # a report without the bundle still says what was measured
        report.document["files"][target.stem] = {"error": f"{type(error).__name__}: {error}"}


def resolve_python(python: str) -> str:
    """An absolute interpreter path: the captures run in their own folder, where a relative one fails."""
    if os.sep in python:
        return str(Path(python).absolute())
    return shutil.which(python) or python


def run(args) -> int:
    args.python = resolve_python(args.python)
    out = Path(args.out).resolve()
    mode = "cpu-dry-run" if args.cpu_dry_run else "cuda"
    report = Report(out, mode)
    from inspector.capture.launcher import probe_interpreter

    environment = probe_interpreter(args.python, PROBE_TIMEOUT_S, PROBE)
    report.document["environment"] = {**environment, "requested_python": args.python}
    if not environment.get("torch"):
        for check in report.checks.values():
            skipped(check, f"{args.python} cannot import torch: {environment.get('error')}")
        report.write(finished=True)
        print(f"gpu_check: {args.python} has no torch ({environment.get('error')}): every check SKIP")
        return 0
    if not environment.get("cuda") and not args.cpu_dry_run:
        for check in report.checks.values():
            skipped(check, f"no CUDA device: {args.python} (torch {environment['torch']}) sees none")
        report.write(finished=True)
        print(f"gpu_check: no CUDA device seen by {args.python} (torch {environment['torch']}): every check SKIP "
              f"(--cpu-dry-run runs the pipeline on CPU)")
        return 0
    device = "cpu" if args.cpu_dry_run else "cuda"
    work = Path(args.keep).resolve() if args.keep else Path(tempfile.mkdtemp(prefix="gpu-check-"))
    work.mkdir(parents=True, exist_ok=True)
    script = work / "gpu_check_model.py"
    script.write_text(MODEL, encoding="utf-8")
    try:
        return _run_checks(args, report, work, script, device)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def _run_checks(args, report: Report, work: Path, script: Path, device: str) -> int:
    checks = report.checks
    budget = args.budget
    out = report.out
    # default mode: timing, memory, kernels, profile join
    left = report.remaining(budget) - REPORT_RESERVE_S
    default_dir = work / "session_default"
    outcome = capture(args.python, script, default_dir, work / "cache_default", device, "default",
                      timeout_s=max(10.0, left * 0.6))
    report.step("capture_default", **outcome)
    session = check_capture(checks["capture"], outcome, default_dir, device, "default")
    report.write()
    if session is not None:
        for name, function in (("timing", check_timing), ("cuda_memory", check_memory), ("kernels", check_kernels)):
            guarded(checks[name], function, session, device)
            report.write()
        profile = guarded(checks["profile_join"], check_profile_join, session, device)
        report.write()
        guarded(checks["cli_profile_join"], check_cli_join, default_dir, profile, args.python, work, device,
                min(CLI_TIMEOUT_S, max(5.0, report.remaining(budget) - REPORT_RESERVE_S)))
        report.write()
    else:
        for name in ("timing", "cuda_memory", "kernels", "profile_join", "cli_profile_join"):
            if name == "cuda_memory" and device != "cuda":
                skipped(checks[name], "CUDA only: a CPU run records no CUDA memory")
            else:
                failed(checks[name], "the default-mode capture failed (see capture)")
    bundle(default_dir, out / "session_default.tcinspect", report)
    report.write()

    # reduce-overhead: CUDA graphs
    left = report.remaining(budget) - REPORT_RESERVE_S
    ro_dir = work / "session_reduce_overhead"
    if left < 15:
        failed(checks["reduce_overhead"], f"no time left for the reduce-overhead capture ({left:.0f} s of the budget)")
        if device == "cuda":
            failed(checks["cudagraphs"], "the reduce-overhead capture did not run (see reduce_overhead)")
        else:
            skipped(checks["cudagraphs"], "CUDA only: CUDA graphs need a CUDA device")
    else:
        outcome = capture(args.python, script, ro_dir, work / "cache_reduce_overhead", device, "reduce-overhead",
                          timeout_s=left)
        report.step("capture_reduce_overhead", **outcome)
        session = check_capture(checks["reduce_overhead"], outcome, ro_dir, device, "reduce-overhead")
        report.write()
        if session is not None:
            guarded(checks["cudagraphs"], check_cudagraphs, session, device)
        elif device != "cuda":
            skipped(checks["cudagraphs"], "CUDA only: CUDA graphs need a CUDA device")
        else:
            failed(checks["cudagraphs"], "the reduce-overhead capture failed (see reduce_overhead)")
        bundle(ro_dir, out / "session_reduce_overhead.tcinspect", report)
    report.write(finished=True)
    for line in report.lines():
        print(line)
    print(f"gpu_check: {len(report.document['failed'])} FAIL; report in {out / 'gpu_check.txt'}")
    return 1 if report.document["failed"] else 0


def guarded(check: Check, function, *args):
    """A check that raises is a FAIL with what it raised, not the end of the run."""
    try:
        return function(check, *args)
    except Exception as error:
        failed(check, f"the check raised {type(error).__name__}: {error}")
        return None


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="gpu_check.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench" / "out" / "gpu_check"),
                        help="where gpu_check.json, gpu_check.txt and the session bundles go (default $OUT, else "
                             "bench/out/gpu_check)")
    parser.add_argument("--python", default=sys.executable, help="interpreter with the torch to capture with "
                                                                  "(default: this one)")
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S,
                        help="seconds for the whole run, captures included (default %(default)g)")
    parser.add_argument("--cpu-dry-run", action="store_true",
                        help="no GPU: run the same pipeline on CPU (CUDA-only checks SKIP)")
    parser.add_argument("--keep", metavar="DIR", help="keep the session folders and caches in DIR (default: a "
                                                      "temporary folder, removed at the end)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    return run(parse_args(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
