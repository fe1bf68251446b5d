"""The summary as a person reads it in a terminal (`compile-inspector summary`), rendered from the
typed summary model: every title and count is the model's, as in the report, the Markdown and the app."""

from __future__ import annotations

import re

from inspector.core.analysis.compile_detail import UnitCompile
from inspector.core.analysis.rank_figures import RankReport, rank_ranges
from inspector.core.analysis.region_time import RegionAccounting
from inspector.core.analysis.slowness import Slowness
from inspector.core.analysis.unit_origin import origin_text
from inspector.core.model.read_problems import said_of
from inspector.core.numbers import count, quantity
from inspector.core.outputs.plain_text import elided
from inspector.core.outputs.summary_model import (
    Part, Summary, UnitShapes, as_summary,
)

RAW_RECOMPILES = 5  # recompiles listed one by one before their groups by cause
SHAPE_GUARDS_SHOWN = 6
STAGES_SHOWN = 8
KERNEL_COMPILES_SHOWN = 5
LINE_CHARS = 2_000  # a longer line (a guard over a huge expression, a reason) is cut, saying how much was left out
RANKS_SHOWN = 32  # a job of more ranks: the rank table's first rows, units and notices once per group of ranks
GROUPS_SHOWN = 200  # lines of units or notices, each shared by a group of ranks
FINDINGS_SHOWN = 50  # divergence findings listed one by one
_RANK_NOTICE = re.compile(r"rank (\d+) (.*)", re.DOTALL)


def render_text(subject: Summary | dict) -> str:
    """The summary (a document is decoded first) as lines for a terminal."""
    summary = as_summary(subject)
    state = "complete" if summary.complete else "INCOMPLETE"
    lines = [f"{summary.source}  ({summary.kind}, torch {summary.torch_version or 'version unknown'}, {state})"]
    lines += [f"ATTENTION: {text}" for text in _notices(summary)]
    lines += _units(summary)
    lines += _per_compile(summary)
    lines += ["", *_breaks(summary), *_not_breaks(summary), *_export_issues(summary)]
    lines += ["", *_recompiles(summary), *_shapes(summary.shapes)]
    lines += ["", *_compile_time(summary)]
    lines += ["", *_kernels(summary)]
    lines += _ranks(summary.per_rank)
    lines += _verdict(summary)
    lines += _break_types(summary)
    lines += _recompile_groups(summary)
    lines += _slowness(summary.slowness)
    lines += _regions(summary.regions)
    if summary.warnings:
        lines += ["", "Warnings:", *_warnings(summary.warnings)]
    if summary.unknown_record_kinds:
        lines += ["", "Record kinds this version does not interpret (kept raw): " +
                  ", ".join(f"{kind} ×{n}" for kind, n in summary.unknown_record_kinds.items())]
    if summary.unreadable:
        lines += ["", "Could not read:"]
        lines += [f"  {entry.count} {said_of(entry.count, entry.meaning)}"
                  + (f" (e.g. {entry.examples[0]})" if entry.examples else "")
                  for entry in summary.unreadable.values()]
    return "\n".join(elided(line, LINE_CHARS) for line in lines)


def _notices(summary: Summary) -> list[str]:
    """The notices; in a job of many ranks, one per text the ranks share ("ranks 0–2999 [0/0] fn …
    runs EAGERLY"), at most GROUPS_SHOWN."""
    texts = [notice.text for notice in summary.notices]
    if len({unit.rank for unit in summary.units}) <= RANKS_SHOWN:
        return texts
    shared: dict[str, list[int]] = {}
    for text in texts:
        match = _RANK_NOTICE.fullmatch(text)
        shared.setdefault(match[2] if match else text, []).append(int(match[1]) if match else None)
    shown = [text if ranks == [None] else f"rank{'s' if len(ranks) > 1 else ''} {rank_ranges(ranks)} {text}"
             for text, ranks in shared.items()]
    return shown[:GROUPS_SHOWN] + ([f"… {len(shown) - GROUPS_SHOWN:,} more notice(s) (--json lists them all)"]
                                   if len(shown) > GROUPS_SHOWN else [])


