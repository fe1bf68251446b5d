"""The ops of a capture's profile (results.json), read one way for every figure built on them:
torch's own wrappers (compiled-region markers, guard checks, runtime wrappers) left out, times per
call, shares of the same total — so a kernel's share reads the same in the code pane, the kernel plot
and the summary."""

from __future__ import annotations

import re
from dataclasses import dataclass

from inspector.core.model.records import Record
from inspector.core.model.run_results import ProfileOp, RunResults

COMPILED_REGION = "Torch-Compiled Region"
WRAPPERS = (COMPILED_REGION, "TorchDynamo", "## ", "Pregraph bytecode", "AOTDispatcher", "CompiledFunction",
            "ProfilerStep")
_CPU_KERNEL = re.compile(r"^graph_\d+_")


@dataclass(frozen=True)
class ProfileOps:
    rows: list[ProfileOp]  # op and kernel rows, most expensive first
    key: str  # the time field: self_cpu_us on CPU, self_device_us on CUDA
    runs: int  # calls profiled

    @property
    def total(self) -> float:
        return sum(row.time(self.key) for row in self.rows) or 1.0

    def per_call_us(self, row: ProfileOp) -> float:
        return row.time(self.key) / self.runs


@dataclass(frozen=True, kw_only=True)
class TopKernel(Record):
    """One of the profile's most expensive ops, as the summary lists it: the profiler's row (its name,
    and its time columns as read, in `extra`) with its share of the profiled time and its time per call."""

    name: str = ""
    share: float = 0.0  # of every op's time in the profile (torch's wrappers left out)
    time_us_per_call: float = 0.0
    time_consistent: bool = True  # the profile's times agree with the measured call (`ProfileCheck`)

    @classmethod
    def of(cls, row: ProfileOp, share: float, time_us_per_call: float, consistent: bool) -> TopKernel:
        """The row's own columns first, in the order the profile wrote them: they are the profiler's
        names (count, self_cpu_us, self_device_us, …), which no attribute names."""
        return cls.from_state({**row.get_state(), "share": share, "time_us_per_call": time_us_per_call,
                               "time_consistent": consistent})


def profile_ops(results: RunResults | None, label: str = "compiled") -> ProfileOps | None:
    """The eager or compiled profile's ops without torch's wrappers; None when not profiled."""
    profile = results.profile.get(label) if results is not None else None
    if profile is None:
        return None
    key = profile.time_key
    rows = [row for row in profile.ops if not row.name.startswith(WRAPPERS)]
    rows.sort(key=lambda row: -row.time(key))
    return ProfileOps(rows, key, profile.runs or 1)


def kernel_name(event: str) -> str:
    """A generated CPU kernel is profiled as `graph_N_<kernel>`: the kernel's name in the code."""
    return _CPU_KERNEL.sub("", event)


AGREE_BOUND = 1.5  # kernel time per call at most this many times the measured (median) call: the two agree
MIN_PROFILED_CALLS = 10


@dataclass(frozen=True)
class ProfileCheck(Record):
    """Σ per-call kernel time of the compiled profile against the measured compiled call (T_execute,
    the median). Kernels run inside the call, so they cannot take longer than it; the two are said to
    agree only within AGREE_BOUND (the profiler's own cost on each op), and the factor is always
    stated. Past it the profile saw a different machine (load, the profiler's start-up, too few calls)
    and its times are not to be read as the call's, whatever the slowest round was: a slowest round
    far above the median means the timing itself was noisy, not that the profile fits. Kernels that
    cover much less than the call are normal: the rest is overhead between kernels."""

    consistent: bool | None  # None: nothing to compare
    kernel_us_per_call: float | None
    call_us: float | None  # T_execute, the median
    slowest_call_us: float | None  # the slowest round (older captures: the 75th percentile call)
    note: str


def profile_check(results: RunResults | None, label: str = "compiled") -> ProfileCheck:
    """The check of the `label` run's profile (`compiled` or `eager`) against that run's measured call."""
    ops = profile_ops(results, label)
    measured = results.timed(label) if results is not None else None
    call_s = measured.median_s if measured is not None else None
    if ops is None or not call_s or call_s <= 0:
        return ProfileCheck(None, None, None, None, f"no {label} profile and measured call to compare")
    rounds = results.timing is not None and bool(results.timing.rounds)
    slowest = max(call_s, (measured.max_s if rounds else measured.p75_s) or call_s) * 1e6
    kernels = sum(ops.per_call_us(row) for row in ops.rows)
    call = call_s * 1e6
    caveats = []
    if results.profile[label].warmup_excluded is None:
        caveats.append("older capture: the profile includes its first call (no warm-up excluded)")
    if ops.runs < MIN_PROFILED_CALLS:
        caveats.append(f"only {ops.runs} profiled call(s)")
    what = "kernels" if label == "compiled" else "ops"  # an eager call runs ATen ops, not generated kernels
    factor = kernels / call
    figures = (f"{what} {kernels:.1f} µs per call against a measured call of {call:.1f} µs "
               f"(slowest {slowest:.1f} µs), {ops.runs} profiled calls")
    if factor > AGREE_BOUND:
        note = (f"{label.upper()} PROFILE INCONSISTENT: {figures}: it disagrees with the measured call by "
                f"{factor:.1f}× (agreement is claimed within {AGREE_BOUND}×); the profile saw a different machine than "
                "the timing (load, profiler start-up, too few calls): read its times as shares only")
        return ProfileCheck(False, kernels, call, slowest, "; ".join([note, *caveats]))
    note = (f"{label} profile times agree with the measured call within {AGREE_BOUND}× ({what} {factor:.2f}× the "
            f"call): {figures}")
    if factor < 1 / AGREE_BOUND:
        note += f"; {what} cover {factor:.0%} of the call, the rest is overhead outside them"
    return ProfileCheck(True, kernels, call, slowest, "; ".join([note, *caveats]))
