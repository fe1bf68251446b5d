"""The summary document decoded once into typed records, the one model every human output renders:
the terminal text, the HTML report, the Markdown comment, SARIF, and the app's Summary dashboard.
Each titled part's words and counts (`Summary.section`) and the headline are made here once, so two
outputs can never word or count a thing differently.

The document itself (`summary.summarize`, docs/summary-schema.md) stays what scripts read and what
the summary cache keeps; `Summary.from_state(document)` decodes it (a document read back from the
cache included), and every record keeps the fields it does not name in `extra`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from inspector.core.analysis.kernel_index import KernelCompile
from inspector.core.analysis.speedup import FASTER, INCONCLUSIVE, NO_DIFFERENCE, OLDER_CAPTURE, Speedup
from inspector.core.model.records import Record
from inspector.core.numbers import count
from inspector.core.outputs.sections import Section


@dataclass(frozen=True, kw_only=True)
class Notice(Record):
    """Something to read before any figure (an eager fallback, a break count torch contradicts)."""

    text: str = ""


@dataclass(frozen=True, kw_only=True)
class Called(Record):
    """The user's function a library wrapper, compiled in its place, calls."""

    function: str | None = None
    location: str | None = None


@dataclass(frozen=True, kw_only=True)
class TriggerFrame(Record):
    """One frame of the user's code in the stack that triggered a compile."""

    file: str = ""
    line: int | None = None
    function: str | None = None
    code: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where} in {self.function}" if self.function else where


@dataclass(frozen=True, kw_only=True)
class FailureLink(Record):
    """A restart or the failure that ended a compile; `break_type` is torch's id (GB0099) where named."""

    kind: str = ""
    type: str = ""
    break_type: str | None = None
    summary: str = ""  # the text in one line, with its root cause
    text: str = ""


@dataclass(frozen=True, kw_only=True)
class CacheLookupRow(Record):
    cache: str = ""
    outcome: str = ""
    reason: str | None = None
    key: str | None = None
    time_saved_ms: float | None = None


@dataclass(frozen=True, kw_only=True)
class CodeTextRow(Record):
    """Code Dynamo wrote for this compile, as text (disassembly, decompiled Python, guards)."""

    title: str = ""
    function: str | None = None
    kind: str = ""
    text: str = ""


@dataclass(frozen=True, kw_only=True)
class UnitCompile(Record):
    """What tlparse shows on a compile's page: the trigger stack, restarts and failure, every metrics
    field (`unknown_metrics` names those of another torch version), cache lookups, Dynamo's code."""

    trigger: tuple[TriggerFrame, ...] = ()
    failures: tuple[FailureLink, ...] = ()
    metrics: Mapping[str, Any] = field(default_factory=dict)  # as torch wrote them
    unknown_metrics: tuple[str, ...] = ()
    cache_lookups: tuple[CacheLookupRow, ...] = ()
    code: tuple[CodeTextRow, ...] = ()

    NESTED = {"trigger": [TriggerFrame], "failures": [FailureLink], "cache_lookups": [CacheLookupRow],
              "code": [CodeTextRow]}


@dataclass(frozen=True, kw_only=True)
class StackTrieNode(Record):
    """A frame of the trigger-stack trie, the compiles whose stack ends there, and the frames it called."""

    frame: str = ""
    compile_ids: tuple[str, ...] = ()
    children: tuple[StackTrieNode, ...] = ()


StackTrieNode.NESTED = {"children": [StackTrieNode]}


@dataclass(frozen=True, kw_only=True)
class Unit(Record):
    compile_id: str = ""
    rank: int | None = None
    shown: str = ""  # the unit's function as a person names it ("forward (resumed at line 19)")
    location: str | None = None
    called: Called | None = None
    triggered_by: str | None = None  # `torch.cond`: torch compiled this for an eager call of that operator
    status: str = ""
    kernels: int = 0
    compile_time_s: float | None = None
    backward_compile_time_s: float | None = None
    backward_graph: bool = False
    kernel_names: tuple[str, ...] = ()
    compile: UnitCompile | None = None

    NESTED = {"called": Called, "compile": UnitCompile}

    @property
    def shown_location(self) -> str | None:
        """Where the user's code is: the called function's line for a library wrapper."""
        return (self.called or self).location