def _warnings(warnings: tuple[str, ...]) -> list[str]:
    """Each warning once, with how many times it was given (every rank of a job gives the same ones)."""
    times: dict[str, int] = {}
    for warning in warnings:
        times[warning] = times.get(warning, 0) + 1
    lines = [f"  {warning}" + (f"  (×{n:,})" if n > 1 else "") for warning, n in list(times.items())[:GROUPS_SHOWN]]
    if len(times) > GROUPS_SHOWN:
        lines.append(f"  … {len(times) - GROUPS_SHOWN:,} more warning(s) (--json lists them all)")
    return lines


def _units(summary: Summary) -> list[str]:
    lines = [summary.section(Part.UNITS).heading]
    ranks = {unit.rank for unit in summary.units}
    if len(ranks) > RANKS_SHOWN:
        return lines + _shared_units(summary, len(ranks))
    for unit in summary.units:
        rank = f"rank {unit.rank} " if unit.rank is not None else ""
        seconds = f"{unit.compile_time_s:.2f}s" if unit.compile_time_s is not None else "time n/a"
        backward = ""
        if unit.backward_graph:
            backward = (f"  (backward graph, compiled in {unit.backward_compile_time_s:.2f}s)"
                        if unit.backward_compile_time_s is not None else "  (backward graph)")
        origin = f"  [{origin_text(unit.triggered_by)}]" if unit.triggered_by else ""
        lines.append(f"  {rank}{unit.compile_id:<8} {unit.shown:<40} {unit.status:<12} "
                     f"{seconds:>9}  {unit.kernels} kernels  {unit.shown_location or ''}{backward}{origin}")
    return lines


def _per_compile(summary: Summary) -> list[str]:
    """What tlparse shows on each compile's page, in a few lines per unit: the call that triggered it
    (as the trie of all trigger stacks), restarts and the failure, cache lookups and their reasons, the
    metrics fields this version does not know, and which code Dynamo wrote the log carries."""
    if len({unit.rank for unit in summary.units}) > RANKS_SHOWN:
        return []
    lines = []
    if summary.stack_trie:
        lines += ["", "Triggered from (the user's frames of each compile's stack, folded):"]
        trie = trie_lines(summary.stack_trie)
        lines += [f"  {line}" for line in trie[:GROUPS_SHOWN]]
        if len(trie) > GROUPS_SHOWN:
            lines.append(f"  … {len(trie) - GROUPS_SHOWN:,} more frame(s) (--json has the whole trie: stack_trie)")
    per_unit, shown, left_out = [], 0, 0
    for unit in summary.units:
        facts = compile_facts(unit.compile) if unit.compile is not None else []
        if facts and shown >= GROUPS_SHOWN:
            left_out += 1
        elif facts:
            shown += 1
            rank = f"rank {unit.rank} " if unit.rank is not None else ""
            per_unit += [f"  {rank}{unit.compile_id} {unit.shown} ({len(unit.compile.metrics)} metrics fields)",
                         *(f"    {fact}" for fact in facts)]
    if per_unit:
        lines += ["", "Per compile (summary --json has every metrics field and the code text):", *per_unit]
    if left_out:
        lines.append(f"  … {left_out:,} more unit(s) (--json lists them all)")
    return lines


def compile_facts(detail: UnitCompile) -> list[str]:
    """A compile's restarts and failure, cache lookups, unknown metrics fields and Dynamo's code the log
    carries, a line each: the summary's per-compile lines and the app's compile page say the same."""
    facts = [f"{link.kind}: {link.type}" + (f" [{link.break_type}]" if link.break_type else "")
             + (f": {link.summary}" if link.summary not in ("", link.type) else "")
             for link in detail.failures]
    facts += [f"{lookup.cache.replace('_', ' ')} cache {lookup.outcome}"
              + (f": {lookup.reason}" if lookup.reason else "")
              + (f" (saved {lookup.time_saved_ms:g} ms)" if lookup.time_saved_ms is not None else "")
              for lookup in detail.cache_lookups]
    if detail.unknown_metrics:
        facts.append(f"metrics fields this version does not know: {', '.join(detail.unknown_metrics)}")
    if detail.code:
        facts.append("code Dynamo wrote: " + ", ".join(text.title for text in detail.code))
    return facts


