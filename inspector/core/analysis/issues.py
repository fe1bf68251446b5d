"""Everything a user should look at, in one list, the app's Problems list: graph breaks (one per site),
recompiles (the failed guard in plain words), silent fallbacks, wrong results, compiled code slower than
eager, and the input's damage (`Session.problems`, counted as it was read). Each issue names where to
jump: a compile unit and a source location."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from inspector.core.analysis.break_types import BreakTypeMatch
from inspector.core.analysis.export_report import ExportFinding
from inspector.core.analysis.fallbacks import failure
from inspector.core.analysis.figures import BreakSite
from inspector.core.analysis.recompile_advice import STANCE
from inspector.core.analysis.recompile_groups import RecompileGroup
from inspector.core.analysis.recompile_limit import RecompileLimit
from inspector.core.analysis.slowness import Slowness
from inspector.core.analysis.comparison import SLOWER, Speedup
from inspector.core.model.compile_id import CompileId
from inspector.core.model.run_results import RunResults, Tolerance
from inspector.core.model.session import Session


class IssueFacts(Protocol):
    """The facts of a session's analysis that issues are found in (SessionAnalysis has them all)."""

    session: Session
    break_sites: list[BreakSite]
    site_types: list[tuple[BreakSite, BreakTypeMatch | None]]
    recompile_groups: list[RecompileGroup]
    recompile_limit: RecompileLimit
    export_issues: list[ExportFinding]
    speedup: Speedup
    slowness: Slowness


class _Word(str, Enum):
    """A closed set of words: compares, hashes and prints as its value (the JSON and the icons use it)."""

    def __str__(self) -> str:
        return self.value


class IssueKind(_Word):
    GRAPH_BREAK = "graph_break"
    RECOMPILE = "recompile"
    FALLBACK = "fallback"
    FAILED = "failed"
    MISMATCH = "mismatch"
    SLOWER = "slower"
    EXPORT = "export"
    UNREADABLE = "unreadable"


class Severity(_Word):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


SEVERITY_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}


@dataclass(frozen=True)
class Issue:
    kind: IssueKind
    severity: Severity
    title: str
    detail: str
    compile_id: CompileId | None = None
    rank: int | None = None
    file: str | None = None
    line: int | None = None
    count: int = 1
    reference: str = ""  # torch's registry entry for a break type: GB id, explanation, hints, link
    units: tuple[tuple[str, CompileId], ...] = ()  # a recompile group's recompiles: (what changed, unit)
    # a break site seen on several ranks: each with its first unit
    per_rank: tuple[tuple[int | None, CompileId], ...] = ()

    @property
    def ranks(self) -> tuple[int | None, ...]:
        """The ranks it occurs on; empty for a problem of the whole run (a slow call, a failed capture)."""
        if self.per_rank:
            return tuple(rank for rank, _ in self.per_rank)
        return (self.rank,) if self.rank is not None else ()

    def unit_on(self, rank: int | None) -> CompileId | None:
        """Where to jump on `rank`: its own unit for a break site seen on several ranks."""
        return next((compile_id for other, compile_id in self.per_rank if other == rank), self.compile_id)

    def get_state(self) -> list:
        """The problem as JSON values, for the index cache (compile ids as their four numbers)."""
        return [self.kind.value, self.severity.value, self.title, self.detail, _id_state(self.compile_id),
                self.rank, self.file, self.line, self.count, self.reference,
                [[changed, _id_state(unit)] for changed, unit in self.units],
                [[rank, _id_state(unit)] for rank, unit in self.per_rank]]

    @classmethod
    def from_state(cls, state: list) -> Issue:
        """`get_state`'s problem again; ValueError (or a TypeError) on anything it did not write."""
        kind, severity, title, detail, compile_id, rank, file, line, count, reference, units, per_rank = state
        return cls(IssueKind(kind), Severity(severity), _checked(title, str), _checked(detail, str), _id_of(compile_id),
                   _checked(rank, int, None), _checked(file, str, None), _checked(line, int, None),
                   _checked(count, int),
                   _checked(reference, str), tuple((_checked(changed, str), _id_of(unit)) for changed, unit in units),
                   tuple((_checked(rank, int, None), _id_of(unit)) for rank, unit in per_rank))


def _id_state(compile_id: CompileId | None) -> list | None:
    return None if compile_id is None else compile_id.get_state()


def _id_of(state: list | None) -> CompileId | None:
    return None if state is None else CompileId.from_state(state)


def _checked(value, kind: type, *alternatives):
    """`value` when it is a `kind` (exactly: a bool is no int) or one of `alternatives`; else ValueError."""
    if type(value) is not kind and value not in alternatives:
        raise ValueError(f"{value!r} is no {kind.__name__}")
    return value


