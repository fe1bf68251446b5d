"""A profiler trace joined to the TORCH_TRACE log of the same run: the time of every launch of a
generated kernel, per kernel and compile unit (measured), and through Inductor's provenance per FX
node, module and line of the user's model (apportioned where one kernel was made from several).

How a profiled launch is tied to the code: each compiled graph's call is a `## Call CompiledFxGraph
<cache key> ##` span (older torch: the `Torch-Compiled Region: f/c` around it), run by the unit of the
innermost `Torch-Compiled Region: f/c` open around it (else, as a backward under `CompiledFunction…
Backward` is, the unit whose FX graph cache key it names, else the unit whose forward ran last):
units that share kernel names are never confused, and a call with no key (a graph holding a
`torch.cond`) still has its unit. The kernels it
ran are the events inside it and in no graph call nested in it, named as the code names them
(`graph_0_cpp_fused_…` is `cpp_fused_…`, `aten::addmm` is `extern_kernels.addmm`, a Triton kernel's
CPU op its own name), outermost only. The k-th launch of a name in one call is the k-th launch site of
that name in the code (`call()` and the subgraphs of higher-order ops), whose provenance handle
(`cpp_fused_…:4`) names the post-grad nodes it computes; `postToPre` names the graph Dynamo captured,
whose nodes carry the user's line and the module they belong to.

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

import bisect
from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from itertools import islice
from pathlib import Path

from inspector.core.analysis.gpu_profile import QueuedGpuTime, microseconds
from inspector.core.analysis.kernel_index import NODE_STAGES, NodeOrigin, aten_name
from inspector.core.analysis.profile_ops import COMPILED_REGION, kernel_name
from inspector.core.analysis.region_time import GRAPH_EVENT
from inspector.core.graphs.graph_hierarchy import node_paths
from inspector.core.model.fx_graph_text import FxGraph
from inspector.core.model.output_code import Kernel
from inspector.core.model.session import CodeArtifact, CompileUnit, Session, base_stage
from inspector.core.readers.profiler_trace import (
    MAX_CANDIDATES, ProfilerTrace, TraceEvent, paired_profile, read_profiler_trace,
)

BACKWARD_EVENT = "CompiledFunctionBackward"  # autograd's range around a compiled graph's backward
NO_MODULE = "(no module)"  # a node of a plain function, or one the graph names no module for
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
class Figure:
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
    figure: Figure = field(default_factory=Figure)


@dataclass
class LineFigure:
    file: str | None  # None: the nodes carry no source line
    line: int | None
    code: str | None
    figure: Figure = field(default_factory=Figure)
    nodes: list[str] = field(default_factory=list)


@dataclass
class SourceTime:
    device: str  # GPU | CPU: what a launch's time is
    graph_calls: int  # compiled graph calls in the profile tied to the log's code
    unmatched_calls: int  # compiled graph calls in the profile the log has no code for
    kernels: list[KernelFigure]  # the one table: a row per call site of the profiled units, most time first
    units: dict[str, float]  # compile id → measured time of its launches
    nodes: list[NodeFigure]
    modules: dict[str, Figure]
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
        return _unit_key(unit) in self.unit_figures

    def kernel_time(self, unit: CompileUnit, kernel: Kernel) -> KernelTime | None:
        """`kernel` (a parse of one of `unit`'s codes) as profiled, its sites apart; None when `unit`
        was not profiled (its kernels' times are then "not profiled", never another unit's)."""
        figure = self.unit_figures.get(_unit_key(unit))
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


def source_time(session: Session, trace: ProfilerTrace) -> SourceTime:
    """The profile's kernel time attributed to `session`'s kernels, nodes, modules and lines."""
    return _Join(session, trace).result()


def session_source_time(session: Session) -> tuple[SourceTime | None, str]:
    """The one table of `session`'s kernel time, from the profiler trace of the same run (a capture's
    profile of the compiled run, or the trace beside a log: `paired_profile`), or None with why."""
    if session.results is None and _links_beside(Path(session.extracted_to or session.source)):
        return None, "a JSON file beside the log is a link: name the profile to read (summary --profile)"
    path, why = paired_profile(session)
    if path is None:
        return None, why
    try:
        trace = read_profiler_trace(path, root=path.parent)  # a link out of its folder is not followed
    except (OSError, ValueError) as error:
        return None, f"profiler trace not readable: {error}"
    return source_time(session, trace), ""


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


def _links_beside(folder: Path) -> bool:
    """Whether a JSON file where `paired_profile` looks for a log's trace is a link: this runs on every
    open, and the look at a candidate's first bytes would follow a link out of the folder."""
    places = [folder, folder.parent] if folder.is_dir() else [folder.parent, folder.parent.parent]
    for place in places:
        found = (path for pattern in ("*.json", "*.json.gz") for path in place.glob(pattern))
        if any(path.is_symlink() for path in islice(found, MAX_CANDIDATES)):
            return True
    return False