def trie_lines(nodes, marked: str | None = None, depth: int = 0) -> list[str]:
    """The trie of trigger stacks as indented lines, each frame's compile ids after it; the frame
    where the `marked` compile id's stack ends says so."""
    lines = []
    for node in nodes:
        ids = f"  -> {', '.join(node.compile_ids)}" if node.compile_ids else ""
        mark = "   <- this compile" if marked is not None and marked in node.compile_ids else ""
        lines.append(f"{'  ' * depth}{node.frame}{ids}{mark}")
        lines += trie_lines(node.children, marked, depth + 1)
    return lines


def _shared_units(summary: Summary, ranks: int) -> list[str]:
    """A job of many ranks: one line per unit the ranks share (the same compile id, function, outcome,
    kernels and line), with the ranks and the range of their compile times."""
    groups: dict[tuple, list] = {}
    for unit in summary.units:
        key = (unit.compile_id, unit.shown, unit.status, unit.kernels, unit.shown_location, unit.backward_graph)
        groups.setdefault(key, []).append(unit)
    lines = [f"  ({len(summary.units):,} units on {ranks:,} ranks, one line per unit they share; --json lists each)"]
    for (compile_id, shown, status, kernels, location, backward), units in list(groups.items())[:GROUPS_SHOWN]:
        times = [unit.compile_time_s for unit in units if unit.compile_time_s is not None]
        seconds = ("time n/a" if not times else f"{min(times):.2f}s" if min(times) == max(times)
                   else f"{min(times):.2f}–{max(times):.2f}s")
        lines.append(f"  rank{'s' if len(units) > 1 else ''} {rank_ranges(unit.rank for unit in units)} "
                     f"{compile_id:<8} {shown:<40} {status:<12} {seconds:>9}  {kernels} kernels  {location or ''}"
                     + ("  (backward graph)" if backward else ""))
    if len(groups) > GROUPS_SHOWN:
        lines.append(f"  … {len(groups) - GROUPS_SHOWN:,} more unit(s) (--json lists them all)")
    return lines


def _breaks(summary: Summary) -> list[str]:
    lines = [summary.section(Part.BREAKS).heading]
    for site in summary.break_sites:
        via = f" ({site.via})" if site.via else ""
        lines.append(f"  {site.location}{via}  ×{site.count}  [{site.kind}]  in {', '.join(site.compile_ids)}")
        lines.append(f"    {site.reason}")
        if site.code:
            lines.append(f"    code: {site.code}")
        lines += [f"    hint: {hint}" for hint in site.hints[:2]]
    return lines


def _not_breaks(summary: Summary) -> list[str]:
    """Restarts that cut no graph and frames skipped whole, under the breaks but not counted with them."""
    lines = [f"  not a break: {restart.compile_id} {restart.shown} restarted analysis ({restart.reason})"
             for restart in summary.analysis_restarts]
    lines += [f"  frame skipped (runs eagerly, not a break): {skip.compile_id} {skip.shown}: {skip.type}"
              for skip in summary.frame_skips]
    counted = summary.run.torch_counted_frame_skips if summary.run else None
    if counted:
        lines.append(f"  frames skipped per torch's counters (not breaks): "
                     f"{', '.join(f'{kind} ×{n}' for kind, n in counted.items())}")
    return lines


def _export_issues(summary: Summary) -> list[str]:
    """What torch.export worked around, each at the user's line with its fix (nothing without export)."""
    if not summary.export_issues:
        return []
    lines = ["", summary.section(Part.EXPORT_ISSUES).heading]
    for issue in summary.export_issues:
        lines.append(f"  {issue.location or '?'}  ×{issue.count}  [{issue.kind}]  {issue.expression}")
        if issue.code:
            lines.append(f"    code: {issue.code}")
        lines += [f"    {issue.what}", f"    fix: {issue.fix}"]
    return lines


def _recompiles(summary: Summary) -> list[str]:
    recompiles = summary.recompiles
    lines = [summary.section(Part.RECOMPILES).heading + (" (grouped by cause further down)" if recompiles else "")]
    for recompile in recompiles[:RAW_RECOMPILES]:
        first = recompile.failed_guards[0].plain if recompile.failed_guards else "reason not recorded"
        rank = f"rank {recompile.rank} " if recompile.rank is not None else ""  # [0/1] of rank 1 and of rank 3 are two
        lines.append(f"  {rank}{recompile.compile_id} {recompile.shown}: {first}")
    if len(recompiles) > RAW_RECOMPILES:
        lines.append(f"  … {len(recompiles) - RAW_RECOMPILES} more (every one in --json)")
    return lines


