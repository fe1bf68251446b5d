"""The one table of kernel time, read from a profiler trace joined to the TORCH_TRACE log of the same
run (profile_join.py makes it): the time of every launch of a generated kernel, per kernel and compile
unit (measured), and per FX node, module and line of the user's model (apportioned where one kernel was
made from several, launch_attribution.py). Its rows and how a kernel's time is said in words live here,
apart from the join, because every view and output reads them and none needs to know how they were made.

The one table of kernel time (`SourceTime.sites`): one row per (unit, output code, kernel, call site),
never merged by name, with its launches, total and share of its unit's profiled time (the unit's
graph calls: their CPU spans, or on a GPU trace the GPU time they queued), so one unit's shares add
up to at most 100 %. A unit with code that no profiled call ran is "not profiled".

What is measured: a launch's own time — on a GPU trace the GPU time of the kernels it queued (by
correlation), on a CPU-only trace its CPU span (Inductor's C++ kernels run inline, and are named
only with `torch._inductor.config.cpp.enable_kernel_profile = True`). What is apportioned: a launch
made from k nodes gives each 1/k of its time; a line or module is `measured` for the launches whose
nodes all lie in it, and the shares of launches split with others are its `apportioned` time."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

from inspector.core.analysis.gpu_profile import microseconds
from inspector.core.analysis.kernel_index import NodeOrigin
from inspector.core.model.output_code import Kernel
from inspector.core.model.session import CompileUnit

NOT_PROFILED = "not profiled"  # a unit whose code no profiled call ran, and its kernels


@dataclass(frozen=True)
class Site:
    """One launch of a kernel in a graph's `call()`, in call order."""

    unit: CompileUnit
    kernel: Kernel
    call_line: int  # in the output code
    handle: str | None  # `kernel:debug_handle`, what provenance maps to post-grad nodes
    profiled_as: str  # the name its event carries, less the `graph_N_` of a C++ kernel


@dataclass
class RowTime:
    """Time given to one row: measured (launches wholly its own) and apportioned (shares of
    launches split with other rows), summed over every profiled call."""

    measured_us: float = 0.0
    apportioned_us: float = 0.0

    @property
    def total_us(self) -> float:
        return self.measured_us + self.apportioned_us

    @property
    def basis(self) -> str:
        """measured | apportioned | partly apportioned: how far the figure is the profile's own."""
        if not self.apportioned_us:
            return "measured"
        return "apportioned" if not self.measured_us else "partly apportioned"

    def add(self, us: float, whole: bool) -> None:
        if whole:
            self.measured_us += us
        else:
            self.apportioned_us += us