def _unit_key(unit: CompileUnit) -> str:
    return str(unit.compile_id).strip("[]")


class _Join:
    def __init__(self, session: Session, trace: ProfilerTrace):
        self.session, self.trace = session, trace
        self.queued = QueuedGpuTime(trace)
        self.codes = [(unit, artifact) for unit in session.units for artifact in unit.output_code]

    @cached_property
    def _sites(self) -> dict[int, dict[str, list[Site]]]:
        """Per code artifact (by id), its launch sites by the name they are profiled as, in code order."""
        found: dict[int, dict[str, list[Site]]] = {}
        for unit, artifact in self.codes:
            by_name: dict[str, list[Site]] = defaultdict(list)
            for site in _code_sites(unit, artifact):
                by_name[site.profiled_as].append(site)
            found[id(artifact)] = dict(by_name)
        return found

    def result(self) -> SourceTime:
        calls = self._graph_calls()
        by_site: dict[int, list[float]] = defaultdict(list)
        sites_of: dict[int, Site] = {}
        matched_codes: set[int] = set()
        unit_figures: dict[str, UnitFigure] = {}
        graph_calls = unmatched = unseen = 0
        graph_us = 0.0
        keyed = self._keyed_calls()
        for call, inside, candidates in calls:
            best = max(((unit, artifact, _align(inside, self._sites[id(artifact)])) for unit, artifact in candidates),
                       key=lambda found: len(found[2]), default=(None, None, []))
            unit, artifact, pairs = best
            if not pairs:
                if id(call) in keyed:
                    unseen += 1
                else:
                    unmatched += 1
                continue
            graph_calls += 1
            graph_us += call.duration_us
            matched_codes.add(id(artifact))
            figure = unit_figures.setdefault(_unit_key(unit), UnitFigure(_unit_key(unit)))
            figure.calls += 1
            figure.profiled_us += self._time(call)
            for event, site in pairs:
                sites_of[id(site)] = site
                by_site[id(site)].append(self._time(event))
        kernels: list[KernelFigure] = []
        row_of: dict[int, KernelFigure] = {}  # id of a site → its row
        for unit, artifact in self.codes:
            if id(artifact) not in matched_codes:
                continue
            index = next(at for at, code in enumerate(unit.output_code) if code is artifact)
            figure = unit_figures[_unit_key(unit)]
            for site in sorted((site for named in self._sites[id(artifact)].values() for site in named),
                               key=lambda site: site.call_line):
                times = by_site.get(id(site), ())
                row_of[id(site)] = KernelFigure(figure.unit, site.kernel.name, site.kernel.kind, site.call_line, index,
                                                len(times), sum(times), 0.0, kernel=site.kernel, rank=unit.rank,
                                                compile_unit=unit, launch_us=tuple(times))
                kernels.append(row_of[id(site)])
                figure.kernel_us += sum(times)
        for row in kernels:
            row.unit_us = unit_figures[row.unit].profiled_us
        attribution = _Attribution()
        for site_id, times in by_site.items():
            nodes = attribution.add(sites_of[site_id], sum(times))
            row = row_of[site_id]
            row.nodes.extend(name for name in nodes if name not in row.nodes)
        units: dict[str, float] = {key: figure.kernel_us for key, figure in unit_figures.items()}
        not_profiled = sorted({row.name for row in kernels if not row.events})
        idle = sorted(dict.fromkeys(_unit_key(unit) for unit in self.session.units
                                    if unit.output_code and _unit_key(unit) not in unit_figures))
        return SourceTime("GPU" if self.queued.gpu_events else "CPU", graph_calls, unmatched,
                          sorted(kernels, key=lambda row: -row.total_us), units,
                          sorted(attribution.nodes.values(), key=lambda row: -row.figure.total_us),
                          dict(sorted(attribution.modules.items(), key=lambda item: -item[1].total_us)),
                          sorted(attribution.lines.values(), key=lambda row: -row.figure.total_us),
                          attribution.unattributed_us, graph_us, not_profiled,
                          self._notes(calls, not_profiled, kernels)
                          + ([f"{unseen} graph call(s) of the log's code show none of its launches: a CPU trace "
                              f"names Inductor's C++ kernels only with "
                              f"torch._inductor.config.cpp.enable_kernel_profile = True"]
                             if unseen and not self.queued.gpu_events else []),
                          unit_figures, idle, str(self.trace.path), unseen_launch_calls=unseen)

    def _graph_calls(self) -> list[tuple[TraceEvent, list[TraceEvent], list[tuple[CompileUnit, CodeArtifact]]]]:
        """Each compiled graph call, the events it ran itself (in no graph call nested in it), and the
        code it may have run: its unit's, the unit being that of the innermost compiled region open
        around it, else the unit(s) whose FX graph cache key it names, else any. Without graph-call
        events (older torch), each compiled region stands for its graph call. One sweep per thread
        with a stack of the spans still open: linear in the events however the spans overlap."""
        by_key: dict[str, list[CompileUnit]] = defaultdict(list)
        for unit in self.session.units:
            for event in unit.cache_events:
                key = event.detail.get("key")
                if event.cache == "fx_graph" and isinstance(key, str) and all(unit is not u for u in by_key[key]):
                    by_key[key].append(unit)
        by_id: dict[str, list[CompileUnit]] = defaultdict(list)
        for unit in self.session.units:
            by_id[_unit_key(unit)].append(unit)
        if self.trace.rank is not None and any(unit.rank == self.trace.rank for unit in self.session.units):
            # a rank's trace ran that rank's code: other ranks share its compile ids and keys
            by_key = {key: [unit for unit in units if unit.rank == self.trace.rank] for key, units in by_key.items()}
            by_id = defaultdict(list, {key: [unit for unit in units if unit.rank == self.trace.rank]
                                       for key, units in by_id.items()})
        codes_of: dict[int, list[tuple[CompileUnit, CodeArtifact]]] = defaultdict(list)
        for unit, artifact in self.codes:
            codes_of[id(unit)].append((unit, artifact))
        has_calls = any(event.name.startswith(GRAPH_EVENT) for event in self.trace.events)
        marker = GRAPH_EVENT if has_calls else COMPILED_REGION
        found = []
        forwards: list[tuple[float, list[CompileUnit]]] = []  # (start, units) of each call a region ties
        untied: list[tuple[int, bool]] = []  # calls neither a region nor a key ties: (index in found, in a backward)
        for events in self.trace.by_thread().values():
            regions: list[TraceEvent] = []  # open compiled regions, innermost last
            backwards: list[TraceEvent] = []  # open CompiledFunctionBackward spans
            open_calls: list[tuple[TraceEvent, list[TraceEvent]]] = []  # open graph calls with their events
            for event in events:
                for spans in (regions, backwards):
                    while spans and event.start_us >= spans[-1].end_us:
                        spans.pop()
                while open_calls and event.start_us > open_calls[-1][0].end_us:
                    open_calls.pop()
                if event.name.startswith(marker):
                    region = regions[-1] if regions else (event if not has_calls else None)
                    units = self._units_of(event, region, by_key, by_id)
                    if units is None:
                        if region is None:
                            untied.append((len(found), bool(backwards)))
                        units = self.session.units
                    elif region is not None:
                        forwards.append((event.start_us, units))
                    inside: list[TraceEvent] = []
                    found.append((event, inside, [pair for unit in units for pair in codes_of[id(unit)]]))
                    open_calls.append((event, inside))
                elif open_calls:
                    open_calls[-1][1].append(event)
                if event.name.startswith(COMPILED_REGION):
                    regions.append(event)
                elif event.name.startswith(BACKWARD_EVENT):
                    backwards.append(event)
        # A backward whose call names no known FX graph key (the FX graph cache off or bypassed) runs
        # the backward of the graph whose forward ran last before it, on any thread (autograd's own)
        forwards.sort(key=lambda item: item[0])
        starts = [start for start, _ in forwards]
        for index, in_backward in untied:
            call, inside, _ = found[index]
            before = bisect.bisect_left(starts, call.start_us) - 1
            if before < 0:
                continue
            codes = [pair for unit in forwards[before][1] for pair in codes_of[id(unit)]]
            if in_backward:
                codes = [pair for pair in codes if pair[1].code.role == "backward"] or codes
            found[index] = (call, inside, codes)
        return found

    def _keyed_calls(self) -> set[int]:
        """The graph calls (by id) whose FX graph cache key a unit of the log holds."""
        keys = {event.detail.get("key") for unit in self.session.units for event in unit.cache_events
                if event.cache == "fx_graph"}
        return {id(event) for event in self.trace.events
                if event.name.startswith(GRAPH_EVENT) and event.name[len(GRAPH_EVENT):].strip(" #") in keys}

    def _units_of(self, call: TraceEvent, region: TraceEvent | None, by_key: dict,
                  by_id: dict) -> list[CompileUnit] | None:
        keyed = by_key.get(call.name[len(GRAPH_EVENT):].strip(" #"), []) if call.name.startswith(GRAPH_EVENT) else []
        running = by_id.get(region.name[len(COMPILED_REGION):].strip(": "), []) if region is not None else []
        if running and keyed:
            both = [unit for unit in running if any(unit is other for other in keyed)]
            return both or keyed
        return running or keyed or None  # None: nothing ties the call to a unit

    def _time(self, event: TraceEvent) -> float:
        return self.queued.within(event) if self.queued.gpu_events else event.duration_us

    def _notes(self, calls, not_profiled: list[str], kernels: list[KernelFigure]) -> list[str]:
        notes = []
        if not calls:
            notes.append("the profile holds no compiled graph calls ('## Call CompiledFxGraph' or "
                         "'Torch-Compiled Region' spans)")
        cpp = sorted({row.name for row in kernels if row.kind == "cpp" and not row.events})
        if cpp and not self.queued.gpu_events and not any(row.kind == "cpp" and row.events for row in kernels):
            notes.append(f"{len(cpp)} C++ kernel(s) never appear in the profile: Inductor names them there only with "
                         f"torch._inductor.config.cpp.enable_kernel_profile = True; their time is in the graph calls' "
                         f"own time")
        if self.queued.unlinked:
            notes.append(f"{self.queued.unlinked} GPU event(s) carry no link to a CPU call (correlation or External id): "
                         f"in no launch's time")
        if any(unit.provenance is None for unit in self.session.units if unit.output_code):
            notes.append("some compile units carry no provenance (capture with INDUCTOR_PROVENANCE=1): their kernels' "
                         "nodes come from Inductor's comments, which over-include")
        return notes