def _shapes(shapes: tuple[UnitShapes, ...]) -> list[str]:
    """Per unit with dynamic shapes: its symbols and specialisations, and its first guards."""
    if not shapes:
        return []
    lines = ["", "Dynamic shapes (symbols, specialisations, guards; at your lines):"]
    for unit in shapes:
        lines.append(f"  {unit.compile_id}: " + ", ".join(
            f"{event.shown_source or event.symbol} → {event.detail}"
            + (" (unbacked)" if event.kind == "unbacked" else "")
            for event in unit.of_kind("symbol", "unbacked")))
        for event in unit.of_kind("specialization"):
            lines.append(f"    SPECIALISED {event.shown_source}: {event.detail} at {event.location or '?'}"
                         + (f": `{event.code}`" if event.code else ""))
        for event in unit.of_kind("ignored_mark"):
            lines.append(f"    MARK IGNORED {event.shown_source}: {event.detail} at {event.location or '?'}"
                         + (f": `{event.code}`" if event.code else ""))
        guards = unit.of_kind("guard")
        lines += [f"    guard {event.detail}  at {event.location or '?'}" for event in guards[:SHAPE_GUARDS_SHOWN]]
        if len(guards) > SHAPE_GUARDS_SHOWN:
            lines.append(f"    … {len(guards) - SHAPE_GUARDS_SHOWN} more guard(s) (--json lists them all)")
    return lines


def _compile_time(summary: Summary) -> list[str]:
    timing = summary.compile_time
    together = " (all ranks together)" if summary.per_rank else ""
    traced = timing.traced_s
    if timing.total_s is not None:
        lines = [f"Compile time{together}: {timing.total_s:.2f} s over {count(timing.units_measured, 'measured unit')} "
                 f"(torch's compilation metrics)"]
    elif traced:
        lines = [f"Compile time{together}: torch recorded no compilation metrics; the stages the log holds "
                 f"add up to {traced:.2f} s"]
    else:
        lines = [f"Compile time{together}: not recorded (no compilation metrics, no stage that ended)"]
    model = summary.figure("t_compile")
    if timing.total_s is not None and model is not None and model.value is not None \
            and timing.total_s - model.value >= 0.005:  # compiles torch started itself, named in the figure's source
        lines.append(f"  of which {timing.total_s - model.value:.2f} s torch compiled for eager operator calls, not "
                     f"for the model: T_compile below ({model.value:.2f} s) leaves it out")
    if timing.backward_s is not None:
        lines.append(f"  of which backward graphs: {timing.backward_s:.2f} s "
                     f"({count(len(timing.backward_units), 'unit')}: "
                     f"{', '.join(timing.backward_units)}), compiled at the first backward call")
    if traced:
        lines.append(f"  where it went (wall clock: own time of each stage, nested stages excluded; "
                     f"they add up to the {traced:.2f} s the compiling thread spent in stages):")
        lines += _inside_and_outside(timing, traced)
    for stage, seconds in list(timing.self_s.items())[:STAGES_SHOWN]:
        share = f"{seconds / traced:6.1%}" if traced else "     —"  # a log cut off early may hold only zeros
        lines.append(f"  {stage:<45} {seconds:8.3f} s  {share}")
    for stage, work in timing.concurrent.items():
        lines.append(f"  beside it on other threads (compile workers; not in the shares above): {stage} "
                     f"×{work.count:.0f}, {work.busy_s:.2f} s of work within {work.wall_s:.2f} s, "
                     f"up to {work.peak:.0f} at once")
    if timing.open_stages:
        lines.append(f"  stages that never ended (run died inside them): {', '.join(timing.open_stages)}")
    return lines


