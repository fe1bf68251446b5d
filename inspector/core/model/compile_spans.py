"""Compile-stage spans from ``chromium_event`` records: B/E pairs and X events become nested spans,
``i`` events become markers (cache hits, automatic-dynamic decisions). A stage whose end never came
(the run died inside it) stays open-ended and says so."""

from __future__ import annotations

import math
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from inspector.core.model.read_problems import ReadProblems


SMALL_ARG_CHARS = 200


def small_args(args: dict) -> dict:
    """The arguments worth keeping on a span: scalars and short strings, one copy of each string (tens of
    thousands of spans repeat a handful of file names, functions and ids). The end event of a stage can
    carry the whole compilation_metrics (configs included); those live on the unit already."""
    kept = {}
    intern = sys.intern
    for key, value in args.items():  # is_small_arg, inline: tens of thousands of events pass through here
        if isinstance(value, str):
            if len(value) <= SMALL_ARG_CHARS:
                kept[intern(key)] = intern(value)
        elif isinstance(value, (int, float)):
            kept[intern(key)] = value
    return kept


def is_small_arg(value) -> bool:
    return isinstance(value, (int, float, bool)) or (isinstance(value, str) and len(value) <= SMALL_ARG_CHARS)


@dataclass(slots=True)
class Span:
    name: str
    start_us: float
    end_us: float | None
    compile_id: str | None
    depth: int = 0
    args: dict = field(default_factory=dict)
    children: list[Span] | tuple = ()  # a leaf's is the one empty tuple all share: most spans are leaves

    @property
    def is_open(self) -> bool:
        return self.end_us is None

    def duration_us(self, until_us: float | None = None) -> float:
        end = self.end_us if self.end_us is not None else until_us
        return max(0.0, (end or self.start_us) - self.start_us)

    def walk(self):
        """This span and everything nested in it, depth first."""
        stack = [self]
        while stack:
            span = stack.pop()
            yield span
            stack.extend(reversed(span.children))


@dataclass(slots=True)
class Marker:
    name: str
    ts_us: float
    compile_id: str | None
    args: dict = field(default_factory=dict)


@dataclass
class SpanForest:
    roots: list[Span] = field(default_factory=list)
    markers: list[Marker] = field(default_factory=list)

    def get_state(self) -> dict:
        """The forest as plain data (for the index cache): each span a row, depth first, with its
        number of children; names and compile ids, which thousands of spans repeat, in tables."""
        names: dict[str, int] = {}
        ids: dict[str | None, int] = {}
        rows = []
        for root in self.roots:
            for span in root.walk():
                rows.append([names.setdefault(span.name, len(names)), span.start_us, span.end_us,
                             ids.setdefault(span.compile_id, len(ids)), span.depth, span.args, len(span.children)])
        markers = [[names.setdefault(marker.name, len(names)), marker.ts_us,
                    ids.setdefault(marker.compile_id, len(ids)), marker.args] for marker in self.markers]
        return {"names": list(names), "compile_ids": list(ids), "spans": rows, "roots": len(self.roots),
                "markers": markers}

    @classmethod
    def from_state(cls, state: dict) -> SpanForest:
        """`get_state`'s forest again; ValueError (or a TypeError, KeyError) on data it did not write (its
        times are floats: an integer of 400 digits would not become one)."""
        names, ids = state["names"], state["compile_ids"]
        if not (all(type(name) is str for name in names)
                and all(cid is None or (type(cid) is str and len(cid) <= SMALL_ARG_CHARS) for cid in ids)):
            raise ValueError("span tables")
        names = [sys.intern(name) for name in names]
        forest = cls()
        open_spans: list[list] = [[forest.roots, state["roots"]]]  # children lists still filling, and how many to go
        for name, start, end, cid, depth, args, children in state["spans"]:
            if not (type(start) is float and type(end) in (float, type(None)) and type(depth) is int
                    and type(children) is int and children >= 0 and _valid_args(args)):
                raise ValueError("span")
            while open_spans and open_spans[-1][1] == 0:
                open_spans.pop()
            if not open_spans:
                raise ValueError("spans left over")
            span = Span(names[_place_in(name, names)], start, end, ids[_place_in(cid, ids)], depth, args or NO_ARGS)
            open_spans[-1][0].append(span)
            open_spans[-1][1] -= 1
            if children:
                span.children = []
                open_spans.append([span.children, children])
        if any(left for _, left in open_spans):
            raise ValueError("spans missing")
        for name, ts, cid, args in state["markers"]:
            if not (type(ts) is float and _valid_args(args)):
                raise ValueError("marker")
            forest.markers.append(Marker(names[_place_in(name, names)], ts, ids[_place_in(cid, ids)], args))
        return forest