@dataclass(frozen=True, kw_only=True)
class BreakSite(Record):
    """A source line where graphs broke, with every break there counted."""

    location: str = ""
    via: str | None = None
    count: int = 0
    kind: str = ""
    compile_ids: tuple[str, ...] = ()
    reason: str = ""
    code: str | None = None
    hints: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Restart(Record):
    """Dynamo restarted its analysis of a frame: no graph was cut, so not a break."""

    compile_id: str = ""
    shown: str = ""
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class FrameSkip(Record):
    """A frame Dynamo skipped whole: it runs eagerly, and is not a break."""

    compile_id: str = ""
    shown: str = ""
    type: str | None = None


@dataclass(frozen=True, kw_only=True)
class ExportIssue(Record):
    location: str | None = None
    file: str | None = None
    line: int | None = None
    count: int = 0
    kind: str = ""
    expression: str = ""
    code: str | None = None
    what: str = ""
    fix: str = ""


@dataclass(frozen=True, kw_only=True)
class FailedGuard(Record):
    against: str | None = None
    guard: str = ""
    plain: str = ""


@dataclass(frozen=True, kw_only=True)
class Recompile(Record):
    compile_id: str = ""
    rank: int | None = None
    shown: str = ""
    every_guard: bool = False  # from torch's record: every guard that failed, not the first of each graph
    failed_guards: tuple[FailedGuard, ...] = ()

    NESTED = {"failed_guards": [FailedGuard]}


@dataclass(frozen=True, kw_only=True)
class ShapeEvent(Record):
    """A symbol made, a dimension specialised or a guard added, at the user's line."""

    kind: str = ""  # symbol | unbacked | specialization | guard | …
    symbol: str | None = None
    shown_source: str | None = None
    detail: str = ""
    location: str | None = None
    code: str | None = None


@dataclass(frozen=True, kw_only=True)
class UnitShapes(Record):
    compile_id: str = ""
    rank: int | None = None
    events: tuple[ShapeEvent, ...] = ()

    NESTED = {"events": [ShapeEvent]}

    def of_kind(self, *kinds: str) -> list[ShapeEvent]:
        return [event for event in self.events if event.kind in kinds]


@dataclass(frozen=True, kw_only=True)
class CompileTime(Record):
    total_s: float | None = None
    units_measured: int = 0
    backward_s: float | None = None
    backward_units: tuple[str, ...] = ()
    per_stage_s: Mapping[str, float] = field(default_factory=dict)
    self_s: Mapping[str, float] = field(default_factory=dict)  # own wall time per stage: Σ = wall_s
    wall_s: float | None = None  # the compiling threads' time inside any stage (None: an older summary)
    # stage → own seconds while none of `timed_stages` (the stages torch counts as compile time) was open
    outside_s: Mapping[str, float] = field(default_factory=dict)
    timed_stages: tuple[str, ...] = ()
    unrecorded_s: float = 0.0  # of wall_s, in timed stages of units with no compilation_metrics
    unrecorded_units: tuple[str, ...] = ()
    per_step_s: Mapping[str, float] = field(default_factory=dict)  # own time per pipeline step
    concurrent: Mapping[str, Mapping[str, float]] = field(default_factory=dict)  # stage → work beside the compile
    open_stages: tuple[str, ...] = ()

    @property
    def traced_s(self) -> float:
        """The compile's wall time in stages: the own times of every stage together (0 for a log cut
        off before any stage ended)."""
        return sum(self.self_s.values())