def _inside_and_outside(timing, traced: float) -> list[str]:
    """How the stages' wall time meets the compile time above: the part inside the stages torch times
    as compile time, and each stage's time outside them (the `dynamo` stage around a frame's compile,
    autotuning at the first call), which torch's compile time leaves out."""
    outside = sum(timing.outside_s.values())
    if timing.total_s is None or not timing.timed_stages or (outside < 0.005 and timing.unrecorded_s < 0.005):
        return []  # nothing to reconcile, an older summary, or nothing to tell apart at the precision shown
    lines = [f"  of which {traced - outside:.2f} s inside the stages torch counts as compile time "
             f"({', '.join(timing.timed_stages)})"]
    if timing.unrecorded_s >= 0.005:
        lines.append(f"    ({timing.unrecorded_s:.2f} s of it in {count(len(timing.unrecorded_units), 'unit')} torch "
                     f"recorded no compilation metrics for, not in the compile time above: "
                     f"{', '.join(timing.unrecorded_units)})")
    if outside >= 0.0005:
        shown = list(timing.outside_s.items())[:STAGES_SHOWN]
        stages = ", ".join(f"{stage} {seconds:.3f} s" for stage, seconds in shown)
        more = len(timing.outside_s) - STAGES_SHOWN
        lines.append(f"  and {outside:.2f} s outside them: {stages}" + (f" and {more} more" if more > 0 else ""))
    return lines


def _kernels(summary: Summary) -> list[str]:
    kernels = summary.kernels
    ratio = f"{kernels.fusion_ratio:.2f}" if kernels.fusion_ratio is not None else "n/a"
    if kernels.fusion_ratio is not None and kernels.launch_sites:  # the division, so a reader can redo it
        ratio = f"{kernels.n_ops}/{kernels.launch_sites} = {ratio}"
    kinds = ", ".join(f"{n} {kind}" for kind, n in kernels.by_kind.items()) or "none"
    lines = [f"{summary.section(Part.KERNELS).heading} ({kinds}); ops "
             f"{kernels.n_ops if kernels.n_ops is not None else 'n/a'}; K = N_ops/N_launches = {ratio}"]
    if kernels.compiles:
        lines.append(f"  slowest Triton kernels to compile (of {len(kernels.compiles)} torch recorded):")
        lines += [f"    {row.where}  {row.kernel[:60]}: {row.described()}"
                  for row in kernels.compiles[:KERNEL_COMPILES_SHOWN]]
    for cache, entry in summary.cache.items():
        rate = f"{entry.hit_rate:.0%}" if entry.hit_rate is not None else "n/a"
        lines.append(f"Cache {cache}: {entry.hit} hit, {entry.miss} miss, {entry.bypass} bypass (hit rate {rate})")
    return lines


def _ranks(per_rank: RankReport | None) -> list[str]:
    """One row per rank and the divergence report (nothing for a single-process run)."""
    if not per_rank:
        return []
    lines = ["", "Per rank (the figures above are all ranks together):",
             "  (breaks: every graph break, not sites; cache: lookups of every cache together — "
             "FX graph, AOTAutograd, …)",
             f"  {'rank':>6} {'units':>6} {'breaks':>6} {'recompiles':>10} {'cache hit':>9} {'miss':>5} "
             f"{'failed':>6} {'compile s':>10} {'1st collective s':>16}"]
    stragglers = set(per_rank.stragglers())

    def seconds(value):
        return f"{value:.2f}" if value is not None else "—"

    # a job of many ranks: its first rows and its stragglers, then the rest in one line of ranges
    figures = per_rank.figures
    shown = figures if len(figures) <= RANKS_SHOWN else (
        figures[:RANKS_SHOWN] + tuple(row for row in figures[RANKS_SHOWN:] if row.rank in stragglers)[:RANKS_SHOWN])
    for row in shown:
        rank = row.rank if row.rank is not None else "?"
        lines.append(f"  {rank:>6} {row.units:>6} {row.breaks:>6} {row.recompiles:>10} {row.cache_hits:>9} "
                     f"{row.cache_misses:>5} {row.failed:>6} {seconds(row.compile_time_s):>10} "
                     f"{seconds(row.first_collective_s):>16}" + ("  straggler" if row.rank in stragglers else ""))
    if len(shown) < len(figures):
        listed = {id(row) for row in shown}
        lines.append(_rows_left_out([row for row in figures if id(row) not in listed]))
    divergence = per_rank.findings
    lines += ["", f"Rank divergence: {len(divergence)} finding(s)"]
    agreeing = per_rank.groups[0] if per_rank.groups else None
    if agreeing and len(agreeing) > 1:
        lines.append(f"  ranks {rank_ranges(agreeing)} agree" + (" in everything compared" if not divergence else ""))
    for finding in divergence[:FINDINGS_SHOWN]:
        plural = "s" if len(finding.ranks) > 1 else ""
        lines.append(f"  rank{plural} {finding.ranks_text}: {finding.message}  [{finding.kind}]")
    if len(divergence) > FINDINGS_SHOWN:
        lines.append(f"  … {len(divergence) - FINDINGS_SHOWN:,} more finding(s) (--json lists them all)")
    return lines