def find_issues(analysis: IssueFacts) -> list[Issue]:
    """Every problem, worst first, from the session's analysis (break types, recompile groups, the
    recompile limit and the measured slowness are facts of it)."""
    session = analysis.session
    issues: list[Issue] = []
    for site, match in analysis.site_types:
        first = site.breaks[0]
        per_rank: dict[int | None, CompileId] = {}
        for brk in site.breaks:
            per_rank.setdefault(brk.rank, brk.compile_id.without_attempt())
        location = first.location
        hint = f"\nHint: {site.hints[0]}" if site.hints else ""
        code = f"\n{site.code}" if site.code else ""
        gb = f"{match.gb_id} " if match else ""
        issues.append(Issue(
            IssueKind.GRAPH_BREAK, Severity.WARNING, f"Graph break ×{site.count}: {gb}{site.reason}",
            f"{site.location}{f' ({site.via})' if site.via else ''}{code}\n{first.explanation}{hint}".strip(),
            first.compile_id.without_attempt(), first.rank, location.file if location else None,
            location.line if location else None, site.count, match.text if match else "",
            per_rank=tuple(per_rank.items()) if len(session.ranks) > 1 else ()))
    for finding in analysis.export_issues:
        issues.append(Issue(
            IssueKind.EXPORT, Severity.WARNING, f"Export: {finding.title}"
            + (f" ×{finding.count}" if finding.count > 1 else ""),
            f"{finding.what}\nFix: {finding.fix}", None, finding.rank, finding.file, finding.line, finding.count))
    limit = analysis.recompile_limit
    for group in analysis.recompile_groups:
        first = group.units[0]
        values = f" ({' → '.join(group.history)})" if group.history else ""
        rank = f"rank {group.rank} " if group.rank is not None else ""
        issues.append(Issue(
            IssueKind.RECOMPILE, Severity.WARNING,
            f"Recompile ×{group.count} {rank}{group.shown}: {group.shown_subject} {group.aspect}{values}",
            f"{group.diagnosis}\nFix: {group.fix}\n{STANCE}\nLimit: {limit.text}\n"
            f"Guard (torch's words): {group.guard}",
            first.compile_id, group.rank, group.file, group.line, group.count,
            units=tuple((_changed(unit), unit.compile_id) for unit in group.units)))
    for frame in limit.frames_at_limit:
        issues.append(Issue(IssueKind.FALLBACK, Severity.ERROR, f"Recompile limit reached: {frame} now runs eagerly",
                            limit.text))
    for unit in session.units:
        failed = failure(unit)
        if failed is not None:
            issues.append(Issue(
                IssueKind.FAILED, Severity.ERROR,
                f"Compile failed {unit.compile_id}: {unit.fail_type}: {failed.text}",
                unit.fail_reason or "",
                unit.compile_id, unit.rank, unit.location.file if unit.location else None,
                unit.location.line if unit.location else None))
        for warning in unit.warnings:
            issues.append(Issue(IssueKind.FALLBACK, Severity.WARNING, f"Silent fallback {unit.compile_id}: {warning}",
                                warning,
                                    unit.compile_id, unit.rank))
    issues += _run_issues(analysis)
    if session.problems:
        issues.append(Issue(IssueKind.UNREADABLE, Severity.INFO,
                            f"{session.problems.total} unreadable item(s) in the input",
                                "\n".join(session.problems.describe())))
    return sorted(issues, key=lambda p: (SEVERITY_ORDER[p.severity], p.kind is not IssueKind.GRAPH_BREAK))


def _changed(unit) -> str:
    guards = unit.recompile.failed_guards if unit.recompile else []
    return f"{unit.compile_id}: {guards[0].plain if guards else 'reason not recorded'}"


def _run_issues(analysis: IssueFacts) -> list[Issue]:
    session = analysis.session
    results = session.results or RunResults()
    tolerance = results.tolerance or Tolerance()
    issues = []
    for check in results.correctness or ():
        if not check.allclose:
            issues.append(Issue(
                IssueKind.MISMATCH, Severity.ERROR, f"Compiled output differs from eager ({check.inputs})",
                f"max abs error {check.max_abs_error:.3g}, max rel error {check.max_rel_error:.3g} "
                f"(allclose at rtol {tolerance.rtol}, atol {tolerance.atol})"))
    eager = results.eager.median_s if results.eager is not None else None
    speedup = analysis.speedup
    if speedup.state == SLOWER and speedup.value:  # stated only when the timing supports the direction
        causes = []
        if session.breaks:
            causes.append(f"{len(analysis.break_sites)} graph break site(s): each call leaves and re-enters compiled "
                          f"code")
        if eager and eager < 1e-3:
            causes.append(f"the model is tiny ({eager * 1e6:.0f} µs eager): guard checks and wrappers cost more than "
                          f"fusion saves")
        if session.recompiles:
            causes.append(f"{len(session.recompiles)} recompile(s): guards are checked against several graphs")
        measured = analysis.slowness
        if measured.call_us is not None:
            causes.append("measured in the profile of one compiled call (" + f"{measured.call_us:.0f} µs): "
                          + ", ".join(
                f"{cost.label} {cost.share:.0%}" for cost in measured.costs if cost.share is not None))
        issues.append(Issue(
            IssueKind.SLOWER, Severity.WARNING,
            f"Compiled is {speedup.range_text()} slower than eager ({speedup.interval_text()})",
            "Likely causes:\n- " + "\n- ".join(causes or ["no obvious cause in the log; see the profile"])))
    error = session.manifest.error if session.manifest is not None else None
    if error is not None:
        issues.append(Issue(IssueKind.FAILED, Severity.ERROR, f"Capture failed ({error.kind})",
                                error.message or "", file=error.file, line=error.line))
    return issues
