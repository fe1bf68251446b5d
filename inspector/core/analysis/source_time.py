"""A profiler trace joined to the TORCH_TRACE log of the same run: the time of every launch of a
generated kernel, per kernel and compile unit (measured), and through Inductor's provenance per FX
node, module and line of the user's model (apportioned where one kernel was made from several).

How a profiled launch is tied to the code: each compiled graph's call is a `## Call CompiledFxGraph
<cache key> ##` span (older torch: the `Torch-Compiled Region: f/c` around it); the kernels it ran
are the outermost events inside it named as the code names them (`graph_0_cpp_fused_…` is
`cpp_fused_…`, `aten::addmm` is `extern_kernels.addmm`, a Triton kernel's CPU op its own name). In
one call they run in the order of the graph's `call()`, so the k-th event is the k-th launch site,
whose provenance handle (`cpp_fused_…:4`) names the post-grad nodes it computes; `postToPre` names
the graph Dynamo captured, whose nodes carry the user's line and the module they belong to.

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

from inspector.core.analysis.gpu_profile import QueuedGpuTime
from inspector.core.analysis.kernel_index import NODE_STAGES, NodeOrigin, aten_name
from inspector.core.analysis.profile_ops import COMPILED_REGION, kernel_name
from inspector.core.analysis.region_time import GRAPH_EVENT
from inspector.core.graphs.graph_hierarchy import node_paths
from inspector.core.model.fx_graph_text import FxGraph
from inspector.core.model.output_code import Kernel
from inspector.core.model.session import CodeArtifact, CompileUnit, Session, base_stage
from inspector.core.readers.profiler_trace import ProfilerTrace, TraceEvent

NO_MODULE = "(no module)"  # a node of a plain function, or one the graph names no module for


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
    unit: str  # compile id, "0/0"
    name: str
    kind: str
    sites: int  # launch sites in the graph's call()
    events: int = 0  # launches profiled
    total_us: float = 0.0  # measured
    nodes: list[str] = field(default_factory=list)  # the nodes its time goes to


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
    kernels: list[KernelFigure]  # most time first
    units: dict[str, float]  # compile id → measured time of its launches
    nodes: list[NodeFigure]
    modules: dict[str, Figure]
    lines: list[LineFigure]
    unattributed_us: float  # launches whose nodes the log does not name
    graph_us: float  # the profiled graph calls' own spans (CPU): what the named launches are a part of
    not_profiled: list[str] = field(default_factory=list)  # kernels of matched code never seen in the profile
    notes: list[str] = field(default_factory=list)
    # calls of code the log holds (their FX graph cache key is in it) in which the profile shows none of that
    # code's launches: on a CPU trace, C++ kernels without `cpp.enable_kernel_profile`
    unseen_launch_calls: int = 0

    @property
    def total_us(self) -> float:
        return sum(self.units.values())


def source_time(session: Session, trace: ProfilerTrace) -> SourceTime:
    """The profile's kernel time attributed to `session`'s kernels, nodes, modules and lines."""
    return _Join(session, trace).result()


class _Join:
    def __init__(self, session: Session, trace: ProfilerTrace):
        self.session, self.trace = session, trace
        self.queued = QueuedGpuTime(trace)
        self.threads = trace.by_thread()
        self.starts = {thread: [event.start_us for event in events] for thread, events in self.threads.items()}
        self.codes = [(unit, artifact) for unit in session.units for artifact in unit.output_code]

    @cached_property
    def _sites(self) -> dict[int, list[Site]]:
        """Per code artifact (by id), its launch sites in call order."""
        return {id(artifact): _code_sites(unit, artifact) for unit, artifact in self.codes}

    def result(self) -> SourceTime:
        calls = self._graph_calls()
        kernels: dict[tuple[str, str], KernelFigure] = {}
        by_site: dict[int, list[float]] = defaultdict(list)
        sites_of: dict[int, Site] = {}
        matched_codes: set[int] = set()
        graph_calls = unmatched = unseen = 0
        graph_us = 0.0
        keyed = self._keyed_calls()
        for call, candidates in calls:
            inside = self._events_inside(call)
            best = max(((artifact, _align(inside, self._sites[id(artifact)])) for _, artifact in candidates),
                       key=lambda found: len(found[1]), default=(None, []))
            artifact, pairs = best
            if not pairs:
                if id(call) in keyed:
                    unseen += 1
                else:
                    unmatched += 1
                continue
            graph_calls += 1
            graph_us += call.duration_us
            matched_codes.add(id(artifact))
            for event, site in pairs:
                sites_of[id(site)] = site
                by_site[id(site)].append(self._time(event))
        for unit, artifact in self.codes:
            for site in self._sites[id(artifact)]:
                key = (str(unit.compile_id).strip("[]"), site.kernel.name)
                row = kernels.get(key)
                if row is None and id(artifact) in matched_codes:
                    row = kernels[key] = KernelFigure(key[0], site.kernel.name, site.kernel.kind, 0)
                if row is not None:
                    row.sites += 1
                    row.events += len(by_site.get(id(site), ()))
                    row.total_us += sum(by_site.get(id(site), ()))
        attribution = _Attribution()
        for site_id, times in by_site.items():
            site = sites_of[site_id]
            nodes = attribution.add(site, sum(times))
            row = kernels[(str(site.unit.compile_id).strip("[]"), site.kernel.name)]
            row.nodes.extend(name for name in nodes if name not in row.nodes)
        units: dict[str, float] = defaultdict(float)
        for row in kernels.values():
            units[row.unit] += row.total_us
        not_profiled = sorted({row.name for row in kernels.values() if not row.events})
        return SourceTime("GPU" if self.queued.gpu_events else "CPU", graph_calls, unmatched,
                          sorted(kernels.values(), key=lambda row: -row.total_us), dict(units),
                          sorted(attribution.nodes.values(), key=lambda row: -row.figure.total_us),
                          dict(sorted(attribution.modules.items(), key=lambda item: -item[1].total_us)),
                          sorted(attribution.lines.values(), key=lambda row: -row.figure.total_us),
                          attribution.unattributed_us, graph_us, not_profiled, self._notes(calls, not_profiled, kernels)
                          + ([f"{unseen} graph call(s) of the log's code show none of its launches: a CPU trace "
                              f"names Inductor's C++ kernels only with "
                              f"torch._inductor.config.cpp.enable_kernel_profile = True"]
                             if unseen and not self.queued.gpu_events else []),
                          unseen_launch_calls=unseen)

    def _graph_calls(self) -> list[tuple[TraceEvent, list[tuple[CompileUnit, CodeArtifact]]]]:
        """Each compiled graph call with the code it may have run: the code of the unit whose FX graph
        cache key it names (else every code); without graph-call events, each compiled region with
        its unit's code."""
        by_key = {event.detail.get("key"): unit for unit in self.session.units for event in unit.cache_events
                  if event.cache == "fx_graph"}
        calls = [event for event in self.trace.events if event.name.startswith(GRAPH_EVENT)]
        if calls:
            found = []
            for call in calls:
                unit = by_key.get(call.name[len(GRAPH_EVENT):].strip(" #"))
                found.append((call, [pair for pair in self.codes if unit is None or pair[0] is unit]))
            return found
        by_id = {str(unit.compile_id).strip("[]"): unit for unit in self.session.units}
        regions = [event for event in self.trace.events if event.name.startswith(COMPILED_REGION)]
        return [(region, [pair for pair in self.codes if pair[0] is by_id.get(region.name[len(COMPILED_REGION):].strip(": "))])
                for region in regions]

    def _keyed_calls(self) -> set[int]:
        """The graph calls (by id) whose FX graph cache key a unit of the log holds."""
        keys = {event.detail.get("key") for unit in self.session.units for event in unit.cache_events
                if event.cache == "fx_graph"}
        return {id(event) for event in self.trace.events
                if event.name.startswith(GRAPH_EVENT) and event.name[len(GRAPH_EVENT):].strip(" #") in keys}

    def _events_inside(self, call: TraceEvent) -> list[TraceEvent]:
        """The events of `call`'s thread that started inside it, outermost first."""
        events, starts = self.threads[call.thread], self.starts[call.thread]
        index = bisect.bisect_left(starts, call.start_us)
        inside = []
        while index < len(events) and events[index].start_us <= call.end_us:
            if events[index] is not call:
                inside.append(events[index])
            index += 1
        return inside

    def _time(self, event: TraceEvent) -> float:
        return self.queued.within(event) if self.queued.gpu_events else event.duration_us

    def _notes(self, calls, not_profiled: list[str], kernels: dict) -> list[str]:
        notes = []
        if not calls:
            notes.append("the profile holds no compiled graph calls ('## Call CompiledFxGraph' or "
                         "'Torch-Compiled Region' spans)")
        cpp = [name for name in not_profiled if any(row.kind == "cpp" and row.name == name for row in kernels.values())]
        if cpp and not self.queued.gpu_events:
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
    return sorted(sites, key=lambda site: site.call_line)


def _align(events: list[TraceEvent], sites: list[Site]) -> list[tuple[TraceEvent, Site]]:
    """The events of one graph call paired with the launch sites they ran, in call order: an event
    named like no site is left out, as is one inside an event already paired (an extern kernel's
    own ATen calls), and a site no event ran is skipped."""
    names = {site.profiled_as for site in sites}
    pairs, next_site, paired_until = [], 0, float("-inf")
    for event in events:
        name = kernel_name(event.name)
        if name not in names or event.start_us < paired_until:
            continue
        for index in range(next_site, len(sites)):
            if sites[index].profiled_as == name:
                pairs.append((event, sites[index]))
                next_site, paired_until = index + 1, event.end_us
                break
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