def _rows_left_out(rows: list) -> str:
    """The rank-table rows not listed, in one line: how many, which ranks, and each figure's range."""
    def spread(values, digits: int | None = None) -> str:
        known = [value for value in values if value is not None]
        if not known:
            return "—"
        low, high = min(known), max(known)
        shown = (lambda value: f"{value:.{digits}f}") if digits is not None else str
        return shown(low) if low == high else f"{shown(low)}–{shown(high)}"

    return (f"  … {len(rows):,} more rank(s) not listed ({rank_ranges(row.rank for row in rows)}): "
            f"units {spread(row.units for row in rows)}, breaks {spread(row.breaks for row in rows)}, "
            f"recompiles {spread(row.recompiles for row in rows)}, failed {spread(row.failed for row in rows)}, "
            f"compile s {spread((row.compile_time_s for row in rows), 2)} (--json lists every rank)")


def render_ranks(per_rank: RankReport | None) -> str:
    """The rank table and divergence report alone (a Dask overview has nothing else)."""
    return "\n".join(_ranks(per_rank))


def _verdict(summary: Summary) -> list[str]:
    """The verdict figures with their formulas, and what the capture saw of the run."""
    lines = ["", "Was it worth it?"]
    speedup = summary.speedup
    if speedup is not None and speedup.value is not None:
        lines.append(f"  {speedup.sentence()}")
    for figure in summary.verdict:
        shown = quantity(figure.value, figure.unit)
        lines.append(f"  {figure.label:<18} {shown:<18} {figure.formula}  [{figure.source}]")
    run = summary.run
    if not run:
        return lines
    if run.error:
        lines.append(f"  run failed ({run.error.kind}): {run.error.message}")
    for check in run.correctness or ():
        verdict_word = "allclose" if check.allclose else "MISMATCH"
        lines.append(f"  correctness {check.inputs}: {verdict_word}, max abs error {check.max_abs_error:.3g}, "
                     f"max rel error {check.max_rel_error:.3g}")
    peaks = [(key, eager, compiled) for key, eager, compiled in run.memory_pairs if not key.endswith("_start")]
    if peaks:
        memory = run.memory or {}
        lines.append(f"  memory, eager → compiled ({memory.get('measured') or 'the running peak'}): "
                     + ", ".join(f"{key} {eager:.0f} → {compiled:.0f} MB" for key, eager, compiled in peaks))
        if run.memory_growth:
            lines.append("    above each phase's start (what its calls took): " + ", ".join(
                f"{key} {eager:+.0f} → {compiled:+.0f} MB" for key, eager, compiled in run.memory_growth))
        compiling = memory.get("compile") or {}
        if compiling:
            lines.append("    compiling (the first compiled call): " + ", ".join(
                f"{key.replace('_mb', '')} {value:.0f} MB" for key, value in compiling.items()
                if not key.endswith("_start_mb")))
    check = run.profile_check
    if check is not None and check.consistent is not None:
        lines.append(f"  {check.note}")
    eager_check = run.eager_profile_check
    # eager op times are not listed here, but the GUI shows them
    if eager_check is not None and eager_check.consistent is False:
        lines.append(f"  {eager_check.note}")
    if run.top_kernels:
        consistent = check is None or check.consistent is not False
        lines.append("  top kernels (compiled, profiler)" + (":" if consistent
                                                             else " — NOT CONSISTENT with the measured call, shares "
                                                                  "only:"))
        lines += [f"    {row.time_us_per_call:10.1f} µs/call {row.share:6.1%}  {row.name[:90]}"
                  for row in run.top_kernels[:8]]
    return lines


