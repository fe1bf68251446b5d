"""Compile-stage spans from ``chromium_event`` records: B/E pairs and X events become nested spans,
``i`` events become markers (cache hits, automatic-dynamic decisions). A stage whose end never came
(the run died inside it) stays open-ended and says so."""

from __future__ import annotations

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
    return {sys.intern(key): sys.intern(value) if isinstance(value, str) else value for key, value in args.items()
            if is_small_arg(value)}


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


def build_spans(events: Iterable[dict], problems: ReadProblems | None = None) -> SpanForest:
    """Nest trace events (dicts with name, ph, ts, args) in time order per thread. `events` is read
    once, each event kept only as the few fields a span needs until they are in order."""
    problems = problems or ReadProblems()
    forest = SpanForest()
    stacks: dict[tuple, list[Span]] = defaultdict(list)
    shared: dict = {}  # one copy of each thread's (pid, tid) and of each compile id, for all their events
    timed = [_Event.of(event, shared) for event in events if isinstance(event.get("ts"), (int, float))]
    timed.sort(key=lambda event: event.ts)  # stable: events at the same time keep their order
    timed.reverse()  # popped from the end, each event is let go as its span is made (~100 bytes each)
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
            duration = event.duration if isinstance(event.duration, (int, float)) else 0
            span = Span(name, float(event.ts), float(event.ts) + duration, compile_id, len(stack), args)
            _place(span, stack, forest)
        elif phase in ("i", "I", "n"):
            forest.markers.append(Marker(name, float(event.ts), compile_id, args))
    return forest


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


def stage_totals(roots: list[Span], until_us: float | None = None) -> dict[str, float]:
    """Seconds spent per stage name; a stage nested in a span of the same name counts once."""
    totals: dict[str, float] = defaultdict(float)

    def visit(span: Span, open_names: frozenset):
        if span.name not in open_names:
            totals[span.name] += span.duration_us(until_us) / 1e6
        inner = open_names | {span.name}
        for child in span.children:
            visit(child, inner)

    for root in roots:
        visit(root, frozenset())
    return dict(sorted(totals.items(), key=lambda item: -item[1]))


def stage_self_totals(roots: list[Span], until_us: float | None = None) -> dict[str, float]:
    """Seconds spent per stage name in the stage itself, time in nested stages excluded: where the
    compile time actually went."""
    totals: dict[str, float] = defaultdict(float)
    for root in roots:
        for span in root.walk():
            nested = sum(child.duration_us(until_us) for child in span.children)
            totals[span.name] += max(0.0, span.duration_us(until_us) - nested) / 1e6
    return dict(sorted(totals.items(), key=lambda item: -item[1]))
