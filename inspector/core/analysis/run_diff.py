"""What changed between two runs (default vs max-autotune, before vs after a fix, two torch versions):
breaks (new, fixed, moved), recompiles, compile time per stage, kernels (added, removed, renamed, time
deltas), steady state and speedup, each unit's graphs diffed structurally and its kernels' code. And
the CI gate over one run, optionally against a baseline."""

from __future__ import annotations

import difflib
import os
from collections import defaultdict
from dataclasses import dataclass

from inspector.core.analysis.figures import BreakSite, model_compile_s
from inspector.core.analysis.session_analysis import SessionAnalysis, as_analysis
from inspector.core.analysis.comparison import (FASTER, NO_DIFFERENCE, SLOWER, Machine, compare_calls, compare_runs,
                                                kernel_change, gate_doubt, meets)
from inspector.core.analysis.profile_ops import profile_check
from inspector.core.analysis.comparison import Speedup
from inspector.core.graphs.graph_diff import diff_graphs
from inspector.core.model.session import CompileUnit, Session

GRAPH_STAGE_ORDER = ("dynamo", "post_grad", "aot_inference", "aot_forward")


def _site_key(site: BreakSite) -> tuple[str, str]:
    return (site.reason, (site.code or "").strip())


def script_folder(session: Session) -> str | None:
    """The folder paths in `session` are best read against: its script's folder when the capture
    recorded one, else the folder all its break sites share (a checkout's root, near enough)."""
    script = session.manifest.script if session.manifest is not None else None
    if script:
        return os.path.dirname(str(script))
    files = [brk.location.file for brk in session.breaks if brk.location and brk.location.file]
    try:
        return os.path.commonpath([os.path.dirname(f) for f in files]) if files else None
    except ValueError:  # absolute and relative paths mixed
        return None


def _relative(location: str | None, base: str | None) -> str | None:
    """`location` ("file:line …") with `base` taken off its path, so two checkouts compare equal."""
    if not location or not base:
        return location
    prefix = base.rstrip("/\\") + os.sep
    return location[len(prefix):] if location.startswith(prefix) else location


def diff_breaks(a: SessionAnalysis, b: SessionAnalysis) -> dict:
    """Break sites of two runs: a site is the same when reason and code line match; moved when they
    match but the place changed — paths read relative to each run's script folder, so the same file
    and line in another checkout is not a move."""
    sites_a = {_site_key(s): s for s in a.break_sites}
    sites_b = {_site_key(s): s for s in b.break_sites}
    base_a, base_b = script_folder(a.session), script_folder(b.session)
    # in each run's order of sites (not a set's, which changes from one process to the next)
    moved = [{"reason": site.reason, "from": site.location, "to": sites_b[k].location}
             for k, site in sites_a.items()
             if k in sites_b and _relative(site.location, base_a) != _relative(sites_b[k].location, base_b)]
    return {"new": [site.get_state() for k, site in sites_b.items() if k not in sites_a],
            "fixed": [site.get_state() for k, site in sites_a.items() if k not in sites_b],
            "moved": moved,
            "count_a": len(a.session.breaks), "count_b": len(b.session.breaks),  # every break, not sites
            "sites_a": len(sites_a), "sites_b": len(sites_b)}


def break_counts(breaks: dict) -> str:
    """The break figures of a diff as both fronts show them: occurrences, then sites (the Summary counts
    sites; a site hit in a loop is one site and many breaks)."""
    return (f"{breaks['count_a']} → {breaks['count_b']} "
            f"(at {breaks['sites_a']} → {breaks['sites_b']} site{'s' if breaks['sites_b'] != 1 else ''})")


def _unit_key(unit: CompileUnit) -> tuple:
    return (unit.rank, str(unit.compile_id))


