"""Figures derived from a session: break sites, fusion (N_ops, N_kernels, K), cache hit rates and
compile time per stage. Every figure is None when the data behind it is missing, never a silent 0."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from inspector.core.analysis.compile_wall import TORCH_TIMED, Concurrency, wall_breakdown
from inspector.core.analysis.unit_origin import eager_trigger
from inspector.core.model.records import Record, live
from inspector.core.model.session import CompileUnit, GraphArtifact, GraphBreak, Session, base_stage

# The graph whose ops Inductor turned into kernels, best first.
KERNEL_SOURCE_STAGES = ("post_grad", "aot_inference", "aot_forward")


@dataclass(frozen=True)
class BreakSite(Record):
    """All breaks at one place in the user's code (recompiles and restarts repeat them); `via` only
    for a site in library code, so summaries of logs without one stay as they were."""

    location: str
    reason: str
    kind: str
    count: int  # every break there
    code: str | None
    hints: tuple[str, ...]
    compile_ids: tuple[str, ...]  # sorted
    via: str = ""  # the library frames the user's line called into ("via copy.py:153"), '' for none
    breaks: tuple[GraphBreak, ...] = live()  # the breaks themselves (a site read back from a summary: none)


def break_sites(session: Session) -> list[BreakSite]:
    sites: dict[tuple, list[GraphBreak]] = {}
    for brk in session.breaks:
        sites.setdefault((brk.site, brk.reason), []).append(brk)
    return [_site(breaks) for breaks in sites.values()]


def _site(breaks: list[GraphBreak]) -> BreakSite:
    first = breaks[0]
    return BreakSite(str(first.location) if first.location else first.reason, first.reason, first.kind, len(breaks),
                     first.location.code if first.location else None, tuple(first.hints),
                     tuple(sorted({str(brk.compile_id) for brk in breaks})), via=first.via_text, breaks=tuple(breaks))


@dataclass
class FusionStats:
    """Ops and kernels of the graphs Inductor generated code from. Kernels are counted two ways, each
    for its own figure: `n_kernels` per kernel the output code holds (a generated kernel at its
    definition, a library call at each call site: the kernel list every view shows), `n_launch_sites`
    per launch in the graph's call function (a generated kernel once per call to it, a library call
    once per call) — the denominator of K, since a launch is what a graph call pays for."""

    n_ops: int | None
    n_kernels: int
    n_fused_kernels: int
    n_eliminated: int | None  # ops that became no kernel at all (views folded away), from provenance
    source: str  # which graph the ops were counted in
    n_launch_sites: int = 0
    n_fused: int | None = None  # ops inside generated kernels made from at least two ops; None: sources unknown

    @property
    def fusion_ratio(self) -> float | None:
        """K = N_ops / N_launch_sites: graph ops per kernel launch of one call of the graph."""
        return self.n_ops / self.n_launch_sites if self.n_ops is not None and self.n_launch_sites else None


def launch_sites(kernel) -> int:
    """How many times one call of the graph launches `kernel`: its call sites in the call function
    (a library call is listed once per call site already); a kernel whose calls were not found counts once."""
    return len(kernel.call_lines) or 1


def fused_ops(kernels, op_names: set[str]) -> int | None:
    """N_fused: the graph ops that ended up inside a generated kernel made from more than one op — a
    lone matmul or a library call is not fusion. None when a generated kernel's source ops are unknown."""
    generated = [kernel for kernel in kernels if kernel.fused]
    if any(kernel.source_origin is None for kernel in generated):
        return None
    inside = set()
    for kernel in generated:
        ops = {node for node in kernel.source_nodes if node in op_names}
        if len(ops) > 1:
            inside |= ops
    return len(inside)


def kernel_graphs(unit: CompileUnit) -> list[GraphArtifact]:
    """The graphs of the stage the unit's kernels were made from (one per AOT graph): what its fusion
    figures count ops in."""
    stage = _kernel_stage(unit)
    return [artifact for name, artifact in unit.graphs.items() if base_stage(name) == stage]