def _break_types(summary: Summary) -> list[str]:
    lines = ["", "Break types (torch's graph-break registry):"]
    registry = summary.break_types.registry
    lines.append(f"  registry: {registry.described}" if registry
                 else "  no registry found (torch < 2.7 and no bundled copy)")
    for site in summary.break_types.sites:
        kind = site.type
        where = site.location + (f" ({site.via})" if site.via else "")
        if kind is None:
            lines.append(f"  {where}: type not identified ({site.reason[:100]})")
            continue
        lines.append(f"  {where}  {kind.gb_id} {kind.gb_type}  ×{site.count}")
        if kind.explanation:
            lines.append(f"    {kind.explanation}")
        lines += [f"    hint: {hint}" for hint in kind.hints[:3]]
        lines += [f"    then: {chained}" for chained in kind.chained]
        lines.append(f"    docs: {kind.url}  (matched by {kind.matched_by})")
    return lines


def _recompile_groups(summary: Summary) -> list[str]:
    groups = summary.recompile_groups
    lines = ["", summary.section(Part.RECOMPILE_GROUPS).heading]
    for group in groups:
        rank = f"rank {group.rank} " if group.rank is not None else ""
        history = " → ".join(group.history)
        lines.append(f"  {rank}frame {group.frame} {group.shown}: {group.shown_subject} {group.aspect}"
                     f"  ×{group.count}" + (f"  ({history})" if history else ""))
        lines += [f"    guards failed: {failed}" for failed in group.failed]
        lines += [f"    why: {group.diagnosis}", f"    fix: {group.fix}"]
    if groups:
        lines.append(f"  also: {groups[0].stance}")
    lines.append(f"  limit: {summary.recompile_limit.text}")
    return lines


def _slowness(slowness: Slowness | None) -> list[str]:
    """Where a compiled call's time goes, from the profile."""
    if slowness is None:
        return []
    lines = ["", "Where a compiled call's time goes (profile):"]
    if slowness.call_us is None:
        lines.append(f"  {slowness.note}")
    else:
        lines.append(f"  one call: {slowness.call_us:.1f} µs ({slowness.note})")
        lines += [f"  {cost.us_per_call:9.1f} µs {cost.share:6.1%}  {cost.label}  [{cost.detail}]"
                  for cost in slowness.costs]
        if slowness.graphs_per_call is not None:
            lines.append(f"  compiled graphs entered per call: {slowness.graphs_per_call:g}")
        if slowness.launches_per_call is not None:
            lines.append(f"  launches: {slowness.launch_detail}")
    if slowness.cudagraph_skips or slowness.cudagraph_skip_count:
        lines.append(f"  CUDA graphs skipped: {slowness.cudagraph_skip_count or len(slowness.cudagraph_skips)}")
        lines += [f"    {skip.compile_id}: {skip.reason}" for skip in slowness.cudagraph_skips]
    return lines


def _regions(regions: RegionAccounting | None) -> list[str]:
    """Each compiled region of a profiled call: how often it is entered and where its own time goes."""
    if regions is None:
        return []
    lines = ["", "Compiled regions at run time (profile; nested regions taken out of their parent's own time):"]
    if regions.reason is not None:
        return lines + [f"  {regions.reason}"]
    lines.append(f"  {regions.calls} profiled calls of {regions.call_us:.1f} µs; "
                 f"outside every region per call: {regions.overhead_outside_us:.1f} µs of guard checks, "
                 f"{regions.eager_outside_us:.1f} µs of eager work")
    lines.append(f"  {'region':<10} {'entered':>8} {'span µs':>10} {'own µs':>10} {'in graph':>10} {'overhead':>10} "
                 f"{'eager':>10}")
    lines += [f"  {row.compile_id:<10} {row.entries_per_call:>7.3g}× {row.span_us:>10.1f} {row.own_us:>10.1f} "
              f"{row.graph_us:>10.1f} {row.overhead_us:>10.1f} {row.eager_us:>10.1f}" for row in regions.regions]
    return lines