def _code_sites(unit: CompileUnit, artifact: CodeArtifact) -> list[Site]:
    sites = []
    for kernel in artifact.code.kernels:
        handles = kernel.debug_handles if len(kernel.debug_handles) == len(kernel.call_lines) else [None] * len(kernel.call_lines)
        profiled = aten_name(kernel.name) if kernel.kind in ("extern", "fallback") else kernel.name
        sites.extend(Site(unit, kernel, line, handle, profiled) for line, handle in zip(kernel.call_lines, handles))
    return sorted(sites, key=lambda site: artifact.code.run_order(site.call_line))  # the order a call runs them


def _align(events: list[TraceEvent], by_name: dict[str, list[Site]]) -> list[tuple[TraceEvent, Site]]:
    """The events of one graph call paired with the launch sites they ran: the k-th event of a name
    is the k-th site of that name in the order the call runs the code (`OutputCode.run_order`: a
    higher-order op's subgraph is written above `call()` and runs from inside it), a site no event ran
    left over; an event named like no site is left out, as is one inside an event already paired (an
    extern kernel's own ATen calls)."""
    used: dict[str, int] = defaultdict(int)
    pairs, paired_until = [], float("-inf")
    for event in events:
        name = kernel_name(event.name)
        named = by_name.get(name)
        if named is None or event.start_us < paired_until or used[name] >= len(named):
            continue
        pairs.append((event, named[used[name]]))
        used[name] += 1
        paired_until = event.end_us
    return pairs