def diff_units(a: Session, b: Session, stage: str | None = None) -> list[dict]:
    """Units matched by rank and compile id; each pair's graph at `stage` (or the first stage both
    have) diffed structurally."""
    units_b = {_unit_key(unit): unit for unit in b.units}
    rows = []
    for unit in a.units:
        other = units_b.pop(_unit_key(unit), None)
        if other is None:
            rows.append({"compile_id": str(unit.compile_id), "rank": unit.rank, "status": "only in A"})
            continue
        stages = [stage] if stage else [s for s in GRAPH_STAGE_ORDER if s in unit.graphs and s in other.graphs][:1]
        row = {"compile_id": str(unit.compile_id), "rank": unit.rank, "status": "in both"}
        for name in stages:
            if name in unit.graphs and name in other.graphs:
                row["stage"] = name
                row["graph"] = diff_graphs(unit.graphs[name].graph, other.graphs[name].graph).get_state()
            else:
                row["stage"] = name
                row["graph"] = None
                row["note"] = f"no '{name}' graph in {'A' if name not in unit.graphs else 'B'}"
        rows.append(row)
    rows += [{"compile_id": str(unit.compile_id), "rank": unit.rank, "status": "only in B"}
             for unit in units_b.values()]
    return rows


def diff_kernels(run_a: SessionAnalysis, run_b: SessionAnalysis) -> dict:
    """Kernels by name; a removed and an added kernel made from the same FX nodes count as renamed.
    Each time delta carries its comparison (`kernel_change`): whether the noise of the runs' calls,
    their machines or their profiles can explain it."""
    def by_name(session):
        return {kernel.name: kernel for unit in session.units for kernel in unit.kernels}

    a, b = run_a.session, run_b.session
    kernels_a, kernels_b = by_name(a), by_name(b)
    removed = sorted(kernels_a.keys() - kernels_b.keys())
    added = sorted(kernels_b.keys() - kernels_a.keys())
    renamed = []
    for old in list(removed):
        nodes = set(kernels_a[old].source_nodes)
        twin = next((new for new in added if nodes and set(kernels_b[new].source_nodes) == nodes), None)
        if twin:
            renamed.append({"from": old, "to": twin})
            removed.remove(old)
            added.remove(twin)
    common = sorted(kernels_a.keys() & kernels_b.keys())
    calls, doubt = call_noise(run_a, run_b)
    deltas = kernel_time_deltas(run_a, run_b)
    for row in deltas:  # each call site's change judged against the noise of the runs' calls
        change = kernel_change(row["us_a"], row["us_b"], calls, doubt, launches=row.pop("launch_us"))
        row.update(change=change.get_state(), noise=change_words(change))
    code = {}
    for name in common:
        text_a, text_b = _kernel_text(a, kernels_a[name]), _kernel_text(b, kernels_b[name])
        if text_a != text_b:
            code[name] = "\n".join(difflib.unified_diff(text_a.split("\n"), text_b.split("\n"), "A", "B", lineterm=""))
    return {"added": added, "removed": removed, "renamed": renamed, "time_deltas": deltas, "code_diffs": code}


def kernel_time_deltas(run_a: SessionAnalysis, run_b: SessionAnalysis) -> list[dict]:
    """Kernel time of A against B per call site, from each run's one table of kernel time: a site is
    the same in both when its unit, output code, kernel name and place among that name's sites agree
    (an `extern_kernels.addmm` of one Linear is never set against another's, nor [0/0]'s against
    [0/1]'s). µs per profiled call of the site's unit; sites of a unit one run did not profile are left out."""
    table_a, table_b = run_a.kernel_time, run_b.kernel_time
    if table_a is None or table_b is None:
        return []

    def keyed(table) -> dict[tuple, tuple[float, object]]:
        found, seen = {}, defaultdict(int)
        for row in sorted(table.kernels, key=lambda row: (row.rank or 0, row.unit, row.code, row.call_line)):
            place = (row.rank, row.unit, row.code, row.name)
            found[(*place, seen[place])] = (row.total_us / max(1, table.unit_figures[row.unit].calls), row)
            seen[place] += 1
        return found

    a, b = keyed(table_a), keyed(table_b)
    rows = []
    for key in sorted(a.keys() & b.keys(), key=str):
        (us_a, row_a), (us_b, row_b) = a[key], b[key]
        if row_a.events and row_b.events:
            rows.append({"kernel": row_a.name, "unit": row_a.unit, "call_line_a": row_a.call_line,
                         "call_line_b": row_b.call_line, "launches_a": row_a.events, "launches_b": row_b.events,
                         "us_a": us_a, "us_b": us_b, "delta_us": us_b - us_a,
                         "launch_us": (row_a.launch_us, row_b.launch_us)})
    return sorted(rows, key=lambda row: -abs(row["delta_us"]))


