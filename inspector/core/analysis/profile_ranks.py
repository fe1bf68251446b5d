"""The profiler traces of a distributed run's ranks side by side (one `torch.profiler` trace per rank,
as HTA reads a trace folder): per rank, how long it was profiled, how much of that it spent inside
collectives and how much computing, and which compiled regions it ran how often; then what differs.

A rank that computes longer than the others makes them wait for it in the next collective, so the
slow rank is the one with the most time *outside* collectives (`outliers.high_outliers`), and the
others' collective time is their wait. Where every trace holds GPU events, both come from the device
(kernels busy, NCCL kernels for collectives: on the CPU, a GPU collective only queues); else every
rank's come from its CPU calls (a gloo collective blocks its caller until every rank has joined).
A compiled region that runs on some ranks only is a recompile (or a compile) the others did not make;
a region entered a different number of times means the ranks ran different steps. Traces that name
no rank, or the same rank twice (one process's profiling steps), are listed but not compared."""

from __future__ import annotations

import re
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.analysis.gpu_profile import GPU_CATEGORIES, OUTSIDE, gpu_profile, microseconds, region_label
from inspector.core.analysis.outliers import high_outliers, rule
from inspector.core.model.read_problems import ReadProblems
from inspector.core.readers.profiler_trace import ProfilerTrace, RankTraces, TraceEvent

# Collective calls as torch.profiler names them: c10d ops, the backends' record_function scopes, the
# comms record torch adds, and NCCL kernels on the device.
COLLECTIVE = re.compile(r"^(?:c10d::|_?c10d_functional::|gloo:|nccl:|record_param_comms$)|nccl", re.IGNORECASE)
SLOW_MIN_SHARE = 0.5
SLOW_FLOOR_US = 1000.0  # 1 ms: below it, a difference between ranks is scheduling noise
SLOW_RULE = rule(SLOW_MIN_SHARE, "1 ms")


@dataclass(frozen=True)
class Times:
    profiled_us: float  # first to last event
    busy_us: float  # time some event ran (on the CPU: the profiled span)
    collective_us: float  # time inside collectives, overlaps counted once

    @property
    def compute_us(self) -> float:
        """Busy time outside collectives: the work that makes the other ranks wait."""
        return max(0.0, self.busy_us - self.collective_us)


@dataclass(frozen=True)
class RankRun:
    """One rank's profiled run, reduced to what is compared (its trace is let go)."""

    rank: int | None
    source: str
    cpu: Times
    gpu: Times | None  # None: the trace holds no GPU event
    regions: dict[str, tuple[int, float]]  # compiled region → (calls, CPU µs)
    kernels: frozenset[str] = frozenset()  # GPU kernels that ran

    @property
    def name(self) -> str:
        """"rank 2", or the file's name for a trace that names no rank."""
        return f"rank {self.rank}" if self.rank is not None else Path(self.source).name


@dataclass(frozen=True)
class RankDifference:
    kind: str  # slow_rank | region_on_some_ranks | region_calls | kernel_on_some_ranks
    ranks: tuple  # the ranks it names
    text: str


@dataclass(frozen=True)
class ProfileRanks:
    source: str
    runs: list[RankRun]  # by rank
    on_gpu: bool  # every trace holds GPU events: the device's times are compared, else the CPU calls'
    differences: list[RankDifference] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)  # a trace that could not be read → why
    not_compared: str = ""  # why the traces are not compared as ranks ('' when they are)
    problems: ReadProblems = field(default_factory=ReadProblems)  # damage inside the traces read, examples by file
    unreadable_events: int = 0  # events of the traces read that were no readable span

    def times(self, run: RankRun) -> Times:
        return _times(run, self.on_gpu)


def _times(run: RankRun, on_gpu: bool) -> Times:
    """The device's times where every rank's are compared on the device, else the CPU calls'."""
    return run.gpu if on_gpu and run.gpu is not None else run.cpu


def compare_profiles(traces: RankTraces) -> ProfileRanks:
    runs: list[RankRun] = []
    problems, unreadable_events = ReadProblems(), 0
    for trace in traces.read():  # one trace held at a time
        problems.merge(trace.problems)
        unreadable_events += trace.unreadable
        if trace.events:
            runs.append(rank_run(trace))
        else:
            damage = "; ".join(trace.problems.describe())
            traces.unreadable[trace.path.name] = "holds no events" + (f" ({damage})" if damage else "")
    return compare_runs(str(traces.folder), runs, dict(traces.unreadable), problems, unreadable_events)


def compare_runs(source: str, runs: list[RankRun], unreadable: dict[str, str] | None = None,
                 problems: ReadProblems | None = None, unreadable_events: int = 0) -> ProfileRanks:
    """The ranks' runs compared: in time linear in ranks × regions and kernels (grouped, never rank
    against rank)."""
    runs = sorted(runs, key=lambda run: (run.rank is None, run.rank or 0, run.source))
    on_gpu = bool(runs) and all(run.gpu is not None for run in runs)
    why = _not_ranks(runs)
    differences = [] if why else (_slow_ranks(runs, on_gpu) + _regions_that_differ(runs)
                                  + (_kernels_that_differ(runs) if on_gpu else []))
    return ProfileRanks(source, runs, on_gpu, differences, unreadable or {}, why, problems or ReadProblems(),
                        unreadable_events)


