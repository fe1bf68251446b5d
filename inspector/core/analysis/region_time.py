"""Each compiled region's share of a compiled call, from the profile's trace. Regions nest: a resumed
frame runs inside its caller's 'Torch-Compiled Region' (the caller's bytecode called it), and the eager
code between a break and the resume function runs inside the caller's region too. So a region's own
time is its span less the regions inside it, and of its own time only the compiled graphs it calls
are compiled work: the rest is eager Python and ops. Counting the union of the spans as "compiled"
would call almost every call compiled once it broke, and give absurd Amdahl ceilings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inspector.core.analysis.profile_ops import COMPILED_REGION
from inspector.core.model.read_problems import CATEGORIES, said_of
from inspector.core.model.records import Record
from inspector.core.model.session import Session
from inspector.core.readers.profiler_trace import ProfilerTrace, TraceEvent, read_profiler_trace

GRAPH_EVENT = "## Call CompiledFxGraph"
GUARD_EVENT = "TorchDynamo Cache Lookup"
RUNTIME_WRAPPERS = ("Pregraph bytecode", "AOTDispatcher", "CompiledFunction")
STEP_EVENT = "ProfilerStep#"
EVENTS_LOST = ("truncated", "damaged_gzip", "bad_json", "kept_cap")  # damage to a trace that leaves events unread


@dataclass
class RegionTime:
    """One compile unit's region, per profiled call (µs): how often it was entered and where its
    own time went."""

    compile_id: str  # "0/0", as the profiler names the region
    entries: int = 0
    span_us: float = 0.0  # inclusive: the regions nested in it too
    nested_us: float = 0.0  # in regions entered from inside this one
    graph_us: float = 0.0  # in the compiled graphs it called
    overhead_us: float = 0.0  # guard checks and torch's runtime wrappers directly inside it

    @property
    def own_us(self) -> float:
        return self.span_us - self.nested_us

    @property
    def eager_us(self) -> float:
        """Own time that is neither a compiled graph nor torch's overhead: eager code run in the region."""
        return max(0.0, self.own_us - self.graph_us - self.overhead_us)

    def per_call(self, calls: int) -> RegionRow:
        return RegionRow(self.compile_id, self.entries / calls, self.span_us / calls, self.own_us / calls,
                         self.graph_us / calls, self.overhead_us / calls, self.eager_us / calls)


@dataclass(frozen=True)
class RegionRow(Record):
    """One compiled region's time per profiled call (µs)."""

    compile_id: str
    entries_per_call: float
    span_us: float
    own_us: float
    graph_us: float
    overhead_us: float
    eager_us: float


@dataclass(frozen=True)
class RegionAccounting(Record):
    """Each compiled region of a profiled call; only `reason` where there is no accounting."""

    calls: int  # profiled calls (ProfilerStep spans)
    call_us: float  # wall time of one call: the capture's timed profiled call, else its step
    regions: tuple[RegionRow, ...]  # in the order first entered
    overhead_outside_us: float  # per call: guard checks (and wrappers) before a region is entered
    eager_outside_us: float  # per call: eager work outside every region (before the first, between frames)
    source: str  # the trace it was read from
    reason: str | None = None  # why there is no accounting (the other fields are then None)

    NESTED = {"regions": [RegionRow]}


def region_accounting(session: Session, label: str = "compiled") -> tuple[RegionAccounting | None, str]:
    """The accounting of the capture's profile trace of `label`, or None with the reason."""
    profile = session.results.profile.get(label) if session.results is not None else None
    if profile is None or not profile.trace:
        return None, "no profile trace in this session"
    folder = Path(session.extracted_to or session.source)
    try:
        trace = read_profiler_trace(folder / profile.trace, root=folder)
    except (OSError, ValueError) as error:
        return None, f"profile trace not readable: {error}"
    lost = [f"{count} {said_of(count, CATEGORIES[kind])}" for kind in EVENTS_LOST
            if (count := trace.problems.counts[kind])]
    if lost:  # the calls' count comes from results.json: shares of a part of their events would be wrong
        return None, f"profile trace not readable to its end ({'; '.join(lost)}): a call's shares need all its events"
    accounting = account(trace, profile.runs, profile.wall_s)
    if accounting is None:
        return None, "the profile trace holds no profiled calls (ProfilerStep) with compiled regions"
    return accounting, ""