def call_noise(run_a: SessionAnalysis, run_b: SessionAnalysis) -> tuple[Speedup | None, str]:
    """The compiled call of A against B's (its interval is the noise a kernel row is judged by), and
    why the two profiles cannot be compared at all ('' when they can)."""
    machine = Machine.of_pair(run_a.speedup.machine, run_b.speedup.machine)
    calls = compare_calls(run_a.session.results, run_b.session.results, machine)
    doubts = [f"{side}'s profile disagrees with its measured call ({check.note})"
              for side, check in (("A", profile_check(run_a.session.results)),
                                  ("B", profile_check(run_b.session.results))) if check.consistent is False]
    return calls, "; ".join(doubts)


def change_words(change: Speedup) -> str:
    """A kernel row's verdict in a few words: 'beyond noise: faster in B, 2.1× [1.8–2.5]', 'noise may
    explain it (…): reason'."""
    if change.value is None:
        return change.reason
    size = (f"{change.value:.2g}× [{change.low:.2g}–{change.high:.2g}]" if change.has_interval
            else f"{change.value:.2g}×")
    if change.state in (FASTER, SLOWER):
        return f"beyond noise: {'faster' if change.state == FASTER else 'slower'} in B, {size}"
    if change.state == NO_DIFFERENCE:
        return f"no measurable difference ({size})"
    return f"noise may explain it ({size}): {change.reason}"


def _kernel_text(session: Session, kernel) -> str:
    for unit in session.units:
        for artifact in unit.output_code:
            if kernel in artifact.code.kernels:
                return "\n".join(artifact.text.split("\n")[kernel.start_line - 1:kernel.end_line])
    return ""


def diff_runs(a: Session | SessionAnalysis, b: Session | SessionAnalysis, stage: str | None = None) -> dict:
    a, b = as_analysis(a), as_analysis(b)
    self_a, self_b = a.compile_time.self_s, b.compile_time.self_s
    names = [*self_a, *(name for name in self_b if name not in self_a)]  # A's order, then B's own: no set order
    stage_deltas = sorted(((name, self_a.get(name, 0.0), self_b.get(name, 0.0)) for name in names),
                          key=lambda row: -abs(row[2] - row[1]))  # a stable sort: ties keep that order
    labels = {"a": f"{a.session.source} ({a.session.kind})", "b": f"{b.session.source} ({b.session.kind})"}
    if {rank.rank for rank in a.session.ranks} != {rank.rank for rank in b.session.ranks}:
        labels["note"] = "the two runs have different ranks: units are matched by rank and compile id"
    return {
        "schema": "torch-compile-inspector/diff", "schema_version": 1, "runs": labels,
        "breaks": diff_breaks(a, b),
        "recompiles": {"count_a": len(a.session.recompiles), "count_b": len(b.session.recompiles)},
        "units": diff_units(a.session, b.session, stage),
        "compile_time": {"total_a": a.verdict.value("t_compile"), "total_b": b.verdict.value("t_compile"),
                         **_compiles_counted(a.session, "a"), **_compiles_counted(b.session, "b"),
                         "per_stage": [{"stage": n, "a_s": x, "b_s": y} for n, x, y in stage_deltas[:15]]},
        "kernels": diff_kernels(a, b),
        "steady_state": {"a_s": a.verdict.value("t_execute"), "b_s": b.verdict.value("t_execute"),
                         "speedup_a": a.verdict.value("speedup"), "speedup_b": b.verdict.value("speedup"),
                         "verdict_a": a.speedup.get_state(), "verdict_b": b.speedup.get_state(),
                         "b_vs_a": run_comparison(a, b).get_state()},
    }