@dataclass(frozen=True, kw_only=True)
class KernelCompileRow(Record):
    """What compiling one Triton kernel cost, as torch recorded it (a GPU log)."""

    compile_id: str = ""
    rank: int | None = None
    graph: str | None = None  # forward, backward or inference: the graph whose code holds the kernel
    kernel: str = ""
    compile_time_s: float | None = None
    autotune_s: float | None = None
    autotune_cache: str | None = None
    configs: int | None = None
    config: Mapping[str, Any] | None = None

    def described(self) -> str:
        """In the words the app's Code outline uses (`KernelCompile.described`)."""
        return KernelCompile(self.compile_time_s, self.autotune_s, self.autotune_cache, self.configs,
                             dict(self.config) if self.config else None).described()

    @property
    def where(self) -> str:
        """The kernel's unit, rank and graph as the text says them: "[0/0] backward", "rank 1 [0/0]"."""
        rank = f"rank {self.rank} " if self.rank is not None else ""
        return f"{rank}{self.compile_id}" + (f" {self.graph}" if self.graph else "")


@dataclass(frozen=True, kw_only=True)
class Kernels(Record):
    total: int = 0
    by_kind: Mapping[str, int] = field(default_factory=dict)
    n_ops: int | None = None
    fusion_ratio: float | None = None
    launch_sites: int | None = None  # K's denominator: kernel launches in one call of each graph
    compiles: tuple[KernelCompileRow, ...] = ()  # the slowest to compile first

    NESTED = {"compiles": [KernelCompileRow]}


@dataclass(frozen=True, kw_only=True)
class CacheCount(Record):
    hit: int = 0
    miss: int = 0
    bypass: int = 0
    hit_rate: float | None = None


@dataclass(frozen=True, kw_only=True)
class RankRow(Record):
    rank: int | None = None
    units: int = 0
    breaks: int = 0
    recompiles: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    failed: int = 0
    compile_time_s: float | None = None
    first_collective_s: float | None = None


@dataclass(frozen=True, kw_only=True)
class Finding(Record):
    """Where ranks depart from each other, and which."""

    kind: str = ""
    ranks: tuple[int, ...] = ()
    ranks_text: str = ""
    message: str = ""


@dataclass(frozen=True, kw_only=True)
class RankGroup(Record):
    ranks: tuple[int, ...] = ()
    ranks_text: str = ""


@dataclass(frozen=True, kw_only=True)
class PerRank(Record):
    figures: tuple[RankRow, ...] = ()
    divergence: tuple[Finding, ...] = ()
    groups: tuple[RankGroup, ...] = ()

    NESTED = {"figures": [RankRow], "divergence": [Finding], "groups": [RankGroup]}

    def stragglers(self) -> list[int | None]:
        return [rank for finding in self.divergence if finding.kind == "straggler" for rank in finding.ranks]


@dataclass(frozen=True, kw_only=True)
class Figure(Record):
    """One figure of the verdict: its value with the formula and where the number comes from."""

    key: str = ""
    label: str = ""
    value: float | None = None
    unit: str = ""
    formula: str = ""
    source: str = ""


@dataclass(frozen=True, kw_only=True)
class RunErrorFacts(Record):
    kind: str | None = None
    message: str | None = None


@dataclass(frozen=True, kw_only=True)
class Check(Record):
    """Whether a profile agrees with the timed call, in words."""

    consistent: bool | None = None
    note: str = ""


@dataclass(frozen=True, kw_only=True)
class CorrectnessRow(Record):
    inputs: str = ""
    allclose: bool = False
    max_abs_error: float = 0.0
    max_rel_error: float = 0.0


@dataclass(frozen=True, kw_only=True)
class TopKernel(Record):
    name: str = ""
    time_us_per_call: float = 0.0
    share: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Environment(Record):
    device: str | None = None
    device_name: str | None = None
    threads: int | None = None