def _names_by_key(provenance: dict, mapping: str) -> dict[str, list[str]]:
    """One of provenance's maps (name → node names), what of it has that shape: a log may hold anything."""
    found = provenance.get(mapping)
    if not isinstance(found, dict):
        return {}
    return {key: [name for name in names if isinstance(name, str)] for key, names in found.items()
            if isinstance(names, list)}


class _Attribution:
    """Launch times given to the nodes each launch was made from, and through them to lines and modules."""

    def __init__(self):
        self.nodes: dict[tuple[str, str], NodeFigure] = {}
        self.lines: dict[tuple, LineFigure] = {}
        self.modules: dict[str, Figure] = defaultdict(Figure)
        self.unattributed_us = 0.0
        self._paths: dict[int, dict[str, tuple[str, ...]]] = {}

    def add(self, site: Site, us: float) -> list[str]:
        """Gives `us` (the site's profiled launches summed) to its nodes; the names of those nodes."""
        nodes = self._origins(site)
        if not nodes:
            self.unattributed_us += us
            return []
        share = us / len(nodes)
        unit = str(site.unit.compile_id).strip("[]")
        lines = {(origin.file, origin.line) for origin, _ in nodes}
        modules = {module for _, module in nodes}
        for origin, module in nodes:
            row = self.nodes.setdefault((unit, origin.name), NodeFigure(unit, origin, module))
            row.figure.add(share, len(nodes) == 1)
            line = self.lines.setdefault((origin.file, origin.line), LineFigure(origin.file, origin.line, origin.code))
            line.figure.add(share, len(lines) == 1)
            if origin.name not in line.nodes:
                line.nodes.append(origin.name)
            self.modules[module].add(share, len(modules) == 1)
        return [origin.name for origin, _ in nodes]

    def _origins(self, site: Site) -> list[tuple[NodeOrigin, str]]:
        """The nodes of the graph Dynamo captured that `site` computes, with their modules: through
        the post-grad nodes its provenance handle names (else the kernel's own source nodes) and
        `postToPre`. Post-grad nodes no pre-grad node became (pattern passes' own nodes) are left
        out when others are mapped, and stand for themselves when none is."""
        unit, kernel, provenance = site.unit, site.kernel, site.unit.provenance or {}
        to_post = {**_names_by_key(provenance, "tritonCodeToPost"), **_names_by_key(provenance, "cppCodeToPost")}
        post = to_post.get(site.handle) if site.handle else None
        if post is None and kernel.source_origin == "provenance":
            post = kernel.source_nodes
        if post is not None:
            to_pre = _names_by_key(provenance, "postToPre")
            pre = list(dict.fromkeys(name for node in post for name in to_pre.get(node, ())))
            if pre:
                return self._named(unit, pre, NODE_STAGES["comment"])
            return self._named(unit, list(dict.fromkeys(post)), NODE_STAGES["provenance"])
        if kernel.source_origin == "comment":
            return self._named(unit, kernel.source_nodes, NODE_STAGES["comment"])
        return []

    def _named(self, unit: CompileUnit, names: list[str], stages: tuple[str, ...]) -> list[tuple[NodeOrigin, str]]:
        graph = next((artifact.graph for stage, artifact in unit.graphs.items() if base_stage(stage) in stages), None)
        paths = self._module_paths(graph) if graph is not None else {}
        found = []
        for name in names:
            node = graph.node(name) if graph is not None else None
            source = node.source if node is not None else None
            origin = NodeOrigin(name, node.target if node else "?", source.file if source else None,
                                source.line if source else None, source.code if source else None)
            path = paths.get(name)
            by_source = not path or path[-1].startswith("line ")  # no module evidence: grouped by line
            found.append((origin, NO_MODULE if by_source else ".".join(path)))
        return found

    def _module_paths(self, graph: FxGraph) -> dict[str, tuple[str, ...]]:
        if id(graph) not in self._paths:
            self._paths[id(graph)] = node_paths(graph)
        return self._paths[id(graph)]
