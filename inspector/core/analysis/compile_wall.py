"""Compile time in wall-clock terms: each instant of a compile given to exactly one stage, so the
stages' own times add up to the compile's wall time, and the work that ran beside it (compile
workers building C++/Triton code while the main thread waits) shown as concurrency, never summed in.

Why not own time = a span minus its children: torch writes every stage of one process with pid 0 and
tid 0, so the spans of compile-worker threads interleave with the main thread's, get nested into it
by time, and are closed by name; summing them counted parallel work several times (own times that add
up to more than the compile took). Which stages ran on a worker is `model/compile_threads.py`'s rule,
the one the live stage strip applies too."""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass, field

from inspector.core.model.compile_spans import Span
from inspector.core.model.compile_threads import LooseStages, names_compile, step_of
from inspector.core.model.records import Record

# The stages whose durations torch adds into compilation_metrics' compile time (T_compile): a frame's
# compile, all attempts (`entire_frame_compile_time_s`), and its lazy backward graph's
# (`backward_cumulative_compile_time_us`). The compiling thread also spends time in stages outside
# them: the `dynamo` stage around a frame's compile, autotuning at the first call.
TORCH_TIMED = ("entire_frame_compile", "entire_backward_compile")


@dataclass(frozen=True)
class Concurrency(Record):
    """The stages of one name that ran beside the compile, on other threads or processes."""

    count: int
    busy_s: float  # Σ of their durations: CPU-ish work, more than the wall time when they overlap
    wall_s: float  # time during which at least one of them ran
    peak: int  # most of them running at once


@dataclass
class WallBreakdown:
    """Where the compile's wall time went. Σ own_s == wall_s; own_s[stage] ≤ inclusive_s[stage];
    wall_s − Σ outside_s == Σ durations of the TORCH_TIMED stages."""

    wall_s: float = 0.0  # time inside at least one stage of the compiling thread, ranks summed
    own_s: dict[str, float] = field(default_factory=dict)  # stage → time it was the innermost open stage
    inclusive_s: dict[str, float] = field(default_factory=dict)  # stage → time it was open at all
    per_step_s: dict[str, float] = field(default_factory=dict)  # pipeline step → own time of its stages
    # stage → its own time while no stage of TORCH_TIMED was open: the part of wall_s that T_compile lacks
    outside_s: dict[str, float] = field(default_factory=dict)
    concurrent: dict[str, Concurrency] = field(default_factory=dict)  # stage → work beside the compile


def worker_spans(spans: list[Span], until: float) -> set[int]:
    """The places in `spans` of the stages that ran on another thread (`LooseStages` decides, for
    the stages naming no compile id begun while a compile was open). A stage with no compile id that
    the compiling thread ran itself, alone, stays its own."""
    if all(names_compile(span.compile_id) for span in spans):
        return set()
    compiling = _merged([(span.start_us, _end(span, until)) for span in spans if names_compile(span.compile_id)])
    # in time order; at one instant a loose stage's end comes first, then the compiling thread's edges,
    # then a loose stage's begin (touching is not overlapping), and a stage of no length ends after it begins
    sweep = [(edge, 1, -1) for span in spans if names_compile(span.compile_id)
             for edge in (span.start_us, _end(span, until))]
    for place, span in enumerate(spans):
        if not names_compile(span.compile_id) and _inside(span.start_us, compiling):
            end = _end(span, until)
            sweep += [(span.start_us, 2, place), (end, 0 if end > span.start_us else 3, place)]
    loose = LooseStages()
    workers: set[int] = set()
    for _, kind, place in sorted(sweep):
        if kind == 1:
            loose.compiling_thread_moved()
        elif kind == 2:
            loose.begin(place)
        elif loose.end(place):
            workers.add(place)
    return workers


def _inside(t: float, intervals: list[tuple[float, float]]) -> bool:
    index = bisect_right(intervals, (t, float("inf"))) - 1
    return index >= 0 and intervals[index][0] <= t < intervals[index][1]