@dataclass(frozen=True, kw_only=True)
class Run(Record):
    """What a capture recorded about the run itself."""

    error: RunErrorFacts | None = None
    environment: Environment | None = None
    correctness: tuple[CorrectnessRow, ...] | None = None
    memory: Mapping[str, Any] | None = None
    top_kernels: tuple[TopKernel, ...] = ()
    profile_check: Check | None = None
    eager_profile_check: Check | None = None
    torch_counted_frame_skips: Mapping[str, int] | None = None

    NESTED = {"error": RunErrorFacts, "environment": Environment, "correctness": [CorrectnessRow],
              "top_kernels": [TopKernel], "profile_check": Check, "eager_profile_check": Check}

    @property
    def memory_pairs(self) -> list[tuple[str, float, float]]:
        """(figure, eager MB, compiled MB) for each high-water mark both runs recorded."""
        memory = self.memory or {}
        eager, compiled = memory.get("eager") or {}, memory.get("compiled") or {}
        return [(key.replace("_mb", ""), eager[key], compiled[key]) for key in compiled if key in eager]

    @property
    def memory_growth(self) -> list[tuple[str, float, float]]:
        """(figure, eager MB, compiled MB) of each phase's peak above what the process held at the
        phase's start: what the calls themselves took (captures that record the start)."""
        memory = self.memory or {}
        eager, compiled = memory.get("eager") or {}, memory.get("compiled") or {}
        rows = []
        for peak, start in PHASE_STARTS.items():
            if all(key in phase for phase in (eager, compiled) for key in (peak, start)):
                rows.append((peak.replace("_mb", ""), eager[peak] - eager[start], compiled[peak] - compiled[start]))
        return rows


PHASE_STARTS = {"cpu_rss_high_water_mb": "cpu_rss_start_mb", "cuda_max_allocated_mb": "cuda_allocated_start_mb"}


@dataclass(frozen=True, kw_only=True)
class Registry(Record):
    described: str = ""


@dataclass(frozen=True, kw_only=True)
class BreakType(Record):
    """A site's entry in torch's graph-break registry."""

    gb_id: str = ""
    gb_type: str = ""
    explanation: str = ""
    hints: tuple[str, ...] = ()
    url: str = ""
    matched_by: str = ""
    chained: tuple[str, ...] = ()  # the breaks torch raised while handling this one (GB7000: frame skipped)


@dataclass(frozen=True, kw_only=True)
class TypedSite(Record):
    location: str = ""
    via: str | None = None
    reason: str = ""
    count: int = 0
    file: str | None = None
    line: Any = None  # as the log gave it: SARIF takes only a line number ≥ 1
    type: BreakType | None = None

    NESTED = {"type": BreakType}


@dataclass(frozen=True, kw_only=True)
class TypedFailure(Record):
    """A compile that failed where a graph would have broken (fullgraph=True, no fake kernel), with its type."""

    compile_id: str = ""
    rank: int | None = None
    fail_type: str | None = None
    type: BreakType | None = None

    NESTED = {"type": BreakType}


@dataclass(frozen=True, kw_only=True)
class BreakTypes(Record):
    registry: Registry | None = None
    sites: tuple[TypedSite, ...] = ()
    failures: tuple[TypedFailure, ...] = ()

    NESTED = {"registry": Registry, "sites": [TypedSite], "failures": [TypedFailure]}


@dataclass(frozen=True, kw_only=True)
class RecompileGroup(Record):
    """Recompiles of one frame for one cause, with the values seen and the fix."""

    rank: int | None = None
    frame: int | None = None
    shown: str = ""
    file: str | None = None
    line: Any = None
    shown_subject: str = ""
    aspect: str = ""
    count: int = 0
    history: tuple[str, ...] = ()
    guard: str = ""
    failed: tuple[str, ...] = ()  # every guard that failed, one line per recompile
    changed: tuple[str, ...] = ()  # the guarded values that failed against the newest earlier graph
    every_guard: bool = False
    diagnosis: str = ""
    fix: str = ""
    stance: str = ""


@dataclass(frozen=True, kw_only=True)
class RecompileLimit(Record):
    text: str = ""


@dataclass(frozen=True, kw_only=True)
class Cost(Record):
    label: str = ""
    us_per_call: float = 0.0
    share: float = 0.0
    detail: str = ""


