"""The profiler traces of a distributed run's ranks side by side (one `torch.profiler` trace per rank,
as HTA reads a trace folder): per rank, how long it was profiled, how much of that it spent inside
collectives and how much computing, and which compiled regions it ran how often; then what differs.

A rank that computes longer than the others makes them wait for it in the next collective, so the
slow rank is the one with the most time *outside* collectives (`outliers.high_outliers`), and the
others' collective time is their wait. Where the traces hold GPU events, both come from the device
(kernels busy, NCCL kernels for collectives: on the CPU, a GPU collective only queues); a CPU run's
come from the CPU calls (a gloo collective blocks its caller until every rank has joined).
A compiled region that runs on some ranks only is a recompile (or a compile) the others did not make;
a region entered a different number of times means the ranks ran different steps."""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field

from inspector.core.analysis.gpu_profile import GPU_CATEGORIES, OUTSIDE, gpu_profile
from inspector.core.analysis.outliers import high_outliers, rule
from inspector.core.numbers import seconds
from inspector.core.readers.profiler_trace import ProfilerTrace, RankTraces, TraceEvent

# Collective calls as torch.profiler names them: c10d ops, the backends' record_function scopes, the
# comms record torch adds, and NCCL kernels on the device.
COLLECTIVE = re.compile(r"^(?:c10d::|_?c10d_functional::|gloo:|nccl:|record_param_comms$)|nccl", re.IGNORECASE)
SLOW_MIN_SHARE = 0.5
SLOW_FLOOR_US = 1000.0  # 1 ms: below it, a difference between ranks is scheduling noise
SLOW_RULE = rule(SLOW_MIN_SHARE, "1 ms")


@dataclass(frozen=True)
class RankRun:
    """One rank's profiled run."""

    rank: int | None
    source: str
    on_gpu: bool  # figures from the device's events (else from the CPU's)
    profiled_us: float  # first to last event (on the GPU: of the device's events)
    busy_us: float  # time some event ran (on the CPU: the profiled span)
    collective_us: float  # time inside collectives, overlaps counted once
    regions: dict[str, tuple[int, float]]  # compiled region → (calls, CPU µs)
    kernels: frozenset[str] = frozenset()  # GPU kernels that ran

    @property
    def compute_us(self) -> float:
        """Busy time outside collectives: the work that makes the other ranks wait."""
        return max(0.0, self.busy_us - self.collective_us)


@dataclass(frozen=True)
class RankDifference:
    kind: str  # slow_rank | region_on_some_ranks | region_calls | kernel_on_some_ranks
    ranks: tuple  # the ranks it names
    text: str


@dataclass(frozen=True)
class ProfileRanks:
    source: str
    runs: list[RankRun]  # by rank
    differences: list[RankDifference] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)  # a trace that could not be read → why


def compare_profiles(traces: RankTraces) -> ProfileRanks:
    runs = sorted((rank_run(trace) for trace in traces.traces),
                  key=lambda run: (run.rank is None, run.rank or 0, run.source))
    return ProfileRanks(str(traces.folder), runs,
                        _slow_ranks(runs) + _regions_that_differ(runs) + _kernels_that_differ(runs), traces.unreadable)


def rank_run(trace: ProfilerTrace) -> RankRun:
    gpu = [event for event in trace.events if event.category in GPU_CATEGORIES]
    regions = {row.name: (row.calls, row.cpu_us) for row in gpu_profile(trace).regions if row.name != OUTSIDE}
    if gpu:
        collective = [event for event in gpu if COLLECTIVE.search(event.name)]
        return RankRun(trace.rank, str(trace.path), True, _span(gpu), _covered(gpu), _covered(collective), regions,
                       frozenset(event.name for event in gpu if event.category == "kernel"))
    collective = [event for event in trace.events if COLLECTIVE.search(event.name)]
    span = _span(trace.events)
    return RankRun(trace.rank, str(trace.path), False, span, span, _covered(collective), regions)


def _span(events: list[TraceEvent]) -> float:
    return max((event.end_us for event in events), default=0.0) - min((event.start_us for event in events), default=0.0)


def _covered(events: list[TraceEvent]) -> float:
    """The time at least one of `events` ran: nested and overlapping ones counted once."""
    covered, end = 0.0, float("-inf")
    for event in sorted(events, key=lambda event: event.start_us):
        if event.end_us <= end:
            continue
        covered += event.end_us - max(event.start_us, end)
        end = event.end_us
    return covered


def _name(run: RankRun) -> str:
    return f"rank {run.rank}" if run.rank is not None else run.source


def _names(runs: Iterable[RankRun]) -> str:
    runs = list(runs)
    numbered = [run.rank for run in runs if run.rank is not None]
    if len(numbered) == len(runs):
        return ("rank " if len(runs) == 1 else "ranks ") + ", ".join(str(rank) for rank in numbered)
    return ", ".join(_name(run) for run in runs)


def _ms(us: float) -> str:
    return seconds(us / 1e6)


def _slow_ranks(runs: list[RankRun]) -> list[RankDifference]:
    found = high_outliers({index: run.compute_us for index, run in enumerate(runs)}, SLOW_MIN_SHARE, SLOW_FLOOR_US)
    if found is None or not found.keys:
        return []
    slow = [runs[index] for index in found.keys]
    waiting = [run for index, run in enumerate(runs) if index not in found.keys]
    wait = statistics.median(run.collective_us for run in waiting)
    share = statistics.median(run.collective_us / run.busy_us if run.busy_us else 0.0 for run in waiting)
    where = "on the device" if runs[0].on_gpu else "on the CPU"
    differences = []
    for run in slow:
        differences.append(RankDifference("slow_rank", (run.rank,), (
            f"{_name(run)} is the slow rank: {_ms(run.compute_us)} busy outside collectives {where}, against a "
            f"median of {_ms(found.median)} ({SLOW_RULE}); the other ranks waited for it in collectives: "
            f"{_ms(wait)} each (median), {share:.0%} of their time. "
            f"Look at what {_name(run)} does between collectives that the others do not (its inputs, its data "
            f"loading, a recompile)")))
    return differences


def _regions_that_differ(runs: list[RankRun]) -> list[RankDifference]:
    differences = []
    every = sorted({name for run in runs for name in run.regions})
    for name in every:
        having = [run for run in runs if name in run.regions]
        label = f"compile unit [{name}]" if "/" in name else name
        if len(having) < len(runs):
            differences.append(RankDifference("region_on_some_ranks", tuple(run.rank for run in having), (
                f"{label} ran on {_names(having)} only, not on {_names(r for r in runs if r not in having)}: "
                f"a compile the other ranks did not make (a recompile on inputs only these ranks saw)")))
            continue
        calls: dict[int, list[RankRun]] = {}
        for run in runs:
            calls.setdefault(run.regions[name][0], []).append(run)
        if len(calls) > 1:
            differences.append(RankDifference("region_calls", tuple(run.rank for run in runs), (
                f"{label} was entered a different number of times: "
                + "; ".join(f"{count}× on {_names(group)}" for count, group in sorted(calls.items(), reverse=True)))))
    return differences


def _kernels_that_differ(runs: list[RankRun]) -> list[RankDifference]:
    if not all(run.on_gpu for run in runs):
        return []
    differences = []
    for name in sorted({kernel for run in runs for kernel in run.kernels}):
        having = [run for run in runs if name in run.kernels]
        if len(having) < len(runs):
            differences.append(RankDifference("kernel_on_some_ranks", tuple(run.rank for run in having),
                                              f"kernel {name} ran on {_names(having)} only"))
    return differences