def _compiles_counted(session: Session, side: str) -> dict:
    """What one side's compile-time total sums: how many units' compiles (each timed once) over how
    many ranks, so the diff can say what it compared instead of assuming one compile a run."""
    ranks = {unit.rank for unit in session.units if unit.rank is not None}
    return {f"units_{side}": model_compile_s(session.units)[1], f"ranks_{side}": len(ranks)}


def run_comparison(a: SessionAnalysis, b: SessionAnalysis) -> Speedup:
    """B's speedup against A's: the one comparison `diff`, `check --baseline` and `modes` state."""
    return compare_runs(a.speedup, a.session.results, b.speedup, b.session.results)


def comparison_words(comparison: Speedup) -> str:
    """'B against A: faster, S_B / S_A = 1.4× [1.2–1.7, 95 %, 20 rounds] — reason': the line every
    output of a pair of runs prints."""
    if comparison.value is None:
        return f"B against A: not measured — {comparison.reason}."
    return f"B against A: {comparison.word()}, S_B / S_A = {comparison.interval_text()}{comparison.because()}"


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool | None  # None: inconclusive, the measurement cannot tell
    reason: str

    @property
    def word(self) -> str:
        return {True: "PASS", False: "FAIL", None: "INCONCLUSIVE"}[self.passed]


def check_run(session: Session | SessionAnalysis, baseline: Session | SessionAnalysis | None = None,
              max_breaks: int | None = None, min_speedup: float | None = None, max_compile_s: float | None = None,
              tolerance: float = 0.1, max_rank_divergence: int | None = None,
              max_export_issues: int | None = None) -> list[Check]:
    """The CI gate: one line per check; a baseline adds 'no new breaks' and 'no slower than it'.
    Speedup checks read the interval: a run whose speedup is inconclusive, or whose interval
    straddles the threshold, is INCONCLUSIVE rather than passing or failing on noise."""
    nonsense = [f"{name} {value} is not {meaning}" for name, value, bad, meaning in (
        ("--max-breaks", max_breaks, max_breaks is not None and max_breaks < 0, "a count (≥ 0)"),
        ("--min-speedup", min_speedup, min_speedup is not None and not min_speedup > 0, "a speedup (> 0)"),
        ("--max-compile-time", max_compile_s, max_compile_s is not None and not max_compile_s >= 0, "a time (≥ 0 s)"),
        ("--tolerance", tolerance, not 0 <= tolerance < 1, "a share (0 ≤ t < 1)"),
        ("--max-rank-divergence", max_rank_divergence, max_rank_divergence is not None and max_rank_divergence < 0,
         "a count (≥ 0)"),
        ("--max-export-issues", max_export_issues, max_export_issues is not None and max_export_issues < 0,
         "a count (≥ 0)")) if bad]
    if nonsense:
        raise ValueError("; ".join(nonsense))
    run = as_analysis(session)
    complete = run.complete
    breaks = len(run.session.breaks)
    checks = [Check("complete", complete and not run.run_error,
                    "the session is complete" if complete else
                    "the run did not finish: an incomplete session cannot pass")]
    if max_breaks is not None:
        checks.append(Check("max-breaks", breaks <= max_breaks, f"{breaks} graph break(s), allowed {max_breaks}"))
    speedup = run.speedup
    if min_speedup is not None:
        checks.append(_min_speedup(speedup, min_speedup))
    compile_s = run.verdict.value("t_compile")
    if max_compile_s is not None:
        checks.append(Check("max-compile-time", compile_s is not None and compile_s <= max_compile_s,
                            f"compile time {compile_s:.2f} s (maximum {max_compile_s} s)" if compile_s is not None
                            else "compile time not recorded"))
    if max_rank_divergence is not None:
        findings = run.ranks.findings
        checks.append(Check("max-rank-divergence", len(findings) <= max_rank_divergence,
                            f"{len(findings)} finding(s) across {len(run.session.ranks)} rank(s), at most "
                            f"{max_rank_divergence} allowed" + "".join(f"\n  {f}  [{f.kind}]" for f in findings)))
    if max_export_issues is not None:
        issues = run.export_issues
        checks.append(Check("max-export-issues", len(issues) <= max_export_issues,
                            f"{len(issues)} export issue(s), at most {max_export_issues} allowed"
                            + "".join(f"\n  {issue.issue.location or '?'}: {issue.title}" for issue in issues)))
    if baseline is not None:
        base = as_analysis(baseline)
        new_sites = diff_breaks(base, run)["new"]
        checks.append(Check("no-new-breaks", not new_sites,
                            "no new graph-break site" if not new_sites else
                            "new graph break(s): " + "; ".join(f"{s['location']}: {s['reason']}" for s in new_sites)))
        if speedup.value is not None and base.speedup.value is not None:
            checks.append(_against_baseline(base, run, tolerance))
    return checks