@dataclass
class KernelFigure:
    """One call site's launches in the profile: a row of the one table of kernel time."""

    unit: str  # compile id, "0/0"
    name: str
    kind: str
    call_line: int  # of the launch in its output code
    code: int = 0  # which of the unit's output codes (forward, backward, …)
    events: int = 0  # launches profiled
    total_us: float = 0.0  # measured: the launches' own time summed
    unit_us: float = 0.0  # what its share divides: the unit's profiled graph calls
    nodes: list[str] = field(default_factory=list)  # the nodes its time goes to
    kernel: Kernel | None = field(default=None, repr=False, compare=False)  # the parse it is a site of
    rank: int | None = None
    compile_unit: CompileUnit | None = field(default=None, repr=False, compare=False)
    launch_us: tuple[float, ...] = field(default=(), repr=False)  # each launch's time: the samples of the total

    @property
    def launches(self) -> int:
        return self.events

    @property
    def spread_us(self) -> tuple[float, float, float] | None:
        """(fastest, median, slowest) launch: how far one launch's time varied across the profiled calls."""
        if not self.launch_us:
            return None
        ordered = sorted(self.launch_us)
        return ordered[0], ordered[len(ordered) // 2], ordered[-1]

    @property
    def per_launch_us(self) -> float | None:
        return self.total_us / self.events if self.events else None

    @property
    def share(self) -> float | None:
        """Of its unit's profiled time (None when the unit's calls took no measurable time)."""
        return self.total_us / self.unit_us if self.unit_us > 0 else None


@dataclass
class UnitFigure:
    """What a unit's kernel shares divide: its compiled graph calls that the profile holds."""

    unit: str
    calls: int = 0  # graph calls of its code profiled
    profiled_us: float = 0.0  # their CPU spans (GPU trace: the GPU time they queued)
    kernel_us: float = 0.0  # its named launches, a part of profiled_us


@dataclass(frozen=True)
class KernelTime:
    """One kernel of one unit's code in the profile, its call sites kept apart (`sites`) and summed
    only over that kernel's own sites: what the Code tab, the graph's node details and the diff show."""

    unit: str
    sites: tuple[KernelFigure, ...]
    unit_us: float
    calls: int  # the unit's profiled graph calls
    suspect: str = ""  # why not to trust the time (the profile disagrees with the measured call)

    @property
    def launches(self) -> int:
        return sum(site.events for site in self.sites)

    @property
    def total_us(self) -> float:
        return sum(site.total_us for site in self.sites)

    @property
    def per_launch_us(self) -> float | None:
        return self.total_us / self.launches if self.launches else None

    @property
    def us_per_call(self) -> float:
        """Per profiled call of its unit's graph."""
        return self.total_us / self.calls if self.calls else 0.0

    @property
    def share(self) -> float | None:
        return self.total_us / self.unit_us if self.unit_us > 0 else None


@dataclass
class NodeFigure:
    unit: str
    origin: NodeOrigin
    module: str
    figure: RowTime = field(default_factory=RowTime)


@dataclass
class LineFigure:
    file: str | None  # None: the nodes carry no source line
    line: int | None
    code: str | None
    figure: RowTime = field(default_factory=RowTime)
    nodes: list[str] = field(default_factory=list)


@dataclass
class SourceTime:
    device: str  # GPU | CPU: what a launch's time is
    graph_calls: int  # compiled graph calls in the profile tied to the log's code
    unmatched_calls: int  # compiled graph calls in the profile the log has no code for
    kernels: list[KernelFigure]  # the one table: a row per call site of the profiled units, most time first
    units: dict[str, float]  # compile id → measured time of its launches
    nodes: list[NodeFigure]
    modules: dict[str, RowTime]
    lines: list[LineFigure]
    unattributed_us: float  # launches whose nodes the log does not name
    graph_us: float  # the profiled graph calls' own spans (CPU): what the named launches are a part of
    not_profiled: list[str] = field(default_factory=list)  # kernels of matched code never seen in the profile
    notes: list[str] = field(default_factory=list)
    unit_figures: dict[str, UnitFigure] = field(default_factory=dict)  # the profiled units, by compile id
    units_not_profiled: list[str] = field(default_factory=list)  # units with code that no profiled call ran
    profile: str = ""  # the trace's path
    suspect: str = ""  # set by the session's profile check when the profile disagrees with the measured call
    # calls of code the log holds (their FX graph cache key is in it) in which the profile shows none of that
    # code's launches: on a CPU trace, C++ kernels without `cpp.enable_kernel_profile`
    unseen_launch_calls: int = 0

    @property
    def total_us(self) -> float:
        return sum(self.units.values())

    @property
    def sites(self) -> list[KernelFigure]:
        return self.kernels

    def profiled(self, unit: CompileUnit) -> bool:
        return unit_key(unit) in self.unit_figures

    def kernel_time(self, unit: CompileUnit, kernel: Kernel) -> KernelTime | None:
        """`kernel` (a parse of one of `unit`'s codes) as profiled, its sites apart; None when `unit`
        was not profiled (its kernels' times are then "not profiled", never another unit's)."""
        figure = self.unit_figures.get(unit_key(unit))
        if figure is None:
            return None
        sites = self._by_kernel.get(id(kernel), ())
        return KernelTime(figure.unit, tuple(sites), figure.profiled_us, figure.calls, self.suspect)

    @cached_property
    def _by_kernel(self) -> dict[int, list[KernelFigure]]:
        found: dict[int, list[KernelFigure]] = defaultdict(list)
        for row in self.kernels:
            if row.kernel is not None:
                found[id(row.kernel)].append(row)
        return found


def described(time: KernelTime | None, table: SourceTime | None) -> str:
    """A kernel's time in words, as the Code tab's tooltip and the graph's node details say it: per
    launch × launches = total, its share of its unit's profiled time, each call site apart."""
    if table is None:
        return "no profile of this run (a capture's profile, or a profiler trace beside the log)"
    if time is None:
        return f"{NOT_PROFILED}: the profile holds no call of this unit's code"
    if not time.launches:
        return f"{NOT_PROFILED}: no launch of it in the {time.calls} profiled call(s) of [{time.unit}]'s code"
    share = f", {time.share:.1%} of [{time.unit}]'s profiled time ({microseconds(time.unit_us)})" \
        if time.share is not None else ""
    text = (f"{microseconds(time.per_launch_us)} per launch × {time.launches} launches = "
            f"{microseconds(time.total_us)}{share}")
    spreads = [site.spread_us for site in time.sites if site.spread_us]
    if len(time.sites) == 1 and spreads:
        text += "; one launch: " + _spread(spreads[0])
    if len(time.sites) > 1:
        text += "; per call site: " + ", ".join(
            f"line {site.call_line}: {microseconds(site.total_us)} ×{site.events}"
            + (f" ({_spread(site.spread_us)})" if site.spread_us else "") for site in time.sites)
    return text


def _spread(spread: tuple[float, float, float]) -> str:
    fastest, median, slowest = spread
    return f"{microseconds(fastest)} to {microseconds(slowest)}, median {microseconds(median)}"


def unit_key(unit: CompileUnit) -> str:
    """A unit's key in the table (`units`, `unit_figures`, a row's `unit`): its compile id, "0/0"."""
    return str(unit.compile_id).strip("[]")