def wall_breakdown(ranks: list[list[Span]]) -> WallBreakdown:
    """The breakdown of every rank's spans (roots; one list per process: their clocks and threads
    are their own) added together."""
    total = WallBreakdown()
    own: dict[str, float] = defaultdict(float)
    inclusive: dict[str, float] = defaultdict(float)
    outside: dict[str, float] = defaultdict(float)
    workers: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for roots in ranks:
        spans = [span for root in roots for span in root.walk()]
        until = max((span.end_us or span.start_us for span in spans), default=0.0)
        on_workers = worker_spans(spans, until)
        if not on_workers and _well_nested(roots, until):  # one thread, closed in order: the common case
            total.wall_s += _nested_own(roots, until, own, inclusive, outside) / 1e6
            continue
        main = []
        for place, span in enumerate(spans):
            (workers[span.name].append((span.start_us, _end(span, until))) if place in on_workers
             else main.append(span))
        total.wall_s += _attribute(main, until, own, outside) / 1e6
        by_name: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for span in main:
            if _end(span, until) > span.start_us:  # one that ends before it begins holds no time
                by_name[span.name].append((span.start_us, _end(span, until)))
        for name, intervals in by_name.items():
            inclusive[name] += sum(end - start for start, end in _merged(intervals)) / 1e6
    total.own_s = dict(sorted(((name, us / 1e6) for name, us in own.items()), key=lambda item: -item[1]))
    total.outside_s = dict(sorted(((name, us / 1e6) for name, us in outside.items() if us > 0),
                                  key=lambda item: -item[1]))
    total.inclusive_s = dict(sorted(inclusive.items(), key=lambda item: -item[1]))
    steps: dict[str, float] = defaultdict(float)
    for name, seconds in total.own_s.items():
        steps[step_of(name)] += seconds
    total.per_step_s = dict(steps)
    total.concurrent = {name: _concurrency(intervals) for name, intervals in
                        sorted(workers.items(), key=lambda item: -sum(e - s for s, e in item[1]))}
    return total


def _end(span: Span, until: float) -> float:
    """A stage that never ended runs to its process's last event."""
    return span.end_us if span.end_us is not None else max(until, span.start_us)


def _well_nested(roots: list[Span], until: float) -> bool:
    """Whether siblings (the roots too) follow one another and every stage lies inside its parent:
    then the innermost open stage is the deepest, and own time is a stage less its children. A stage
    that ends before it begins (a span made in code; `build_spans` leaves such records out) is not."""
    def in_order(siblings, start: float, end: float) -> bool:
        previous_end = start
        for span in siblings:
            span_end = _end(span, until)
            if span.start_us < previous_end or span_end > end or span_end < span.start_us:
                return False
            previous_end = span_end
        return True

    if not in_order(sorted(roots, key=lambda root: root.start_us), float("-inf"), float("inf")):
        return False
    return all(in_order(span.children, span.start_us, _end(span, until))
               for root in roots for span in root.walk() if span.children)


def _nested_own(roots: list[Span], until: float, own: dict[str, float], inclusive: dict[str, float],
                outside: dict[str, float]) -> float:
    """`_attribute` for well-nested stages, in one walk: own = duration less the children's; a stage
    nested in one of its own name counts once in `inclusive`. Returns the µs covered."""
    covered = 0.0
    stack = [(root, frozenset()) for root in roots]
    while stack:
        span, open_names = stack.pop()
        end = span.end_us
        duration = (end if end is not None else until) - span.start_us
        if not open_names:
            covered += duration
        if span.name not in open_names:
            inclusive[span.name] += duration / 1e6
        if span.children:
            inner = open_names | {span.name}
            for child in span.children:
                child_end = child.end_us
                duration -= (child_end if child_end is not None else until) - child.start_us
                stack.append((child, inner))
        own[span.name] += duration
        if span.name not in TORCH_TIMED and open_names.isdisjoint(TORCH_TIMED):
            outside[span.name] += duration
    return covered


def _attribute(spans: list[Span], until: float, own: dict[str, float], outside: dict[str, float]) -> float:
    """Give each instant to the open stage that began last (the innermost on one thread; it also
    settles the stages torch closes out of order), to `outside` too while no stage of TORCH_TIMED is
    open, and return the µs covered by any stage."""
    boundaries = []
    for order, span in enumerate(spans):
        end = _end(span, until)
        if end > span.start_us:
            boundaries.append((span.start_us, 1, order))
            boundaries.append((end, 0, order))
    boundaries.sort()
    open_heap: list[tuple[float, int, int]] = []  # (-start, -depth, order): the latest-begun on top
    ended: set[int] = set()
    covered = 0.0
    last_t = None
    timed_open = 0  # stages of TORCH_TIMED open
    for t, is_start, order in boundaries:
        while open_heap and open_heap[0][2] in ended:
            heapq.heappop(open_heap)
        if open_heap and last_t is not None and t > last_t:
            owner = spans[open_heap[0][2]]
            own[owner.name] += t - last_t
            if not timed_open:
                outside[owner.name] += t - last_t
            covered += t - last_t
        last_t = t
        span = spans[order]
        timed_open += (1 if is_start else -1) if span.name in TORCH_TIMED else 0
        if is_start:
            heapq.heappush(open_heap, (-span.start_us, -span.depth, order))
        else:
            ended.add(order)
    return covered


def _merged(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _concurrency(intervals: list[tuple[float, float]]) -> Concurrency:
    edges = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = peak = 0
    for _, step in edges:
        running += step
        peak = max(peak, running)
    return Concurrency(len(intervals), sum(end - start for start, end in intervals) / 1e6,
                       sum(end - start for start, end in _merged(intervals)) / 1e6, peak)
