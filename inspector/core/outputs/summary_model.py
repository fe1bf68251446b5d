"""The summary document decoded once into typed records, the one model every human output renders:
the terminal text, the HTML report, the Markdown comment, SARIF, and the app's Summary dashboard.
Each titled part's words and counts (`Summary.section`) and the headline are made here once, so two
outputs can never word or count a thing differently.

The document itself (`summary.summarize`, docs/summary-schema.md) stays what scripts read and what
the summary cache keeps; `Summary.from_state(document)` decodes it (a document read back from the
cache included), and every record keeps the fields it does not name in `extra`. A part the analysis
computes is held as the analysis's own record (a break site, a recompile group, a verdict figure …,
imported below), and the run's own records are the run results' (`model/run_results.py`): this module
defines the records of what only the summary assembles."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from inspector.core.analysis.break_types import BreakTypeMatch
from inspector.core.analysis.compile_detail import StackTrieNode, UnitCompile
from inspector.core.analysis.export_report import ExportFinding
from inspector.core.analysis.rank_figures import RankReport
from inspector.core.analysis.figures import BreakSite, CacheCount, CompileTime
from inspector.core.analysis.kernel_index import KernelCompile
from inspector.core.analysis.notices import Notice
from inspector.core.analysis.profile_ops import ProfileCheck, TopKernel
from inspector.core.analysis.recompile_groups import RecompiledUnit, RecompileGroup
from inspector.core.analysis.recompile_limit import RecompileLimit
from inspector.core.analysis.region_time import RegionAccounting
from inspector.core.analysis.shapes import ShapeEvent
from inspector.core.analysis.slowness import Slowness
from inspector.core.analysis.comparison import FASTER, INCONCLUSIVE, NO_DIFFERENCE, OLDER_CAPTURE, Speedup
from inspector.core.analysis.verdict import Figure
from inspector.core.model.records import Record
from inspector.core.model.run_results import Correctness, Environment, RunError
from inspector.core.numbers import count
from inspector.core.outputs.sections import Section


@dataclass(frozen=True, kw_only=True)
class Called(Record):
    """The user's function a library wrapper, compiled in its place, calls."""

    function: str | None = None
    location: str | None = None


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
class UnitShapes(Record):
    compile_id: str = ""
    rank: int | None = None
    events: tuple[ShapeEvent, ...] = ()

    NESTED = {"events": [ShapeEvent]}

    def of_kind(self, *kinds: str) -> list[ShapeEvent]:
        return [event for event in self.events if event.kind in kinds]


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
class Run(Record):
    """What a capture recorded about the run itself."""

    error: RunError | None = None
    environment: Environment | None = None
    correctness: tuple[Correctness, ...] | None = None
    memory: Mapping[str, Any] | None = None
    top_kernels: tuple[TopKernel, ...] = ()
    profile_check: ProfileCheck | None = None
    eager_profile_check: ProfileCheck | None = None
    torch_counted_frame_skips: Mapping[str, int] | None = None

    NESTED = {"error": RunError, "environment": Environment, "correctness": [Correctness],
              "top_kernels": [TopKernel], "profile_check": ProfileCheck,
              "eager_profile_check": ProfileCheck}

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
class TypedSite(Record):
    location: str = ""
    via: str | None = None
    reason: str = ""
    count: int = 0
    file: str | None = None
    line: Any = None  # as the log gave it: SARIF takes only a line number ≥ 1
    type: BreakTypeMatch | None = None

    NESTED = {"type": BreakTypeMatch}


@dataclass(frozen=True, kw_only=True)
class TypedFailure(Record):
    """A compile that failed where a graph would have broken (fullgraph=True, no fake kernel), with its type."""

    compile_id: str = ""
    rank: int | None = None
    fail_type: str | None = None
    type: BreakTypeMatch | None = None

    NESTED = {"type": BreakTypeMatch}


@dataclass(frozen=True, kw_only=True)
class BreakTypes(Record):
    registry: Registry | None = None
    sites: tuple[TypedSite, ...] = ()
    failures: tuple[TypedFailure, ...] = ()

    NESTED = {"registry": Registry, "sites": [TypedSite], "failures": [TypedFailure]}


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
    export_issues: tuple[ExportFinding, ...] = ()
    shapes: tuple[UnitShapes, ...] = ()
    recompiles: tuple[RecompiledUnit, ...] = ()
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
    recompile_limit: RecompileLimit = RecompileLimit.from_state({"text": ""})  # a partial document has none
    slowness: Slowness | None = None
    regions: RegionAccounting | None = None
    per_rank: RankReport | None = None

    NESTED = {"notices": [Notice], "units": [Unit], "break_sites": [BreakSite],
              "stack_trie": [StackTrieNode], "analysis_restarts": [Restart],
              "frame_skips": [FrameSkip], "export_issues": [ExportFinding], "shapes": [UnitShapes],
              "recompiles": [RecompiledUnit], "compile_time": CompileTime, "kernels": Kernels,
              "cache": {str: CacheCount},
              "unreadable": {str: Unreadable}, "verdict": [Figure], "speedup": Speedup, "run": Run,
              "break_types": BreakTypes, "recompile_groups": [RecompileGroup], "recompile_limit": RecompileLimit,
              "slowness": Slowness, "regions": RegionAccounting, "per_rank": RankReport}

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
            interval = (f" (S = {value:.2f}×, interval {speedup.low:.2f}–{speedup.high:.2f})"
                        if speedup.has_interval else "")
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
