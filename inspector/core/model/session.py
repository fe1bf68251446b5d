"""The session model: ranks → frames → compile units, with their breaks, recompiles, graphs, kernels,
compile-stage spans and metrics. Plain objects, built once by `session_builder`, read by every view."""

from __future__ import annotations

import json
import math

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path, PureWindowsPath

from inspector.core.model.compile_id import NO_FRAME, CompileId
from inspector.core.model.compile_spans import Marker, Span
from inspector.core.model.fx_graph_text import FxGraph, op_node_names, parse_fx_graph
from inspector.core.model.made_once import MadeOnce
from inspector.core.model.output_code import OutputCode, parse_output_code
from inspector.core.model.read_problems import ReadProblems
from inspector.core.model.records import Record
from inspector.core.model.run_results import Manifest, RunResults, TorchRecord
from inspector.core.model.source_location import SourceLocation


class UnitStatus(str, Enum):
    OK = "ok"
    GRAPH_BREAK = "graph_break"
    RESTART = "restart"
    FAILED = "failed"
    EMPTY_GRAPH = "empty_graph"
    CACHE_HIT = "cache_hit"
    CUT = "cut_mid_compile"  # Dynamo started it and never finished: the run died inside its compile


@dataclass(eq=False)  # one break is one event: equal by identity, so it can key a dict or a set
class GraphBreak:
    """One graph break as Dynamo reported it; `restarted` when Dynamo re-traced the frame after it."""

    compile_id: CompileId
    reason: str
    location: SourceLocation | None
    explanation: str = ""
    hints: list[str] = field(default_factory=list)
    user_stack: list[SourceLocation] = field(default_factory=list)
    kind: str = "other"  # data_dependent | explicit | unsupported | other
    restarted: bool = False
    text: str = ""
    # library frames (standard library, packages, torch) between the user's line and the traced line
    # that broke, outermost first: `location` is the user's own call into them
    via: list[SourceLocation] = field(default_factory=list)
    rank: int | None = None  # the rank whose log reported it (None for a single-process run)

    @property
    def site(self) -> str:
        """Where the break is, for deduplication across recompiles and attempts."""
        where = str(self.location) if self.location else self.reason
        return f"{where} {self.via_text}" if self.via else where

    @property
    def via_text(self) -> str:
        """'via copy.py:153 → _tensor.py:110' ('' for a break in the user's own line)."""
        names = (f"{PureWindowsPath(frame.file).name}:{frame.line}" for frame in self.via)  # / and \\ alike
        return "via " + " → ".join(names) if self.via else ""


@dataclass(eq=False)
class ExportIssue:
    """One issue torch.export met and worked around (draft export reports them; so does tlparse -e):
    a data-dependent expression it had to assume, a custom op without a fake kernel or with one
    that disagrees with the real kernel, a guard that specialised or bounded an input's size."""

    kind: str  # data_dependent | missing_fake_kernel | mismatched_fake_kernel | guard_added
    subject: str  # the expression (`u1 > 2`) or the op (`mylib.foo.default`)
    location: SourceLocation | None  # the user's line that raised it
    result: str | None = None  # what export assumed the expression was
    names: dict[str, list[str]] = field(default_factory=dict)  # the user's locals holding each symbol
    sources: dict[str, str] = field(default_factory=dict)  # symbol → the input it stands for
    reason: str = ""  # why a fake kernel mismatched
    count: int = 1


@dataclass(frozen=True)
class FailedGuard(Record):
    """One guard of an earlier graph that failed, so the frame compiled again."""

    against: str  # the compile id whose guards failed, e.g. "0/0"
    guard: str  # the guard failure in torch's words
    plain: str  # the same in plain words


@dataclass
class Recompile:
    compile_id: CompileId
    failed_guards: list[FailedGuard]
    raw: str


BACKWARD_STAGE = " (backward)"


def backward_stage(stage: str) -> str:
    """The name of the backward graph at `stage` (`post_grad (backward)`)."""
    return stage + BACKWARD_STAGE


def base_stage(stage: str) -> str:
    """The stage a graph name stands for, without its backward or repeat mark."""
    return stage.removesuffix(BACKWARD_STAGE).split(" #")[0]