@dataclass(frozen=True, kw_only=True)
class CudagraphSkip(Record):
    compile_id: str = ""
    reason: str = ""


@dataclass(frozen=True, kw_only=True)
class Slowness(Record):
    """Where a compiled call's time goes, from the profile."""

    call_us: float | None = None
    costs: tuple[Cost, ...] = ()
    graphs_per_call: float | None = None
    launches_per_call: float | None = None
    launch_detail: str = ""
    cudagraph_skips: tuple[CudagraphSkip, ...] = ()
    cudagraph_skip_count: int | None = None
    note: str = ""

    NESTED = {"costs": [Cost], "cudagraph_skips": [CudagraphSkip]}


@dataclass(frozen=True, kw_only=True)
class RegionRow(Record):
    compile_id: str = ""
    entries_per_call: float = 0.0
    span_us: float = 0.0
    own_us: float = 0.0
    graph_us: float = 0.0
    overhead_us: float = 0.0
    eager_us: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Regions(Record):
    """Each compiled region of a profiled call; `reason` instead when there is no accounting."""

    reason: str | None = None
    calls: int = 0
    call_us: float = 0.0
    overhead_outside_us: float = 0.0
    eager_outside_us: float = 0.0
    regions: tuple[RegionRow, ...] = ()

    NESTED = {"regions": [RegionRow]}


@dataclass(frozen=True, kw_only=True)
class Unreadable(Record):
    count: int = 0
    meaning: str = ""
    examples: tuple[str, ...] = ()


class Part(Enum):
    """The titled parts of a summary whose words and counts every output shares."""

    UNITS = "Compile units"
    BREAKS = "Graph breaks"
    EXPORT_ISSUES = "Export issues"
    RECOMPILES = "Recompiles"
    RECOMPILE_GROUPS = "Recompiles by cause"
    KERNELS = "Kernels"