def _not_ranks(runs: list[RankRun]) -> str:
    """Why these traces are not one run's ranks: traces that name the same rank (a rank's profiling
    steps, as `tensorboard_trace_handler` writes them into one folder) or none."""
    if len(runs) < 2:
        return "fewer than two traces could be read"
    counts = Counter(run.rank for run in runs)
    if None in counts:
        return (f"{counts[None]} trace(s) name no rank (no distributedInfo, no rank in the file name): "
                "steps of one process are not ranks to compare")
    repeated = sorted(rank for rank, count in counts.items() if count > 1)
    if repeated:
        return (f"rank(s) {', '.join(map(str, repeated))} appear in more than one trace: a rank's profiling steps "
                "are not ranks to compare (open each trace on its own)")
    return ""


def rank_run(trace: ProfilerTrace) -> RankRun:
    gpu = [event for event in trace.events if event.category in GPU_CATEGORIES]
    regions = {row.name: (row.calls, row.cpu_us) for row in gpu_profile(trace).regions if row.name != OUTSIDE}
    span = _span(trace.events)
    cpu = Times(span, span, _covered([event for event in trace.events if COLLECTIVE.search(event.name)]))
    device = Times(_span(gpu), _covered(gpu), _covered([event for event in gpu if COLLECTIVE.search(event.name)])) \
        if gpu else None
    return RankRun(trace.rank, str(trace.path), cpu, device, regions,
                   frozenset(event.name for event in gpu if event.category == "kernel"))


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


def _names(runs: Iterable[RankRun]) -> str:
    """"rank 2" or "ranks 0-3, 7, 8" (ranks are compared only where every trace names its own): runs of
    three or more consecutive ranks written as ranges, so a thousand ranks read as a few."""
    runs = list(runs)
    if len(runs) == 1:
        return runs[0].name
    ranks, spans = sorted(run.rank for run in runs), []
    for rank in ranks:
        if spans and rank == spans[-1][1] + 1:
            spans[-1][1] = rank
        else:
            spans.append([rank, rank])
    return "ranks " + ", ".join(f"{first}-{last}" if last > first + 1 else ", ".join(map(str, range(first, last + 1)))
                                for first, last in spans)


def _split(runs: list[RankRun], having: list[RankRun]) -> list[RankRun]:
    """The runs not in `having` (a sub-list of `runs`), in one pass."""
    held = {id(run) for run in having}
    return [run for run in runs if id(run) not in held]


def _slow_ranks(runs: list[RankRun], on_gpu: bool) -> list[RankDifference]:
    times = [_times(run, on_gpu) for run in runs]
    found = high_outliers({index: each.compute_us for index, each in enumerate(times)}, SLOW_MIN_SHARE, SLOW_FLOOR_US)
    if found is None or not found.keys:
        return []
    slow = set(found.keys)
    waiting = [times[index] for index in range(len(runs)) if index not in slow]
    wait = statistics.median(each.collective_us for each in waiting)
    share = statistics.median(each.collective_us / each.busy_us if each.busy_us else 0.0 for each in waiting)
    where = "on the device" if on_gpu else "on the CPU"
    return [RankDifference("slow_rank", (runs[index].rank,), (
        f"{runs[index].name} is the slow rank: {microseconds(times[index].compute_us)} busy outside collectives "
        f"{where}, against a median of {microseconds(found.median)} ({SLOW_RULE}); the other ranks waited for it in "
        f"collectives: {microseconds(wait)} each (median), {share:.0%} of their time. Look at what "
        f"{runs[index].name} does between collectives that the others do not (its inputs, its data loading, a "
        f"recompile)")) for index in found.keys]


def _regions_that_differ(runs: list[RankRun]) -> list[RankDifference]:
    """Each region every rank did not run, or ran a different number of times: one pass over every
    rank's regions groups them by region, so ranks × regions is the cost, never ranks² per region."""
    differences = []
    by_region: dict[str, list[RankRun]] = {}
    for run in runs:
        for name in run.regions:
            by_region.setdefault(name, []).append(run)
    for name in sorted(by_region):
        having = by_region[name]
        label = region_label(name)
        if len(having) < len(runs):
            differences.append(RankDifference("region_on_some_ranks", tuple(run.rank for run in having), (
                f"{label} ran on {_names(having)} only, not on {_names(_split(runs, having))}: "
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
    by_kernel: dict[str, list[RankRun]] = {}
    for run in runs:
        for name in run.kernels:
            by_kernel.setdefault(name, []).append(run)
    return [RankDifference("kernel_on_some_ranks", tuple(run.rank for run in having),
                           f"kernel {name} ran on {_names(having)} only")
            for name, having in sorted(by_kernel.items()) if len(having) < len(runs)]
