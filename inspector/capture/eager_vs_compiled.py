"""Eager against compiled for an entry-point script (one defining `inspector_model()`), inside the
user's Python: interleaved timing rounds, correctness against eager, memory per phase, profiles, and
what else the machine was doing meanwhile. Apart from the runner, which only starts the script and
reports, because this is the measurement protocol docs/measurement.md defines, figure by figure.
Standard library and torch only (torch is handed in); loaded by file path by runner.py, as options.py is."""

from __future__ import annotations

import os
import platform
import resource
import statistics
import time
from pathlib import Path

RTOL, ATOL = 1e-4, 1e-5
PROFILE_WARMUP = 1
PROFILE_CALLS = (10, 50)  # fewest and most profiled calls (the Chrome trace grows with each)
PROFILE_BUDGET_S = 0.2  # profiled time aimed for, between those bounds
TOP_KERNELS = 60


class Measurer:
    """Eager against compiled for an entry-point script: times, correctness, memory, profiles. It
    reports through the runner's `progress` (events) and `results` (results.json)."""

    def __init__(self, torch, args, session: Path, progress, results):
        self.torch, self.args, self.session = torch, args, session
        self.progress, self.results = progress, results
        self.cuda = args.device == "cuda"

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize()

    def to_device(self, value):
        torch = self.torch
        if isinstance(value, torch.Tensor) or isinstance(value, torch.nn.Module):
            return value.to(self.args.device)
        if isinstance(value, (list, tuple)):
            return type(value)(self.to_device(item) for item in value)
        if isinstance(value, dict):
            return {key: self.to_device(item) for key, item in value.items()}
        return value

    def warm(self, fn, inputs, calls: int):
        output = None
        for _ in range(calls):
            output = fn(*inputs)
        self.sync()
        return output

    def round_time(self, fn, inputs) -> tuple[float, int]:
        """(seconds per call, calls) of one round: as many calls as fit the round's time budget.
        On CPU torch.utils.benchmark's Timer picks the block size and runs with the torch threads the
        user set (its default would be 1); on CUDA, CUDA events around the same calls, synchronised."""
        budget = self.args.round_time
        if self.cuda:
            return cuda_round(self.torch, fn, inputs, budget)
        from torch.utils.benchmark import Timer

        timer = Timer("fn(*inputs)", globals={"fn": fn, "inputs": inputs}, num_threads=self.torch.get_num_threads())
        measured = timer.blocked_autorange(min_run_time=budget)
        return measured.median, len(measured.times) * measured.number_per_run

    def interleaved(self, eager, compiled, inputs) -> list[dict]:
        """Eager and compiled in alternating rounds (the order swapped every round: eager, compiled,
        compiled, eager, …) so both see the same machine; a burst of other work hits both."""
        rounds = []
        for index in range(max(1, self.args.runs)):
            order = (("eager", eager), ("compiled", compiled))
            row = {"order": "eager first" if index % 2 == 0 else "compiled first"}
            for label, fn in order if index % 2 == 0 else reversed(order):
                row[f"{label}_s"], row[f"{label}_calls"] = self.round_time(fn, inputs)
            rounds.append(row)
            self.progress.emit("round", index=index, eager_s=row["eager_s"], compiled_s=row["compiled_s"])
        return rounds

    def memory_phase_start(self) -> dict:
        """Start one phase's memory figure: the peaks reset so the phase inherits no earlier one's
        (RSS high-water via /proc/self/clear_refs, CUDA peak stats); what is held now, to compare."""
        start = {"cpu_rss_start_mb": rss_mb("VmRSS")}
        if self.cuda:
            self.sync()
            self.torch.cuda.reset_peak_memory_stats()
            start["cuda_allocated_start_mb"] = self.torch.cuda.memory_allocated() / 2**20
        if reset_rss_peak():
            self.results.update(memory_method=MEMORY_ISOLATED + (MEMORY_CUDA if self.cuda else ""))
        else:  # the kernel refused: the running peak, which a later phase can only equal or exceed
            self.results.update(memory_method=MEMORY_RUNNING + (MEMORY_CUDA if self.cuda else ""))
        return start

    def memory_phase_end(self, start: dict) -> dict:
        """The phase's peak: RSS high-water since its start, and CUDA's peak allocated since its start."""
        self.sync()
        usage = {"cpu_rss_high_water_mb": rss_mb("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                 **start}
        if self.cuda:
            usage["cuda_max_allocated_mb"] = self.torch.cuda.max_memory_allocated() / 2**20
        return {key: value for key, value in usage.items() if value is not None}

    def run(self, module: dict) -> None:
        torch, args = self.torch, self.args
        from torch._dynamo.utils import calculate_time_spent, counters

        model, example = module["inspector_model"]()
        model, example = self.to_device(model), tuple(self.to_device(example))
        more = [tuple(self.to_device(inputs)) for inputs in module.get("inspector_inputs", lambda: [])()]
        self.results.update(threads=torch.get_num_threads(), runs=args.runs, warmup=args.warmup,
                            tolerance={"rtol": RTOL, "atol": ATOL}, grad_mode="no_grad")
        with torch.no_grad():
            self.progress.phase("baseline", "start")
            memory = self.memory_phase_start()
            eager_out = self.warm(model, example, max(1, args.warmup))
            self.results.update(memory_eager=self.memory_phase_end(memory))
            self.progress.phase("baseline", "end")

            if args.profile and not self.cuda:
                torch._inductor.config.cpp.enable_kernel_profile = True  # C++ kernels show in the profile
            compiled = torch.compile(model, **compile_kwargs(args))
            self.progress.phase("compile", "start")
            before = calculate_time_spent()
            memory = self.memory_phase_start()
            start = time.perf_counter()
            first_out = compiled(*example)
            self.sync()
            first_call = time.perf_counter() - start
            self.results.update(memory_compile=self.memory_phase_end(memory))
            phases = {key: value - before.get(key, 0.0) for key, value in calculate_time_spent().items()}
            t_compile = phases.get("entire_frame_compile")
            self.results.update(t_first_call_s=first_call, t_compile_s=t_compile, compile_phases_s=phases)
            self.progress.phase("compile", "end", seconds=first_call)

            self.progress.phase("inputs", "start", count=len(more))
            checks = [compare(torch, eager_out, first_out, "example")]
            for index, inputs in enumerate(more):
                checks.append(compare(torch, model(*inputs), compiled(*inputs), f"inputs[{index}]"))
            self.results.update(correctness=checks, allclose=all(check["allclose"] for check in checks))
            self.progress.phase("inputs", "end")

            self.progress.phase("benchmark", "start")
            memory = self.memory_phase_start()
            self.warm(compiled, example, max(1, args.warmup))
            self.results.update(memory_compiled=self.memory_phase_end(memory))
            watch = MachineWatch(torch)
            rounds = self.interleaved(model, compiled, example)
            eager = spread([row["eager_s"] for row in rounds])
            steady = spread([row["compiled_s"] for row in rounds])
            self.results.update(eager=eager, compiled=steady, timing={
                "method": "interleaved rounds"
                + (", CUDA events" if self.cuda else ", torch.utils.benchmark.Timer.blocked_autorange"),
                "round_budget_s": args.round_time, "rounds": rounds, "environment": watch.finish()})
            self.progress.phase("benchmark", "end", median_s=steady["median_s"])

            if args.profile:
                self.progress.phase("profile", "start")
                calls = profile_calls(steady["median_s"])
                profiles = {label: self.profile(fn, example, label, calls)
                            for label, fn in (("eager", model), ("compiled", compiled))}
                self.results.update(profile=profiles)
                self.progress.phase("profile", "end")
        self.results.update(counters={group: dict(values) for group, values in counters.items()})

    def profile(self, fn, inputs, label: str, calls: int) -> dict:
        """`calls` profiled calls after one profiled warm-up call that the schedule discards (the
        profiler's own start-up lands there), so per-call times divide by calls that were measured."""
        from torch.profiler import ProfilerActivity, profile, schedule

        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.cuda else [])
        wall = 0.0
        steps = schedule(wait=0, warmup=PROFILE_WARMUP, active=calls, repeat=1)
        with profile(activities=activities, schedule=steps) as prof:
            for step in range(PROFILE_WARMUP + calls):
                start = time.perf_counter()
                fn(*inputs)
                self.sync()
                if step >= PROFILE_WARMUP:
                    wall += time.perf_counter() - start
                prof.step()
        folder = self.session / "profile"
        folder.mkdir(exist_ok=True)
        prof.export_chrome_trace(str(folder / f"{label}.json"))
        rows = []
        for event in prof.key_averages():
            device_us = getattr(event, "self_device_time_total", None)
            if device_us is None:
                device_us = getattr(event, "self_cuda_time_total", 0)
            rows.append({"name": event.key, "count": event.count, "self_cpu_us": event.self_cpu_time_total,
                         "cpu_total_us": event.cpu_time_total, "self_device_us": device_us})
        key = "self_device_us" if self.cuda else "self_cpu_us"
        rows.sort(key=lambda row: -row[key])
        return {"trace": f"profile/{label}.json", "runs": calls, "warmup_excluded": PROFILE_WARMUP, "wall_s": wall,
                "time_key": key, "ops": rows[:TOP_KERNELS]}


MEMORY_ISOLATED = ("peak per phase: the process's RSS high-water mark reset at each phase's start "
                   "(/proc/self/clear_refs)")
MEMORY_RUNNING = ("the process's running RSS high-water mark (could not be reset here): a later phase includes "
                  "every earlier phase's peak")
MEMORY_CUDA = "; CUDA: peak allocated, its statistics reset at each phase's start"


def reset_rss_peak() -> bool:
    """Reset this process's RSS high-water mark (VmHWM) to what it holds now: Linux, writing 5 to
    /proc/self/clear_refs. False where that is refused or absent."""
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
    except OSError:
        return False
    return rss_mb("VmHWM") is not None


def rss_mb(field: str) -> float | None:
    """A memory line of /proc/self/status (VmRSS, VmHWM) in MB; None without /proc."""
    status = _read("/proc/self/status") or ""
    for line in status.splitlines():
        if line.startswith(field + ":"):
            parts = line.split()
            if len(parts) >= 2 and parts[1].isdigit():
                return int(parts[1]) / 1024
    return None


def cuda_round(torch, fn, inputs, budget: float) -> tuple[float, int]:
    """One GPU round: blocks of calls between CUDA events, doubling the block until a block fills
    a tenth of the budget, then blocks until the budget is spent; the median block's time per call.
    (Written for CUDA machines; the CPU path above is the one tested here.)"""
    block, times, spent = 1, [], 0.0
    while spent < budget:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(block):
            fn(*inputs)
        end.record()
        end.synchronize()
        seconds = start.elapsed_time(end) / 1e3
        spent += seconds
        if seconds < budget / 10 and not times:
            block *= 2
            continue
        times.append((seconds / block, block))
    if not times:  # the budget ran out while sizing the block: the last block is the round
        times.append((seconds / block, block))
    per_call = statistics.median(t for t, _ in times)
    return per_call, sum(calls for _, calls in times)


def profile_calls(call_s: float) -> int:
    """Enough calls for the profile to mean something, bounded so a slow model is not profiled for long."""
    low, high = PROFILE_CALLS
    return int(min(high, max(low, PROFILE_BUDGET_S / call_s))) if call_s > 0 else low


class MachineWatch:
    """What else the machine was doing while we timed: load average before and after, CPU time all
    processes used (/proc/stat, Linux) less our own, torch threads against cores, the thread
    variables, CPU model and frequency governor where readable."""

    THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_PROC_BIND",
                        "OMP_PLACES", "KMP_AFFINITY", "GOMP_CPU_AFFINITY", "TORCHINDUCTOR_COMPILE_THREADS")

    def __init__(self, torch):
        self.torch = torch
        self.load_before = _load_average()
        self.start = time.perf_counter(), _busy_cpu_seconds(), _own_cpu_seconds()

    def finish(self) -> dict:
        wall0, busy0, own0 = self.start
        wall, busy, own = time.perf_counter() - wall0, _busy_cpu_seconds(), _own_cpu_seconds()
        measurable = busy is not None and busy0 is not None and wall > 0
        others = max(0.0, (busy - busy0) - (own - own0)) / wall if measurable else None
        try:
            cores = len(os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cores = os.cpu_count()
        return {"cores": cores, "cpu_count": os.cpu_count(), "torch_threads": self.torch.get_num_threads(),
                "torch_interop_threads": self.torch.get_num_interop_threads(),
                "load_before": self.load_before, "load_during": _load_average(), "benchmark_wall_s": wall,
                "others_cpu_cores": others, "own_cpu_cores": (own - own0) / wall if wall > 0 else None,
                "thread_variables": {key: os.environ[key] for key in self.THREAD_VARIABLES if key in os.environ},
                "cpu_model": _cpu_model(), "governor": _read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")}


def _load_average() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def _busy_cpu_seconds() -> float | None:
    """Non-idle CPU seconds of all processes since boot (first line of /proc/stat), or None."""
    line = (_read("/proc/stat") or "").split("\n")[0].split()
    if not line or line[0] != "cpu":
        return None
    ticks = [int(value) for value in line[1:9]]
    idle = ticks[3] + ticks[4]  # idle + iowait
    return (sum(ticks) - idle) / os.sysconf("SC_CLK_TCK")


def _own_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def _cpu_model() -> str | None:
    for line in (_read("/proc/cpuinfo") or "").split("\n"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or None


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None


def spread(times: list[float]) -> dict:
    ordered = sorted(times)
    quarter = max(0, len(ordered) // 4)
    return {"n": len(times), "median_s": statistics.median(times), "min_s": ordered[0], "max_s": ordered[-1],
            "mean_s": statistics.fmean(times), "stdev_s": statistics.stdev(times) if len(times) > 1 else 0.0,
            "p25_s": ordered[quarter], "p75_s": ordered[-1 - quarter]}


def compare(torch, expected, actual, label: str) -> dict:
    pairs = list(zip(_leaves(torch, expected), _leaves(torch, actual)))
    worst_abs = worst_rel = 0.0
    close = len(_leaves(torch, expected)) == len(_leaves(torch, actual))
    for want, got in pairs:
        want, got = want.detach().float(), got.detach().float()
        if want.shape != got.shape:
            close = False
            continue
        diff = (want - got).abs()
        if diff.numel():
            worst_abs = max(worst_abs, diff.max().item())
            worst_rel = max(worst_rel, (diff / want.abs().clamp_min(1e-12)).max().item())
        close = close and torch.allclose(want, got, rtol=RTOL, atol=ATOL)
    return {"inputs": label, "outputs": len(pairs), "max_abs_error": worst_abs, "max_rel_error": worst_rel,
            "allclose": bool(close)}


def _leaves(torch, value) -> list:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(torch, item)]
    if isinstance(value, dict):
        return [leaf for key in sorted(value, key=str) for leaf in _leaves(torch, value[key])]
    return []


def compile_kwargs(args) -> dict:
    kwargs = {"backend": args.backend, "fullgraph": args.fullgraph,
              "dynamic": {"auto": None, "true": True, "false": False}[args.dynamic]}
    if args.mode != "default":
        kwargs["mode"] = args.mode
    return kwargs