def account(trace: ProfilerTrace, runs: int | None = None, wall_s: float | None = None) -> RegionAccounting | None:
    """Per profiled call, from the trace's ProfilerStep spans; a trace without them (captures from
    before the profiler's schedule) counts as `runs` calls that took `wall_s` in all. Where the capture
    timed its profiled calls (`wall_s` over as many calls as there are steps), a call is that timed
    call: a step also holds the profiler's own work between calls, which is no eager work of the
    model's, and "where a compiled call's time goes" (slowness.py) divides the same timed call."""
    regions: dict[str, RegionTime] = {}
    calls, call_us, outside = 0, 0.0, Outside()
    for events in trace.by_thread().values():
        for step, inside in _steps(events):
            calls += 1
            call_us += step.duration_us
            _account_step(step, inside, regions, outside)
    with_regions = [events for events in trace.by_thread().values()
                    if any(event.name.startswith(COMPILED_REGION) for event in events)]
    if not calls and runs and wall_s and len(with_regions) == 1:
        calls, call_us = runs, wall_s * 1e6
        _account_step(TraceEvent("calls", "", 0.0, call_us, ""), with_regions[0], regions, outside)
    elif calls and calls == runs and wall_s:
        call_us = wall_s * 1e6
        outside.eager_us = max(0.0, call_us - outside.regions_us - outside.overhead_us)
    if not calls or not regions:
        return None
    return RegionAccounting(calls, call_us / calls, tuple(region.per_call(calls) for region in regions.values()),
                            outside.overhead_us / calls, outside.eager_us / calls, str(trace.path.name))


def _steps(events: list[TraceEvent]):
    """Each ProfilerStep span of a thread with the events inside it (a thread's events are sorted
    by start, enclosing spans first)."""
    step, inside = None, []
    for event in events:
        if step is not None and event.start_us >= step.end_us:
            yield step, inside
            step, inside = None, []
        if event.name.startswith(STEP_EVENT):
            step, inside = event, []
        elif step is not None:
            inside.append(event)
    if step is not None:
        yield step, inside


@dataclass
class Outside:
    """A call's time outside every region, summed over calls."""

    overhead_us: float = 0.0
    eager_us: float = 0.0
    regions_us: float = 0.0  # spans of the regions entered from outside every region


def _account_step(step: TraceEvent, events: list[TraceEvent], regions: dict[str, RegionTime], outside: Outside) -> None:
    """Adds one call's events to `regions` and its time outside them to `outside`. Each event counts
    toward the innermost region open around it, and only the outermost of nested counted events
    counts (a graph inside a wrapper is the wrapper's)."""
    stack: list[tuple[TraceEvent, RegionTime | None, bool]] = []  # event, innermost region, counted
    counted_outside = 0.0
    regions_outside = 0.0
    for event in events:
        while stack and event.start_us >= stack[-1][0].end_us:
            stack.pop()
        region, inside_counted = _innermost(stack)
        name = event.name
        if name.startswith(COMPILED_REGION):
            own = regions.setdefault(_compile_id(name), RegionTime(_compile_id(name)))
            own.entries += 1
            own.span_us += event.duration_us
            if region is not None:
                region.nested_us += event.duration_us
            else:
                regions_outside += event.duration_us
            stack.append((event, own, False))
            continue
        counted = not inside_counted and name.startswith((GRAPH_EVENT, GUARD_EVENT, *RUNTIME_WRAPPERS))
        if counted:
            if region is None:
                counted_outside += event.duration_us
            elif name.startswith(GRAPH_EVENT):
                region.graph_us += event.duration_us
            else:
                region.overhead_us += event.duration_us
        stack.append((event, None, counted))
    outside.overhead_us += counted_outside
    outside.regions_us += regions_outside
    outside.eager_us += max(0.0, step.duration_us - regions_outside - counted_outside)


def _innermost(stack: list[tuple[TraceEvent, RegionTime | None, bool]]) -> tuple[RegionTime | None, bool]:
    """The innermost open region, and whether a counted event is open inside it."""
    counted = False
    for _, region, is_counted in reversed(stack):
        if region is not None:
            return region, counted
        counted = counted or is_counted
    return None, counted


def _compile_id(name: str) -> str:
    return name[len(COMPILED_REGION):].lstrip(": ").strip() or "?"