@dataclass
class GraphArtifact:
    """A graph at one stage of one unit: parsed on first use from its readable text."""

    stage: str
    load_text: Callable[[], str]
    _graph: MadeOnce[FxGraph] = field(default_factory=MadeOnce, repr=False, compare=False)
    _op_names: list[str] | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        return self.load_text()

    @property
    def graph(self) -> FxGraph:
        return self._graph.get(lambda: parse_fx_graph(self.text))

    @property
    def op_names(self) -> list[str]:
        """Names of the graph's op nodes (what fusion figures count), without parsing it in full."""
        if self._op_names is None:
            self._op_names = ([node.name for node in self._graph.value.op_nodes] if self._graph.made
                              else op_node_names(self.text))
        return self._op_names

    @property
    def op_names_made(self) -> bool:
        return self._op_names is not None

    def keep_op_names(self, names: list[str]) -> None:
        """Keep `op_names` made elsewhere of the same text (a forked copy of this process)."""
        if self._op_names is None:
            self._op_names = names


@dataclass
class CodeArtifact:
    """Inductor output code of one graph (forward, backward or inference), split into kernels on use."""

    path: str | None
    load_text: Callable[[], str]
    load_provenance: Callable[[], dict | None] = lambda: None
    _code: MadeOnce[OutputCode] = field(default_factory=MadeOnce, repr=False, compare=False)

    @property
    def text(self) -> str:
        return self.load_text()

    @property
    def code(self) -> OutputCode:
        return self._code.get(lambda: parse_output_code(self.load_text(), self.path, self.load_provenance()))

    @property
    def parsed(self) -> bool:
        return self._code.made

    def keep_code(self, code: OutputCode) -> None:
        """Keep the parse of the same text made elsewhere (a forked copy of this process)."""
        self._code.put(code)


@dataclass
class TextArtifact:
    name: str
    load_text: Callable[[], str]
    encoding: str = "string"

    @property
    def text(self) -> str:
        return self.load_text()

    def head(self, chars: int) -> tuple[str, int]:
        """The text's first `chars` characters and how many it has in all. A `load_text` that can tell
        without decoding the whole of a long text (a unit's guards run to hundreds of KB, and a summary
        keeps the first 64 KiB) has a `head(chars)` of its own."""
        head = getattr(self.load_text, "head", None)
        if head is not None:
            return head(chars)
        text = self.text
        return text[:chars], len(text)


@dataclass
class RecordArtifact(TextArtifact):
    """A structured record (a symbolic-shape event, say) shown as JSON text, whose fields analyses
    read directly: rendering hundreds of big records to text only to parse them again is slow."""

    load_record: Callable[[], dict] = dict

    @property
    def record(self) -> dict:
        return self.load_record()


def artifact_record(artifact: TextArtifact) -> dict | None:
    """The fields of a structured artifact (its JSON text parsed, for one that is only text)."""
    if isinstance(artifact, RecordArtifact):
        return artifact.record
    try:
        record = json.loads(artifact.text)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


@dataclass
class CacheEvent:
    cache: str  # fx_graph | aotautograd
    outcome: str  # hit | miss | bypass
    load_detail: Callable[[], dict] = dict  # read on use: a miss's payload holds every config line of its key

    @property
    def detail(self) -> dict:
        """The payload's small values: the key and timings."""
        return self.load_detail()