def unit_fusion(unit: CompileUnit) -> FusionStats:
    kernels = unit.kernels
    graphs = kernel_graphs(unit)
    n_ops = sum(len(artifact.op_names) for artifact in graphs) if graphs else None
    n_eliminated = None
    if graphs and kernels and all(kernel.source_origin == "provenance" for kernel in kernels):
        covered = {node for kernel in kernels for node in kernel.source_nodes}
        n_eliminated = sum(1 for artifact in graphs for name in artifact.op_names if name not in covered)
    n_fused = fused_ops(kernels, {name for artifact in graphs for name in artifact.op_names}) if graphs else None
    return FusionStats(n_ops, len(kernels), sum(1 for kernel in kernels if kernel.fused), n_eliminated,
                       _kernel_stage(unit) or "none", sum(launch_sites(kernel) for kernel in kernels), n_fused)


def _kernel_stage(unit: CompileUnit) -> str | None:
    for stage in KERNEL_SOURCE_STAGES:
        if stage in unit.graphs:
            return stage
    return None


def session_fusion(session: Session, per_unit_fusion: dict[CompileUnit, FusionStats] | None = None) -> FusionStats:
    """Fusion over the units that produced code; `per_unit_fusion` reuses figures already computed."""
    known = per_unit_fusion or {}
    per_unit = [known.get(unit) or unit_fusion(unit) for unit in session.units if unit.output_code]
    n_ops = [stats.n_ops for stats in per_unit]
    eliminated = [stats.n_eliminated for stats in per_unit]
    fused = [stats.n_fused for stats in per_unit]
    return FusionStats(
        sum(n_ops) if per_unit and None not in n_ops else None,
        sum(stats.n_kernels for stats in per_unit),
        sum(stats.n_fused_kernels for stats in per_unit),
        sum(eliminated) if per_unit and None not in eliminated else None,
        "per unit: " + ", ".join(sorted({stats.source for stats in per_unit})) if per_unit else "none",
        sum(stats.n_launch_sites for stats in per_unit),
        sum(fused) if per_unit and None not in fused else None)


@dataclass(frozen=True, kw_only=True)
class CacheCount(Record):
    """One cache's lookups over the session: the summary's `cache` entry, the history's cache row."""

    hit: int = 0
    miss: int = 0
    bypass: int = 0
    hit_rate: float | None = None  # hits / (hits + misses); None when nothing was looked up

    WHOLE = True


def cache_rates(session: Session) -> dict[str, CacheCount]:
    outcomes: dict[str, Counter] = {}
    for unit in session.units:
        for event in unit.cache_events:
            outcomes.setdefault(event.cache, Counter())[event.outcome] += 1
    return {cache: CacheCount(hit=seen["hit"], miss=seen["miss"], bypass=seen["bypass"],
                              hit_rate=seen["hit"] / looked_up if (looked_up := seen["hit"] + seen["miss"]) else None)
            for cache, seen in outcomes.items()}


def measured_compile_s(units: list[CompileUnit]) -> tuple[float | None, int]:
    """Σ of every compile of the units that recorded one — the frame's (entire_frame_compile_time_s,
    all attempts) and its lazy backward graph's — (None when none did), and how many units did:
    T_compile of a session, or of one rank."""
    measured = [value for value in (unit.compile_s for unit in units) if value is not None]
    return (sum(measured) if measured else None), len(measured)


def model_compile_s(units: list[CompileUnit]) -> tuple[float | None, int, float | None, list[tuple[CompileUnit, str]]]:
    """T_compile of the model — the compiles of what the user passed to torch.compile — and how many
    units recorded one; then the seconds and units of the compiles torch started itself for eager
    operator calls, which the model's compile time and its break-even leave out."""
    started = [(unit, operator) for unit in units if (operator := eager_trigger(unit)) is not None]
    theirs = {id(unit) for unit, _ in started}
    model_s, measured = measured_compile_s([unit for unit in units if id(unit) not in theirs])
    torch_s, _ = measured_compile_s([unit for unit, _ in started])
    return model_s, measured, torch_s, started


