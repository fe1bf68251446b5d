"""Where a GPU run's time went, from a torch.profiler trace: time per kernel (Inductor's Triton kernels
named with their source file and grid), copies, fills and collectives apart; how long each device sat
idle between its first and last event; and per compiled region (each `Torch-Compiled Region: f/c`,
i.e. each compile unit and recompile, or `CompiledFunction[Backward]`) how often it was entered, its
CPU time and the GPU time of the kernels queued while it ran — what tlparse issue 46 asks for.

A GPU event is tied to the CPU by its `correlation` with the runtime call that queued it; the region
is the innermost one open on that thread at that moment."""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from dataclasses import dataclass, field

from inspector.core.numbers import seconds
from inspector.core.readers.profiler_trace import ProfilerTrace, TraceEvent

GPU_CATEGORIES = {"kernel": "kernels", "gpu_memcpy": "copies", "gpu_memset": "fills"}
LAUNCH_CATEGORIES = ("cuda_runtime", "cuda_driver")
REGION = re.compile(r"^(?:Torch-Compiled Region: (?P<id>\S+)|(?P<fn>CompiledFunction(?:Backward)?))$")
OUTSIDE = "outside compiled regions"
MAX_NESTING = 64  # regions looked back through for the innermost open one


@dataclass
class KernelRow:
    name: str
    kind: str  # kernels | copies | fills | collectives
    count: int = 0
    total_us: float = 0.0
    kernel_file: str | None = None  # an Inductor Triton kernel's generated module
    grid: str | None = None

    @property
    def mean_us(self) -> float:
        return self.total_us / self.count if self.count else 0.0


@dataclass
class GpuRegion:
    name: str  # "0/1" (compile unit 0/1), CompiledFunction, or OUTSIDE
    calls: int = 0
    cpu_us: float = 0.0
    gpu_us: float = 0.0
    kernels: int = 0


@dataclass
class DeviceTime:
    device: int | None
    name: str
    busy_us: float
    span_us: float

    @property
    def idle_share(self) -> float:
        return 1 - self.busy_us / self.span_us if self.span_us else 0.0


@dataclass
class GpuProfile:
    rank: int | None
    kernels: list[KernelRow]  # most time first
    by_kind: dict[str, float]  # kernels / copies / fills / collectives → µs
    regions: list[GpuRegion]  # compiled regions, most GPU time first, then what ran outside them
    devices: list[DeviceTime]
    unlinked: int  # GPU events without a runtime call to tie them to a region
    total_gpu_us: float = field(default=0.0)


def microseconds(value: float) -> str:
    """A trace's µs as people read a duration (12.3 ms, 1.76 µs)."""
    return seconds(value / 1e6)


def region_label(name: str) -> str:
    """"0/1" is a compile unit (a Torch-Compiled Region), written [0/1] as everywhere else;
    CompiledFunction[Backward] stays as named."""
    return f"compile unit [{name}]" if "/" in name else name


def gpu_profile(trace: ProfilerTrace) -> GpuProfile:
    gpu = [event for event in trace.events if event.category in GPU_CATEGORIES]
    launches = {event.args["correlation"]: event for event in trace.events
                if event.category in LAUNCH_CATEGORIES and isinstance(event.args.get("correlation"), int)}
    triton = {event.args["External id"]: event for event in trace.events
              if event.category == "cpu_op" and "kernel_hash" in event.args and "External id" in event.args}
    regions = _regions(trace)
    kernels: dict[str, KernelRow] = {}
    by_kind: dict[str, float] = defaultdict(float)
    rows = {name: GpuRegion(name, len(spans), sum(span.duration_us for span in spans))
            for name, spans in _by_name(regions).items()}
    outside = GpuRegion(OUTSIDE)
    starts = {thread: [span.start_us for span in spans] for thread, spans in regions.items()}
    unlinked = 0
    for event in gpu:
        kind = "collectives" if "nccl" in event.name.lower() else GPU_CATEGORIES[event.category]
        by_kind[kind] += event.duration_us
        row = kernels.get(event.name)
        if row is None:
            op = triton.get(event.args.get("External id"))
            row = kernels[event.name] = KernelRow(event.name, kind, kernel_file=op.args.get("kernel_file") if op
                                                  else None,
                                                  grid=op.args.get("grid") if op else None)
        row.count += 1
        row.total_us += event.duration_us
        launch = launches.get(event.args.get("correlation"))
        if launch is None:
            unlinked += 1
            continue
        region = _innermost(regions.get(launch.thread, []), starts.get(launch.thread, []), launch.start_us)
        target = rows[region.name] if region is not None else outside
        target.gpu_us += event.duration_us
        target.kernels += 1
    ordered = sorted(rows.values(), key=lambda row: -row.gpu_us) + ([outside] if outside.kernels else [])
    return GpuProfile(trace.rank, sorted(kernels.values(), key=lambda row: -row.total_us), dict(by_kind), ordered,
                      _devices(gpu, trace.devices), unlinked, sum(event.duration_us for event in gpu))