@dataclass(eq=False)  # one unit is one compile: equal by identity, so it can key a dict or a set
class CompileUnit:
    compile_id: CompileId
    rank: int | None = None
    function: str | None = None
    location: SourceLocation | None = None
    user_stack: list[SourceLocation] = field(default_factory=list)
    attempts: int = 1
    breaks: list[GraphBreak] = field(default_factory=list)
    recompile: Recompile | None = None
    graphs: dict[str, GraphArtifact] = field(default_factory=dict)
    output_code: list[CodeArtifact] = field(default_factory=list)
    artifacts: list[TextArtifact] = field(default_factory=list)
    metrics: dict = field(default_factory=dict)
    export_issues: list[ExportIssue] = field(default_factory=list)
    # bwd_compilation_metrics: the backward graph is compiled lazily, at the first backward call, after
    # the frame's own compile ended; its figures (start time, inductor time) are not the frame's
    backward_metrics: dict = field(default_factory=dict)
    cache_events: list[CacheEvent] = field(default_factory=list)
    provenance: dict | None = None
    # triton_kernel_info: (index of the output code it follows, Triton kernel name) → torch's record of
    # compiling that kernel (its compile time, the autotune cache's state, how many configs, the one it
    # runs with); by code too, as a forward and its backward number their kernels each from 0
    kernel_info: dict[tuple[int, str], dict] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    fail_type: str | None = None
    fail_reason: str | None = None
    restart_reasons: list[str] = field(default_factory=list)
    # the restarts that cut no graph (a float Dynamo could not turn into a tensor): attempts, not breaks
    analysis_restarts: list[str] = field(default_factory=list)
    # each compilation-metrics record of the unit, read whole from its log on use (`metrics` keeps the
    # index's slim copy: bulky values such as the config dumps are left on disk)
    metrics_records: list[Callable[[], dict]] = field(default_factory=list, repr=False)
    started: bool = False  # a dynamo_start record opened this compile
    finished: bool = False  # its compilation_metrics record (written when Dynamo is done with it) arrived
    span_source: LazySpans | None = field(default=None, repr=False)

    @property
    def spans(self) -> list[Span]:
        """Compile-stage spans rooted in this unit (built for the whole rank on first use)."""
        return self.span_source.spans_of(self) if self.span_source else []

    @property
    def markers(self) -> list[Marker]:
        return self.span_source.markers_of(self) if self.span_source else []

    @property
    def title(self) -> str:
        return f"{self.compile_id} {self.function or '?'}"

    @property
    def fail_summary(self) -> str:
        """The failure in one line with its root cause: a backend failure reads "backend='x' raised:"
        on its first line and says what went wrong on the next ones."""
        first, _, rest = (self.fail_reason or "").strip().partition("\n")
        if not first.rstrip().endswith(":"):
            return first.strip()
        cause = rest.strip().split("\n\n", 1)[0]  # the root cause's message, up to its first blank line
        return " ".join(line.strip() for line in [first, *cause.splitlines()] if line.strip())

    @property
    def status(self) -> UnitStatus:
        if self.started and not self.finished:
            return UnitStatus.CUT
        if self.fail_type:
            return UnitStatus.FAILED
        if self.breaks:
            return UnitStatus.GRAPH_BREAK
        if self.restart_reasons or self.attempts > 1:
            return UnitStatus.RESTART
        if "dynamo" not in self.graphs and not self.output_code and not (self.compile_id.outside_dynamo
                                                                         and self.graphs):
            return UnitStatus.EMPTY_GRAPH
        outcomes = {event.outcome for event in self.cache_events if event.cache == "fx_graph"}
        if outcomes == {"hit"}:
            return UnitStatus.CACHE_HIT
        return UnitStatus.OK

    @property
    def kernels(self):
        return [kernel for artifact in self.output_code for kernel in artifact.code.kernels]

    def metric(self, name: str):
        return _figure(self.metrics.get(name))

    @property
    def full_metrics(self) -> dict:
        """Every field torch wrote in this unit's compilation metrics, as written (the slim copy where
        the log cannot be read back); a later record fills in what an earlier one left None."""
        merged: dict = {}
        for load in self.metrics_records:
            for key, value in load().items():
                if value is not None or key not in merged:
                    merged[key] = value
        return merged or dict(self.metrics)

    @property
    def backward_compile_s(self) -> float | None:
        """Seconds the lazy backward compile took (None when the log has no backward compile)."""
        total_us = _figure(self.backward_metrics.get("backward_cumulative_compile_time_us"))
        if total_us is not None:
            return total_us / 1e6
        return _figure(self.backward_metrics.get("inductor_compile_time_s"))  # logs before the cumulative field

    @property
    def compile_s(self) -> float | None:
        """Every compile of this unit: the frame (all its attempts) and its backward graph; for a unit
        outside Dynamo, its compile stages."""
        forward, backward = self.metric("entire_frame_compile_time_s"), self.backward_compile_s
        if forward is None and self.compile_id.outside_dynamo:  # export / AOTInductor: no frame, its stages
            forward = sum(span.duration_us() for span in self.spans) / 1e6 or None
        if forward is None and backward is None:
            return None
        return (forward or 0.0) + (backward or 0.0)


class LazySpans:
    """Builds the span forest of one rank on first use: chromium events are the bulk of a log, and
    opening one should not wait for them."""

    def __init__(self, build: Callable[[], tuple[dict, list[Span], dict]]):
        self.build = build  # the reader's builder: what forked_parts.py runs in a copy of this process
        self._forest: MadeOnce[tuple[dict, list[Span], dict]] = MadeOnce()

    @property
    def made(self) -> bool:
        return self._forest.made

    def _parts(self) -> tuple[dict, list[Span], dict]:
        return self._forest.get(self.build)

    def spans_of(self, unit: CompileUnit) -> list[Span]:
        return self._parts()[0].get(unit.compile_id.unit_key, [])

    def markers_of(self, unit: CompileUnit) -> list[Marker]:
        return self._parts()[2].get(unit.compile_id.unit_key, [])

    @property
    def unowned(self) -> list[Span]:
        return self._parts()[1]