@dataclass(frozen=True, kw_only=True)
class CompileTime(Record):
    """Total compile seconds (from compilation_metrics) and where the wall time went (from the spans)."""

    total_s: float | None = None
    units_measured: int = 0
    backward_s: float | None = None
    backward_units: tuple[str, ...] = ()
    per_stage_s: Mapping[str, float] = field(default_factory=dict)
    per_stage_share: Mapping[str, float] = field(default_factory=dict)  # of wall_s
    self_s: Mapping[str, float] = field(default_factory=dict)  # own wall time per stage: Σ = wall_s
    wall_s: float | None = None  # the compiling threads' time inside any stage (None: an older summary)
    # stage → own seconds while none of `timed_stages` (the stages torch counts as compile time) was open
    outside_s: Mapping[str, float] = field(default_factory=dict)
    timed_stages: tuple[str, ...] = ()
    unrecorded_s: float = 0.0  # of wall_s, in timed stages of units with no compilation_metrics
    unrecorded_units: tuple[str, ...] = ()
    per_step_s: Mapping[str, float] = field(default_factory=dict)  # own time per pipeline step
    concurrent: Mapping[str, Concurrency] = field(default_factory=dict)  # stage → work beside the compile
    open_stages: tuple[str, ...] = ()

    NESTED = {"concurrent": {str: Concurrency}}
    WHOLE = True

    @property
    def traced_s(self) -> float:
        """The compile's wall time in stages: the own times of every stage together (0 for a log cut
        off before any stage ended)."""
        return sum(self.self_s.values())


def compile_time(session: Session) -> CompileTime:
    """Total compile seconds (from compilation_metrics) and where the wall time went (from the spans):
    own time per stage adding up to the wall time, work beside it (compile workers) apart."""
    total_s, units_measured = measured_compile_s(session.units)
    per_rank = [[span for unit in rank.units for span in unit.spans] + list(rank.spans) for rank in session.ranks]
    open_stages = sorted({span.name for roots in per_rank for root in roots for span in root.walk() if span.is_open})
    wall = wall_breakdown(per_rank)
    # units whose timed stages are in the log but whose compilation_metrics are not (a rank cut off, a
    # failed compile): their time is in wall_s, not in total_s
    unrecorded = [(unit, sum(span.duration_us() for root in unit.spans for span in _outermost(root, TORCH_TIMED)))
                  for unit in session.units if unit.compile_s is None]
    unrecorded = [(unit, us) for unit, us in unrecorded if us > 0]
    backward = [(unit, unit.backward_compile_s) for unit in session.units if unit.backward_compile_s is not None]
    return CompileTime(
        total_s=total_s,
        units_measured=units_measured,
        backward_s=sum(seconds for _, seconds in backward) if backward else None,
        backward_units=tuple(str(unit.compile_id) for unit, _ in backward),
        per_stage_s=wall.inclusive_s,
        per_stage_share={name: seconds / wall.wall_s for name, seconds in wall.inclusive_s.items()}
        if wall.wall_s else {},
        self_s=wall.own_s,
        wall_s=wall.wall_s,
        outside_s=wall.outside_s,
        timed_stages=TORCH_TIMED,
        unrecorded_s=sum(us for _, us in unrecorded) / 1e6,
        unrecorded_units=tuple(str(unit.compile_id) if unit.rank is None else f"rank {unit.rank} {unit.compile_id}"
                               for unit, _ in unrecorded),
        per_step_s=wall.per_step_s,
        concurrent=wall.concurrent,
        open_stages=tuple(open_stages),
    )


def _outermost(span, names: tuple[str, ...]):
    """The spans named in `names` at or under `span`, not inside another of them."""
    stack = [span]
    while stack:
        span = stack.pop()
        if span.name in names:
            yield span
        else:
            stack.extend(span.children)


def session_warnings(session: Session) -> list[str]:
    warnings = []
    for unit in session.units:
        warnings += [f"{unit.compile_id} {unit.function or ''}: {text}" for text in unit.warnings]
        if unit.fail_type:
            warnings.append(f"{unit.compile_id} {unit.function or ''}: compile failed: {unit.fail_type}: "
                            f"{unit.fail_summary}")
    return warnings
