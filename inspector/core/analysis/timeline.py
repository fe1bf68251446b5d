"""The compile timeline as data: one lane per compile unit, spans nested by depth inside it, with
markers for cache hits and other instants; and the same spans as a Chrome/Perfetto trace.

In a distributed run the lanes come in one group per rank, and each rank's times count from its own
first compile event: ranks start at different clock times (and the logs of one job may come from runs
days apart), so on a shared clock their compiles shrink to slivers. `wall_clock=True` keeps one clock."""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.model.pipeline import pipeline_step
from inspector.core.model.session import Session

MAX_DEPTH = 8


@dataclass(frozen=True)
class Bar:
    lane: int
    depth: int
    start_s: float  # from the first compile event of its rank (of the session on a shared clock)
    end_s: float
    name: str
    compile_id: str
    is_open: bool  # the stage never ended (the run died inside it): drawn to the end, marked
    step: str | None  # the pipeline step it belongs to


@dataclass(frozen=True)
class Timeline:
    bars: list[Bar]
    lanes: list[str]  # compile id per lane, e.g. "rank 0 [0/1]"
    depth: int
    markers: list[tuple[int, float, str]]  # lane, time, name
    origin_us: float  # the session's first compile event
    lane_ranks: tuple[int | None, ...] = ()  # the rank of each lane
    wall_clock: bool = False  # one clock for all ranks (else each rank from its own start)

    def rank_groups(self) -> list[tuple[int | None, int, int]]:
        """(rank, first lane, lanes) for each run of lanes of one rank."""
        groups: list[tuple[int | None, int, int]] = []
        for lane, rank in enumerate(self.lane_ranks):
            if groups and groups[-1][0] == rank:
                groups[-1] = (rank, groups[-1][1], groups[-1][2] + 1)
            else:
                groups.append((rank, lane, 1))
        return groups

    @property
    def end_s(self) -> float:
        return max((bar.end_s for bar in self.bars), default=0.0)


def rank_clocks(session: Session, wall_clock: bool = False) -> dict[int | None, tuple[float, float]]:
    """Per rank: (time zero, last event) in µs. Time zero is the rank's first compile event, or the
    session's on a wall clock; a stage that never ended is drawn to its rank's last event."""
    bounds: dict[int | None, tuple[float, float]] = {}
    for unit in session.units:
        for root in unit.spans:
            for span in root.walk():
                first, last = bounds.get(unit.rank, (span.start_us, span.start_us))
                bounds[unit.rank] = (min(first, span.start_us), max(last, span.end_us or span.start_us))
    if wall_clock and bounds:
        origin = min(first for first, _ in bounds.values())
        bounds = {rank: (origin, last) for rank, (_, last) in bounds.items()}
    return bounds


def build_timeline(session: Session, max_depth: int = MAX_DEPTH, wall_clock: bool = False) -> Timeline:
    units = [unit for unit in session.units if unit.spans]
    clocks = rank_clocks(session, wall_clock)
    if not clocks:
        return Timeline([], [], 0, [], 0.0, wall_clock=wall_clock)
    bars: list[Bar] = []
    lanes: list[str] = []
    markers: list[tuple[int, float, str]] = []
    many_ranks = len(session.ranks) > 1
    deepest = 0
    for unit in units:
        lane = len(lanes)
        origin, last = clocks[unit.rank]
        lanes.append((f"rank {unit.rank} " if many_ranks else "") + str(unit.compile_id))
        stack = [(root, 0) for root in reversed(unit.spans)]
        while stack:
            span, depth = stack.pop()
            if depth >= max_depth:
                continue
            deepest = max(deepest, depth)
            end = span.end_us if span.end_us is not None else last
            bars.append(Bar(lane, depth, (span.start_us - origin) / 1e6, (end - origin) / 1e6, span.name,
                            str(unit.compile_id), span.is_open, pipeline_step(span.name)))
            stack.extend((child, depth + 1) for child in reversed(span.children))
        markers += [(lane, (marker.ts_us - origin) / 1e6, marker.name) for marker in unit.markers]
    return Timeline(bars, lanes, deepest + 1, markers, min(first for first, _ in clocks.values()),
                    tuple(unit.rank for unit in units), wall_clock)


def chrome_trace(session: Session) -> dict:
    """All compile spans as complete ("X") events, one thread per compile unit: opens in Perfetto."""
    events = []
    for tid, unit in enumerate(unit for unit in session.units if unit.spans):
        events.append({"ph": "M", "name": "thread_name", "pid": unit.rank or 0, "tid": tid,
                       "args": {"name": f"{unit.compile_id} {unit.function or ''}"}})
        for root in unit.spans:
            for span in root.walk():
                end = span.end_us if span.end_us is not None else span.start_us
                events.append({"ph": "X", "name": span.name, "ts": span.start_us, "dur": end - span.start_us,
                               "pid": unit.rank or 0, "tid": tid,
                               "args": {**span.args, "open": span.is_open, "compile_id": str(unit.compile_id)}})
        for marker in unit.markers:
            events.append({"ph": "i", "s": "t", "name": marker.name, "ts": marker.ts_us, "pid": unit.rank or 0,
                           "tid": tid, "args": {**marker.args, "compile_id": str(unit.compile_id)}})
    return {"traceEvents": events, "displayTimeUnit": "ms"}