@dataclass
class Frame:
    frame_id: int
    function: str | None = None
    location: SourceLocation | None = None
    units: list[CompileUnit] = field(default_factory=list)

    @property
    def where(self) -> str:
        """`frame 0`, or `outside Dynamo` for what torch.export or AOTInductor compiled."""
        return "outside Dynamo" if self.frame_id == NO_FRAME else f"frame {self.frame_id}"

    @property
    def title(self) -> str:
        return f"{self.where}: {self.function or '?'}"


@dataclass
class Rank:
    rank: int | None
    frames: list[Frame] = field(default_factory=list)
    log_path: Path | None = None
    span_source: LazySpans | None = field(default=None, repr=False)
    problems: ReadProblems = field(default_factory=ReadProblems)  # of its log, growing as parts are read
    # torch's graph_execution records (torch._inductor.debug.record_and_log_graph_execution_order):
    # the compile ids of the compiled graphs in the order they ran, one record per recorded stretch
    executions: list[TextArtifact] = field(default_factory=list, repr=False)

    @property
    def spans(self) -> list[Span]:
        """Spans outside any compile unit."""
        return self.span_source.unowned if self.span_source else []

    @property
    def units(self) -> list[CompileUnit]:
        return [unit for frame in self.frames for unit in frame.units]

    @property
    def label(self) -> str:
        return f"rank {self.rank}" if self.rank is not None else "process"


@dataclass
class Session:
    source: Path
    kind: str  # torch_trace | compile_debug | capture | recorder
    ranks: list[Rank] = field(default_factory=list)
    load_problems: ReadProblems = field(default_factory=ReadProblems)  # beyond the logs: manifest, folders
    unknown_kinds: dict[str, int] = field(default_factory=dict)
    torch_version: str | None = None
    triton_version: str | None = None  # as the run's own record states it (a recorder's header)
    host: str | None = None  # the machine the run ran on, as its own record states it (a recorder's header)
    ran_at: float | None = None  # when the run last recorded (epoch seconds), as a recorder's lines state it
    global_artifacts: list[TextArtifact] = field(default_factory=list)
    manifest: Manifest | None = None  # a capture's, decoded by its loader
    results: RunResults | None = None
    torch_record: TorchRecord | None = None  # torch's own record of a capture's run (torch_record.json)
    extracted_to: Path | None = None  # the private folder a bundle was extracted into, removed on close
    # (bytes read, bytes in all) of a preview: the session of a big log's first records, shown while
    # the whole log is read; None for a whole session
    preview: tuple[int, int] | None = None
    # What the reader that built it says of the run's record, so that no code asks which kind it holds:
    # its summary can be kept, keyed by the files it was read from (TORCH_TRACE logs, a capture; not
    # kinds read from many loose files); and its run is over once its manifest records the end (a
    # capture: its logs' age says nothing of that, and its manifest and results are part of the run)
    summary_reusable: bool = False
    settled_by_manifest: bool = False

    @property
    def units(self) -> list[CompileUnit]:
        return [unit for rank in self.ranks for unit in rank.units]

    @property
    def problems(self) -> ReadProblems:
        """Everything unreadable so far: lazily read parts (payloads, spans) add to it when first read."""
        merged = ReadProblems()
        merged.merge(self.load_problems)
        for rank in self.ranks:
            prefix = f"{rank.log_path.name}: " if len(self.ranks) > 1 and rank.log_path else ""
            merged.merge(rank.problems, prefix)
        return merged

    @property
    def breaks(self) -> list[GraphBreak]:
        return [brk for unit in self.units for brk in unit.breaks]

    @property
    def recompiles(self) -> list[Recompile]:
        return [unit.recompile for unit in self.units if unit.recompile]

    @property
    def complete(self) -> bool:
        if self.manifest is not None:
            return self.manifest.complete
        return not self.problems.counts.get("truncated")


def _figure(value):
    """A number from a log record, or None where the log says "Infinity" or a string instead."""
    usable = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return value if usable else None