def _regions(trace: ProfilerTrace) -> dict[str, list[TraceEvent]]:
    """The compiled regions per CPU thread, by start (the reader sorts events that way)."""
    found: dict[str, list[TraceEvent]] = defaultdict(list)
    for event in trace.events:
        match = REGION.match(event.name) if event.category in ("cpu_op", "user_annotation") else None
        if match:
            name = match.group("id") or match.group("fn")
            found[event.thread].append(TraceEvent(name, event.category, event.start_us, event.duration_us,
                                                  event.thread))
    return found


def _by_name(regions: dict[str, list[TraceEvent]]) -> dict[str, list[TraceEvent]]:
    named: dict[str, list[TraceEvent]] = defaultdict(list)
    for spans in regions.values():
        for span in spans:
            named[span.name].append(span)
    return named


def _innermost(spans: list[TraceEvent], starts: list[float], at_us: float) -> TraceEvent | None:
    """The region open at `at_us` that started last (regions nest: the innermost one)."""
    index = bisect.bisect_right(starts, at_us) - 1
    for candidate in range(index, max(-1, index - MAX_NESTING), -1):
        if spans[candidate].end_us >= at_us:
            return spans[candidate]
    return None


def _devices(gpu: list[TraceEvent], names: dict) -> list[DeviceTime]:
    """Per device, the time some event ran (overlapping streams counted once) within its active span."""
    per_device: dict[int | None, list[tuple[float, float]]] = defaultdict(list)
    for event in gpu:
        per_device[event.args.get("device")].append((event.start_us, event.end_us))
    devices = []
    for device, spans in sorted(per_device.items(), key=lambda item: (item[0] is None, item[0] or 0)):
        spans.sort()
        busy, (run_start, run_end) = 0.0, spans[0]
        for start, end in spans[1:]:
            if start > run_end:
                busy += run_end - run_start
                run_start, run_end = start, end
            else:
                run_end = max(run_end, end)
        busy += run_end - run_start
        span = max(end for _, end in spans) - spans[0][0]
        devices.append(DeviceTime(device, names.get(device, ""), busy, span))
    return devices


class QueuedGpuTime:
    """The GPU time of the kernels, copies and fills a CPU span queued: each GPU event counts toward
    the span on its launch's thread that holds the launch — the runtime call of its `correlation`,
    else the CPU op of its `External id` (traces that recorded no launch calls)."""

    def __init__(self, trace: ProfilerTrace):
        launches = {event.args["correlation"]: event for event in trace.events
                    if event.category in LAUNCH_CATEGORIES and isinstance(event.args.get("correlation"), int)}
        ops = {event.args["External id"]: event for event in trace.events
               if event.category == "cpu_op" and isinstance(event.args.get("External id"), int)}
        per_thread: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.gpu_events = self.unlinked = 0
        for event in trace.events:
            if event.category not in GPU_CATEGORIES:
                continue
            self.gpu_events += 1
            launch = launches.get(event.args.get("correlation")) or ops.get(event.args.get("External id"))
            if launch is None:
                self.unlinked += 1
            else:
                per_thread[launch.thread].append((launch.start_us, event.duration_us))
        self._starts: dict[str, list[float]] = {}
        self._sums: dict[str, list[float]] = {}  # running sums of GPU time, by launch start
        for thread, queued in per_thread.items():
            queued.sort()
            self._starts[thread] = [start for start, _ in queued]
            running, sums = 0.0, [0.0]
            for _, duration in queued:
                running += duration
                sums.append(running)
            self._sums[thread] = sums

    def within(self, span: TraceEvent) -> float:
        starts = self._starts.get(span.thread)
        if not starts:
            return 0.0
        first, last = bisect.bisect_left(starts, span.start_us), bisect.bisect_right(starts, span.end_us)
        sums = self._sums[span.thread]
        return sums[last] - sums[first]
