"""A profiler trace joined to the TORCH_TRACE log of the same run: each profiled launch of a generated
kernel tied to its launch site in the code, which gives the one table of kernel time (source_time.py).
Apart from the table because the join is the hard part — which unit ran a call, which site a launch
was — and the table's readers need none of it.

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
whose nodes carry the user's line and the module they belong to (launch_attribution.py)."""

from __future__ import annotations

import bisect
from collections import defaultdict
from functools import cached_property
from itertools import islice
from pathlib import Path

from inspector.core.analysis.gpu_profile import QueuedGpuTime
from inspector.core.analysis.kernel_index import aten_name
from inspector.core.analysis.launch_attribution import LaunchAttribution
from inspector.core.analysis.profile_ops import COMPILED_REGION, kernel_name
from inspector.core.analysis.region_time import GRAPH_EVENT
from inspector.core.analysis.source_time import KernelFigure, Site, SourceTime, UnitFigure, unit_key
from inspector.core.model.session import CodeArtifact, CompileUnit, Session
from inspector.core.readers.profiler_trace import (
    MAX_CANDIDATES, ProfilerTrace, TraceEvent, paired_profile, read_profiler_trace,
)

BACKWARD_EVENT = "CompiledFunctionBackward"  # autograd's range around a compiled graph's backward


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


def _links_beside(folder: Path) -> bool:
    """Whether a JSON file where `paired_profile` looks for a log's trace is a link: this runs on every
    open, and the look at a candidate's first bytes would follow a link out of the folder."""
    places = [folder, folder.parent] if folder.is_dir() else [folder.parent, folder.parent.parent]
    for place in places:
        found = (path for pattern in ("*.json", "*.json.gz") for path in place.glob(pattern))
        if any(path.is_symlink() for path in islice(found, MAX_CANDIDATES)):
            return True
    return False


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
            figure = unit_figures.setdefault(unit_key(unit), UnitFigure(unit_key(unit)))
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
            figure = unit_figures[unit_key(unit)]
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
        attribution = LaunchAttribution()
        for site_id, times in by_site.items():
            nodes = attribution.add(sites_of[site_id], sum(times))
            row = row_of[site_id]
            row.nodes.extend(name for name in nodes if name not in row.nodes)
        units: dict[str, float] = {key: figure.kernel_us for key, figure in unit_figures.items()}
        not_profiled = sorted({row.name for row in kernels if not row.events})
        idle = sorted(dict.fromkeys(unit_key(unit) for unit in self.session.units
                                    if unit.output_code and unit_key(unit) not in unit_figures))
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
            by_id[unit_key(unit)].append(unit)
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
            notes.append(f"{self.queued.unlinked} GPU event(s) carry no link to a CPU call (correlation or External "
                         f"id): in no launch's time")
        if any(unit.provenance is None for unit in self.session.units if unit.output_code):
            notes.append("some compile units carry no provenance (capture with INDUCTOR_PROVENANCE=1): their kernels' "
                         "nodes come from Inductor's comments, which over-include")
        return notes


def _code_sites(unit: CompileUnit, artifact: CodeArtifact) -> list[Site]:
    sites = []
    for kernel in artifact.code.kernels:
        handles = kernel.debug_handles if len(kernel.debug_handles) == len(kernel.call_lines) \
            else [None] * len(kernel.call_lines)
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