def _busy(speedup: Speedup) -> str:
    return f"; {speedup.machine.note}" if speedup.machine is not None and speedup.machine.busy else ""


def _min_speedup(speedup: Speedup, floor: float) -> Check:
    if speedup.value is None:
        return Check("min-speedup", False, f"speedup not measured ({speedup.reason})")
    shown = f"speedup {speedup.interval_text()} (minimum {floor}×)"
    passed = meets(speedup, floor)
    doubt = gate_doubt(speedup)
    if doubt is not None:
        return Check("min-speedup", None, f"{shown}: the gate cannot decide ({doubt}){_busy(speedup)}")
    if passed is None:
        state = "" if speedup.conclusive else f"; the speedup is inconclusive ({speedup.reason})"
        return Check("min-speedup", None, f"{shown}: the interval straddles the minimum{state}{_busy(speedup)}")
    return Check("min-speedup", passed, f"{shown}: the whole interval is {'at or above' if passed else 'below'} "
                                        f"the minimum{_busy(speedup)}")


def _against_baseline(base: SessionAnalysis, run: SessionAnalysis, tolerance: float) -> Check:
    """Passes only when the comparison of this run against the baseline excludes a regression of
    more than `tolerance` (the whole interval of S_run / S_base at or above 1 − tolerance); fails
    when the whole interval lies below it; otherwise INCONCLUSIVE — the gate cannot tell, and says why
    (no interval on either side, too few rounds, an oversubscribed machine, or a floor inside it)."""
    comparison = run_comparison(base, run)
    floor = 1 - tolerance
    shown = (f"speedup {run.speedup.interval_text()} vs baseline {base.speedup.interval_text()}, "
             f"allowed down to {floor:.3g}× of it")
    words = comparison_words(comparison)
    passed = meets(comparison, floor)
    if passed is None:
        why = "it has no interval a gate can trust" if gate_doubt(comparison) else "the interval straddles the floor"
        return Check("speedup-vs-baseline", None,
                     f"{shown}: cannot exclude a regression of more than {tolerance:.0%} ({why}). {words}")
    verdict = (f"a regression of more than {tolerance:.0%} is excluded: the whole interval is at or above "
               f"{floor:.3g}×" if passed else f"the whole interval is below {floor:.3g}×")
    return Check("speedup-vs-baseline", passed, f"{shown}: {verdict}. {words}")
