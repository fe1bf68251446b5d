"""One analysis of a session, computed once: break sites, fusion per unit and in all, cache rates,
compile time, warnings, the verdict, the issues to look at and kernel times. The summary JSON, the text and
HTML renderings, the run diff, the mode comparison, the CI gate and the views all read this object's
attributes instead of recomputing figures or reading them back out of the summary dict."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from inspector.core.analysis.notices import CountersCheck, Notice, counters_check, notices
from inspector.core.analysis.break_types import BreakTypeMatch, session_registry, site_types
from inspector.core.analysis.export_report import ExportFinding, export_findings
from inspector.core.analysis.compile_detail import UnitCompile, compile_detail
from inspector.core.analysis.figures import (
    BreakSite, CacheCount, CompileTime, FusionStats, break_sites, cache_rates, compile_time, kernel_graphs,
    session_fusion, session_warnings, unit_fusion,
)
from inspector.core.analysis.kernel_plots import compile_time_per_unit
from inspector.core.analysis.issues import Issue, find_issues
from inspector.core.analysis.profile_ops import ProfileCheck, TopKernel, profile_check
from inspector.core.analysis.divergence_rules import session_rank_report
from inspector.core.analysis.rank_figures import RankReport
from inspector.core.analysis.recompile_groups import RecompileGroup, recompile_groups
from inspector.core.analysis.recompile_limit import RecompileLimit, recompile_limit
from inspector.core.analysis.region_time import RegionAccounting, region_accounting
from inspector.core.analysis.shapes import ShapeEvent, session_shapes
from inspector.core.analysis.slowness import Slowness, slowness
from inspector.core.analysis.profile_join import session_source_time
from inspector.core.analysis.source_time import SourceTime
from inspector.core.analysis.source_marks import source_marks
from inspector.core.analysis.comparison import Speedup
from inspector.core.analysis.speedup import estimate
from inspector.core.analysis.timeline import Timeline, build_timeline
from inspector.core.analysis.verdict import Figure, top_kernels, verdict
from inspector.core.model.run_results import RunError
from inspector.core.model.session import CompileUnit, Session
from inspector.core.readers.forked_parts import ForkedParts
from inspector.core.readers.graph_break_registry import BreakRegistry


@dataclass(frozen=True)
class Verdict:
    """The verdict figures in their display order, looked up by key."""

    figures: tuple[Figure, ...]

    def __iter__(self):
        return iter(self.figures)

    def __len__(self) -> int:
        return len(self.figures)

    def __getitem__(self, key: str) -> Figure:
        for figure in self.figures:
            if figure.key == key:
                return figure
        raise KeyError(key)

    def value(self, key: str) -> float | None:
        return self[key].value


class SessionAnalysis:
    """Facts about one session. Each is computed on first use and kept; the loading pipeline
    (`core/loading.analyse`) computes the ones the first view needs, so a load worker can do that work
    off the UI thread."""

    def __init__(self, session: Session):
        self.session = session

    @cached_property
    def break_sites(self) -> list[BreakSite]:
        return break_sites(self.session)

    @cached_property
    def fusion(self) -> FusionStats:
        return session_fusion(self.session, self.unit_fusion)

    @cached_property
    def unit_fusion(self) -> dict[CompileUnit, FusionStats]:
        """Per compile unit (units are hashed by identity)."""
        return {unit: unit_fusion(unit) for unit in self.session.units}

    def fusion_of(self, unit: CompileUnit) -> FusionStats:
        return self.unit_fusion[unit]

    @cached_property
    def compile_pages(self) -> dict[CompileUnit, UnitCompile]:
        """Each unit's compile page: its trigger stack, failures, metrics, cache lookups and code."""
        return {unit: compile_detail(unit) for unit in self.session.units}

    def make_summary_facts(self, two_cores: bool = False) -> None:
        """Make what the whole summary reads of a session. With `two_cores` (the command line's summary,
        in a process of its own) and where the machine has two: a forked copy of this process builds
        the stage spans, parses the output code and reads the op names of the kernels' graphs
        (forked_parts.py) while this one makes the compile pages and the shapes, then shares the copy's
        work from its other end."""
        session, units = self.session, self.session.units

        def problem_count() -> int:
            return session.load_problems.total + sum(rank.problems.total for rank in session.ranks)

        parts = ForkedParts.start([artifact for unit in units for artifact in unit.output_code],
                                  [graph for unit in units for graph in kernel_graphs(unit)],
                                  [rank.span_source for rank in session.ranks if rank.span_source],
                                  problem_count) if two_cores else None
        try:
            self.compile_pages
            self.shapes
        except BaseException:
            if parts is not None:
                parts.stop()
            raise
        if parts is not None:
            parts.take()

    @cached_property
    def cache(self) -> dict[str, CacheCount]:
        return cache_rates(self.session)

    @cached_property
    def compile_time(self) -> CompileTime:
        return compile_time(self.session)

    @cached_property
    def warnings(self) -> list[str]:
        return session_warnings(self.session)

    @cached_property
    def speedup(self) -> Speedup:
        """S with its interval and faster / slower / inconclusive, from the capture's timing rounds."""
        return estimate(self.session.results)

    @cached_property
    def profile_check(self) -> ProfileCheck:
        """Whether the profile's per-call kernel times agree with the measured call time."""
        return profile_check(self.session.results)

    @cached_property
    def eager_profile_check(self) -> ProfileCheck:
        """The same for the eager profile, whose op times the Kernels tab sets beside the compiled ones."""
        return profile_check(self.session.results, "eager")

    @cached_property
    def verdict(self) -> Verdict:
        return Verdict(tuple(verdict(self.session, self.break_sites, self.fusion, self.cache, self.speedup,
                                     self.compile_time, self.slowness)))

    @cached_property
    def break_registry(self) -> BreakRegistry | None:
        """torch's graph-break registry: the session's copy, the installed torch's, or the bundled one."""
        return session_registry(self.session)

    @cached_property
    def site_types(self) -> list[tuple[BreakSite, BreakTypeMatch | None]]:
        """Each break site with its registry entry (None when unidentified)."""
        return site_types(self.session, self.break_registry, self.break_sites)

    @cached_property
    def export_issues(self) -> list[ExportFinding]:
        """What torch.export met and worked around, with the fix for each."""
        return export_findings(self.session)

    @cached_property
    def shapes(self) -> list[tuple[CompileUnit, list[ShapeEvent]]]:
        """Per unit with dynamic shapes: symbols created, guards added, specialisations, at user lines."""
        return session_shapes(self.session)

    @cached_property
    def source_marks(self) -> dict[str, dict[int, tuple[str, str]]]:
        """file → line → (kind, what happened): the user's lines each break and recompile marks."""
        return source_marks(self.session)

    @cached_property
    def recompile_groups(self) -> list[RecompileGroup]:
        return recompile_groups(self.session)

    @cached_property
    def recompile_limit(self) -> RecompileLimit:
        return recompile_limit(self.session)

    @cached_property
    def slowness(self) -> Slowness:
        return slowness(self.session)

    @cached_property
    def regions(self) -> tuple[RegionAccounting | None, str]:
        """Each compiled region's share of a profiled compiled call (nesting resolved), or None and why."""
        return region_accounting(self.session)

    @cached_property
    def notices(self) -> list[Notice]:
        """Eager fallbacks and a break count torch contradicts: shown before every figure."""
        return notices(self.session, self.counters_check.note)

    @cached_property
    def counters_check(self) -> CountersCheck:
        """The log's break count against torch's counters of the same run."""
        return counters_check(self.session)

    @cached_property
    def issues(self) -> list[Issue]:
        return find_issues(self)

    @cached_property
    def kernel_time(self) -> SourceTime | None:
        """The one table of kernel time: each profiled launch tied to its unit and call site, from the
        profiler trace of the same run (None without one: `kernel_time_missing` says why). Its times
        are marked suspect when the profile disagrees with the measured call."""
        table, _why = self._kernel_time_and_why
        if table is not None and self.profile_check.consistent is False:
            table.suspect = self.profile_check.note
        return table

    @property
    def kernel_time_missing(self) -> str:
        """Why there is no kernel time table ("" when there is one)."""
        return self._kernel_time_and_why[1]

    @cached_property
    def _kernel_time_and_why(self) -> tuple[SourceTime | None, str]:
        return session_source_time(self.session)

    @cached_property
    def ranks(self) -> RankReport:
        """Per-rank figures and how the ranks diverge (one rank: its figures, no findings)."""
        return session_rank_report(self.session)

    @cached_property
    def timeline(self) -> Timeline:
        """The compile-stage timeline, each rank's lanes from its own first compile event."""
        return build_timeline(self.session)

    @cached_property
    def compile_time_per_unit(self) -> list[tuple[str, float]]:
        """Each unit's compile seconds, named as the session tree names it (the compile-time chart)."""
        return compile_time_per_unit(self.session)

    @cached_property
    def wall_clock_timeline(self) -> Timeline:
        """The same lanes on one clock shared by every rank."""
        return build_timeline(self.session, wall_clock=True)

    @cached_property
    def top_kernels(self) -> list[TopKernel]:
        return top_kernels(self.session.results, self.profile_check)

    @property
    def complete(self) -> bool:
        return self.session.complete

    @property
    def run_error(self) -> RunError | None:
        """How the capture failed, from its manifest (None for raw logs and runs that finished)."""
        return self.session.manifest.error if self.session.manifest is not None else None


def as_analysis(subject: Session | SessionAnalysis) -> SessionAnalysis:
    """Consumers take either; a bare session is analysed lazily."""
    return subject if isinstance(subject, SessionAnalysis) else SessionAnalysis(subject)