@dataclass(frozen=True, kw_only=True)
class Summary(Record):
    """The whole summary, typed. Parts a partial document leaves out (the dashboard's, made without
    the per-unit figures) are at their defaults."""

    source: str = ""
    kind: str = ""
    torch_version: str | None = None
    tool_version: str = ""
    complete: bool = False
    ranks: tuple[int | None, ...] = ()
    notices: tuple[Notice, ...] = ()
    units: tuple[Unit, ...] = ()
    graph_breaks: tuple[Mapping[str, Any], ...] = ()  # one per break; outputs count them
    break_sites: tuple[BreakSite, ...] = ()
    stack_trie: tuple[StackTrieNode, ...] = ()
    analysis_restarts: tuple[Restart, ...] = ()
    frame_skips: tuple[FrameSkip, ...] = ()
    export_issues: tuple[ExportIssue, ...] = ()
    shapes: tuple[UnitShapes, ...] = ()
    recompiles: tuple[Recompile, ...] = ()
    compile_time: CompileTime = CompileTime()
    kernels: Kernels = Kernels()
    cache: Mapping[str, CacheCount] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    unknown_record_kinds: Mapping[str, int] = field(default_factory=dict)
    unreadable: Mapping[str, Unreadable] = field(default_factory=dict)
    verdict: tuple[Figure, ...] = ()
    speedup: Speedup | None = None
    run: Run | None = None
    break_types: BreakTypes = BreakTypes()
    recompile_groups: tuple[RecompileGroup, ...] = ()
    recompile_limit: RecompileLimit = RecompileLimit()
    slowness: Slowness | None = None
    regions: Regions | None = None
    per_rank: PerRank | None = None

    NESTED = {"notices": [Notice], "units": [Unit], "break_sites": [BreakSite],
              "stack_trie": [StackTrieNode], "analysis_restarts": [Restart],
              "frame_skips": [FrameSkip], "export_issues": [ExportIssue], "shapes": [UnitShapes],
              "recompiles": [Recompile], "compile_time": CompileTime, "kernels": Kernels, "cache": {str: CacheCount},
              "unreadable": {str: Unreadable}, "verdict": [Figure], "speedup": Speedup, "run": Run,
              "break_types": BreakTypes, "recompile_groups": [RecompileGroup], "recompile_limit": RecompileLimit,
              "slowness": Slowness, "regions": Regions, "per_rank": PerRank}

    def section(self, part: Part) -> Section:
        """A part's title and its count, in the words every output uses."""
        figure = {
            Part.UNITS: lambda: f"{len(self.units)}" + (f" on {count(len(self.named_ranks), 'rank')}"
                                                          if self.named_ranks else ""),
            Part.BREAKS: lambda: f"{len(self.graph_breaks)} at {len(self.break_sites)} site(s)",
            Part.EXPORT_ISSUES: lambda: f"{len(self.export_issues)}",
            Part.RECOMPILES: lambda: f"{len(self.recompiles)}",
            Part.RECOMPILE_GROUPS: lambda: (f"{sum(group.count for group in self.recompile_groups)} in "
                                            f"{len(self.recompile_groups)} group(s)"),
            Part.KERNELS: lambda: f"{self.kernels.total}",
        }[part]()
        return Section(part.value, figure)

    @property
    def named_ranks(self) -> list[int]:
        return [rank for rank in self.ranks if rank is not None]

    def figure(self, key: str) -> Figure | None:
        return next((figure for figure in self.verdict if figure.key == key), None)

    @property
    def headline(self) -> str:
        """One sentence that answers 'was it worth it?': a direction only when the timing supports one."""
        speedup = self.speedup
        value = speedup.value if speedup is not None else None
        parts = []
        if speedup is None:
            parts.append("Run time not measured.")
        elif value is None:
            parts.append(f"Run time not measured: {speedup.reason}.")
        else:
            interval = f" (S = {value:.2f}×, interval {speedup.low:.2f}–{speedup.high:.2f})" if speedup.has_interval else ""
            uncertain = "" if speedup.size_certain else " (the direction is certain, the size is not)"
            if speedup.state == INCONCLUSIVE:
                parts.append(f"Speedup INCONCLUSIVE{interval or f' (S = {value:.2f}×)'}: {speedup.reason}.")
            elif speedup.state == NO_DIFFERENCE:
                parts.append(f"No measurable difference between compiled and eager{interval}: {speedup.reason}.")
            elif speedup.state == FASTER:
                calls = (self.figure("break_even") or Figure()).value
                parts.append(f"Compiled is {speedup.range_text()} faster than eager{interval}{uncertain}"
                             + (f"; the compile pays for itself after {calls:,.0f} calls." if calls else "."))
            else:
                parts.append(f"Compiled is {speedup.range_text()} SLOWER than eager{interval}{uncertain}: "
                             f"compiling does not pay off here.")
        if speedup is not None and speedup.reason.startswith(OLDER_CAPTURE):
            parts.append("No confidence interval: an older capture timed eager and compiled in separate blocks, "
                         "not interleaved rounds; capture again to get one.")
        if speedup is not None and speedup.machine is not None and speedup.machine.busy:
            parts.append("Machine busy: timing unreliable.")  # its figures are in the speedup's sentence
        parts.append(f"{len(self.break_sites)} graph-break site(s), {len(self.recompiles)} recompile(s), "
                     f"{self.kernels.total} kernels.")
        if not self.complete:
            parts.append("Incomplete session: the run did not finish.")
        return " ".join(parts)

    @property
    def speedup_doubtful(self) -> bool:
        """The speedup is not to be relied on: inconclusive, or timed on a busy machine."""
        speedup = self.speedup
        return speedup is not None and (speedup.state == INCONCLUSIVE
                                        or (speedup.machine is not None and speedup.machine.busy))


def as_summary(subject: Summary | Mapping[str, Any]) -> Summary:
    """The typed summary of a summary document (one read back from the cache or a file included)."""
    return subject if isinstance(subject, Summary) else Summary.from_state(subject)