def _place_in(index, table: list) -> int:
    if type(index) is not int or not 0 <= index < len(table):
        raise ValueError("not an index of its table")
    return index


def _valid_args(args) -> bool:
    return type(args) is dict and all(type(key) is str and is_small_arg(value) for key, value in args.items())


def build_spans(events: Iterable[dict], problems: ReadProblems | None = None) -> SpanForest:
    """Nest trace events (dicts with name, ph, ts, args) in time order per thread. `events` is read
    once, each event kept only as the few fields a span needs until they are in order."""
    problems = problems if problems is not None else ReadProblems()  # an empty one is falsy, and still the one to fill
    forest = SpanForest()
    stacks: dict[tuple, list[Span]] = defaultdict(list)
    shared: dict = {}  # one copy of each thread's (pid, tid) and of each compile id, for all their events
    timed = [_Event.of(event, shared) for event in events if _has_time(event, problems)]
    timed.sort(key=lambda event: event.ts)  # stable: events at the same time keep their order
    timed.reverse()  # popped from the end: each event is let go as its span is made ("Spans hold less")
    while timed:
        event = timed.pop()
        phase, name, args, compile_id = event.phase, event.name, event.args, event.compile_id
        stack = stacks[event.thread]
        if phase == "B":
            span = Span(name, float(event.ts), None, compile_id, len(stack), args)
            _place(span, stack, forest)
            stack.append(span)
        elif phase == "E":
            # torch does not always close stages in strict LIFO order: close the latest open span of
            # this name and compile id, and leave spans opened after it open until their own end comes.
            for depth in range(len(stack) - 1, -1, -1):
                if stack[depth].name == name and compile_id in (None, stack[depth].compile_id):
                    span = stack.pop(depth)
                    span.end_us = float(event.ts)
                    if args:  # the begin event's arguments may be the one empty dict all share
                        span.args = {**span.args, **args}
                    break
            else:
                problems.add("unmatched_span_end", f"{name} at {event.ts}")
        elif phase == "X":
            duration = event.duration if event.duration is not None else 0
            span = Span(name, float(event.ts), float(event.ts) + duration, compile_id, len(stack), args)
            _place(span, stack, forest)
        elif phase in ("i", "I", "n"):
            forest.markers.append(Marker(name, float(event.ts), compile_id, args))
    return forest


def _has_time(event: dict, problems: ReadProblems) -> bool:
    """Whether a trace event has a time to place it by: a finite `ts`, and a finite `dur` of no less than
    0 where it has one. A stage that ends before it begins (a damaged or hand-edited record) would give
    a compile negative time: it is left out and counted."""
    ts, duration = event.get("ts"), event.get("dur")
    if not isinstance(ts, (int, float)):
        return False  # an event with no time (metadata): not a stage
    if type(ts) is bool or not math.isfinite(ts) or (duration is not None and (
            type(duration) not in (int, float) or not math.isfinite(duration) or duration < 0)):
        problems.add("bad_trace_field", f"{str(event.get('name', '?'))[:80]}: ts = {ts!r:.40}, dur = {duration!r:.40}")
        return False
    return True


def _place(span: Span, stack: list[Span], forest: SpanForest) -> None:
    """Nest `span` in the innermost open span, or make it a root."""
    if not stack:
        forest.roots.append(span)
    elif stack[-1].children:
        stack[-1].children.append(span)
    else:
        stack[-1].children = [span]


@dataclass(slots=True)
class _Event:
    """What a span takes from one trace event."""

    ts: int | float
    phase: object
    name: str
    compile_id: str | None
    args: dict  # without the compile id; NO_ARGS, shared, where nothing else is left (most events)
    duration: object
    thread: tuple

    @classmethod
    def of(cls, event: dict, shared: dict) -> _Event:
        """The event's fields, each string that tens of thousands of events repeat (names, phases, compile
        ids) and each thread one shared copy (`shared` holds them)."""
        args = small_args(event["args"]) if isinstance(event.get("args"), dict) else {}
        compile_id = args.pop("compile_id", None)
        if compile_id is not None:
            compile_id = str(compile_id)
            compile_id = shared.setdefault(compile_id, compile_id)
        phase = event.get("ph")
        thread = (event.get("pid"), event.get("tid"))
        return cls(event["ts"], sys.intern(phase) if isinstance(phase, str) else phase,
                   sys.intern(str(event.get("name", "?"))), compile_id, args or NO_ARGS, event.get("dur"),
                   shared.setdefault(thread, thread))


NO_ARGS: dict = {}  # never written to: a span's end event's arguments replace its dict

