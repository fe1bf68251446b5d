"""The session summary: one versioned JSON document (documented in docs/summary-schema.md) for
scripts and CI, and its human rendering. The CLI prints it; the GUI's verdict reads the same figures."""

from __future__ import annotations

import math
import re

from inspector import __version__
from inspector.core.analysis.session_analysis import SessionAnalysis, as_analysis
from inspector.core.analysis.user_names import called_function, shown_function
from inspector.core.model.run_results import RunResults, state_of
from inspector.core.model.session import Session
from inspector.core.outputs.explanations import explanations, render_explanations
from inspector.core.numbers import count, quantity
from inspector.core.readers.break_reasons import is_frame_skip

SCHEMA = "torch-compile-inspector/summary"
SCHEMA_VERSION = 4  # 2: `speedup`, `run.profile_check`; 3: ceilings from the eager share, backward compile time;
# 4: `units[].called`, `run.eager_profile_check`, backward stages named `… (backward)`
TOP_KERNELS = 10
RAW_RECOMPILES = 5  # recompiles listed one by one in the text before their groups by cause
_RESTART_CLASS = re.compile(r"^<class '(?:[\w]+\.)*(\w+)'>$")  # "<class 'torch._dynamo.exc.X'>" → "X"


def summarize(subject: Session | SessionAnalysis) -> dict:
    """The summary document of an analysis (a bare session is analysed first)."""
    analysis = as_analysis(subject)
    session, fusion = analysis.session, analysis.fusion
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "tool_version": __version__,
        "source": str(session.source),
        "kind": session.kind,
        "torch_version": session.torch_version,
        "complete": session.complete,
        "ranks": [rank.rank for rank in session.ranks],
        "notices": [notice.to_json() for notice in analysis.notices],
        "units": [_unit(unit, analysis.fusion_of(unit)) for unit in session.units],
        "graph_breaks": [_break(brk, unit.rank) for unit in session.units for brk in unit.breaks],
        "break_sites": [site.to_json() for site in analysis.break_sites],
        "export_issues": [finding.to_json() for finding in analysis.export_issues],
        "shapes": [{"compile_id": str(unit.compile_id), "rank": unit.rank, "events": [event.to_json() for event in events]}
                   for unit, events in analysis.shapes],
        **_not_breaks(session),
        "recompiles": [{"compile_id": str(unit.compile_id), "rank": unit.rank, "function": unit.function,
                        "shown": shown_function(unit),
                        "failed_guards": [{"against": g.against, "guard": g.guard, "plain": g.plain}
                                          for g in unit.recompile.failed_guards]}
                       for unit in session.units if unit.recompile],
        "compile_time": analysis.compile_time,
        "kernels": {
            "total": fusion.n_kernels,
            "fused": fusion.n_fused_kernels,
            "by_kind": _kernel_kinds(session),
            "n_ops": fusion.n_ops,
            "n_eliminated": fusion.n_eliminated,
            "n_fused_ops": fusion.n_fused,
            "fusion_ratio": fusion.fusion_ratio,
            "ops_counted_in": fusion.source,
        },
        "cache": analysis.cache,
        "warnings": analysis.warnings,
        "unknown_record_kinds": dict(session.unknown_kinds),
        "unreadable": session.problems.to_json(),
        "verdict": [figure.to_json() for figure in analysis.verdict],
        "speedup": analysis.speedup.to_json(),
        "run": _run(analysis),
        "measurements": state_of(session.results),
        **explanations(analysis),
        "regions": _regions(analysis),
        "per_rank": analysis.ranks.to_json() if len(session.ranks) > 1 else None,
    }


def _run(analysis: SessionAnalysis) -> dict | None:
    """What the capture recorded about the run itself (None for logs made without our capture)."""
    session = analysis.session
    manifest = session.manifest
    if manifest is None:
        return None
    results = session.results or RunResults()
    check = analysis.counters_check
    return {
        "complete": manifest.complete,
        "exit_status": manifest.exit_status,
        "error": state_of(manifest.error),
        "settings": manifest.settings,
        "environment": state_of(results.environment),
        "correctness": [row.get_state() for row in results.correctness] if results.correctness is not None else None,
        "allclose": results.allclose,
        "memory": {"eager": results.memory_eager, "compiled": results.memory_compiled},
        "t_first_call_s": results.t_first_call_s,
        "top_kernels": analysis.top_kernels,
        "profile_check": analysis.profile_check.to_json(),
        "eager_profile_check": analysis.eager_profile_check.to_json(),
        "torch_counted_breaks": check.torch_breaks,
        "breaks_agree_with_torch": check.agree,
        **({"torch_counted_frame_skips": check.torch_frame_skips} if check.torch_frame_skips else {}),
    }


def _regions(analysis: SessionAnalysis) -> dict | None:
    """The per-region accounting of the compiled profile; None for logs without a capture's profile."""
    results = analysis.session.results
    if results is None or "compiled" not in results.profile:
        return None
    accounting, why = analysis.regions
    return accounting.to_json() if accounting else {"reason": why}


def _unit(unit, fusion) -> dict:
    return {
        "compile_id": str(unit.compile_id), "rank": unit.rank, "function": unit.function,
        "location": str(unit.location) if unit.location else None,
        "called": {"function": called.function, "location": str(called)} if (called := called_function(unit)) else None,
        "shown": shown_function(unit),
        "status": unit.status.value,
        "attempts": unit.attempts, "breaks": len(unit.breaks), "recompile": unit.recompile is not None,
        "graph_ops": unit.metric("graph_op_count"), "kernels": fusion.n_kernels,
        "fusion_ratio": fusion.fusion_ratio, "compile_time_s": unit.compile_s,
        "backward_compile_time_s": unit.backward_compile_s, "backward_graph": "aot_backward" in unit.graphs,
        "stages": list(unit.graphs),
        "kernel_names": [kernel.name for kernel in unit.kernels],
    }


def _break(brk, rank) -> dict:
    location = brk.location
    return {"compile_id": str(brk.compile_id), "rank": rank, "file": location.file if location else None,
            "line": location.line if location else None, "function": location.function if location else None,
            "code": location.code if location else None, "reason": brk.reason, "kind": brk.kind,
            "hints": brk.hints, "restarted": brk.restarted,
            **({"via": [str(frame) for frame in brk.via]} if brk.via else {})}


def _not_breaks(session: Session) -> dict:
    """What the log holds beside the breaks and must not be counted with them: restarts of analysis that
    cut no graph, and frames Dynamo skipped whole (run eagerly). Keys only where there are some."""
    restarts = [{"compile_id": str(unit.compile_id), "rank": unit.rank, "function": unit.function,
                 "shown": shown_function(unit),
                 "reason": _RESTART_CLASS.sub(r"\1", reason)}
                for unit in session.units for reason in unit.analysis_restarts]
    skips = [{"compile_id": str(unit.compile_id), "rank": unit.rank, "function": unit.function,
              "shown": shown_function(unit),
              "location": str(unit.location) if unit.location else None, "type": unit.fail_summary}
             for unit in session.units if unit.fail_reason and is_frame_skip(unit.fail_reason)]
    return {**({"analysis_restarts": restarts} if restarts else {}), **({"frame_skips": skips} if skips else {})}


def _kernel_kinds(session: Session) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for unit in session.units:
        for kernel in unit.kernels:
            kinds[kernel.kind] = kinds.get(kernel.kind, 0) + 1
    return kinds


def finite(document):
    """`document` with every non-finite number (a log may carry Infinity or NaN) replaced by None,
    so it can be written as strict JSON."""
    if isinstance(document, float):
        return document if math.isfinite(document) else None
    if isinstance(document, dict):
        return {key: finite(value) for key, value in document.items()}
    if isinstance(document, (list, tuple)):
        return [finite(value) for value in document]
    return document


def render_text(summary: dict) -> str:
    """The summary as a person reads it in a terminal."""
    lines: list[str] = []
    add = lines.append
    state = "complete" if summary["complete"] else "INCOMPLETE"
    add(f"{summary['source']}  ({summary['kind']}, torch {summary['torch_version'] or 'version unknown'}, {state})")
    ranks = [r for r in summary["ranks"] if r is not None]
    units = summary["units"]
    for notice in summary["notices"]:
        add(f"ATTENTION: {notice['text']}")
    add(count(len(units), "compile unit") + (f" on {count(len(ranks), 'rank')}" if ranks else ""))
    for unit in units:
        rank = f"rank {unit['rank']} " if unit["rank"] is not None else ""
        seconds = f"{unit['compile_time_s']:.2f}s" if unit["compile_time_s"] is not None else "time n/a"
        backward = ""
        if unit["backward_graph"]:
            backward = (f"  (backward graph, compiled in {unit['backward_compile_time_s']:.2f}s)"
                        if unit["backward_compile_time_s"] is not None else "  (backward graph)")
        called = unit["called"]  # the user's function a library wrapper (compiled in its place) calls
        add(f"  {rank}{unit['compile_id']:<8} {unit['shown']:<40} {unit['status']:<12} "
            f"{seconds:>9}  {unit['kernels']} kernels  {(called or unit)['location'] or ''}{backward}")
    sites = summary["break_sites"]
    add("")
    add(f"Graph breaks: {len(summary['graph_breaks'])} at {len(sites)} site(s)")
    for site in sites:
        via = f" ({site['via']})" if site.get("via") else ""
        add(f"  {site['location']}{via}  ×{site['count']}  [{site['kind']}]  in {', '.join(site['compile_ids'])}")
        add(f"    {site['reason']}")
        if site["code"]:
            add(f"    code: {site['code']}")
        for hint in site["hints"][:2]:
            add(f"    hint: {hint}")
    lines.extend(render_not_breaks(summary))
    lines.extend(render_export_issues(summary["export_issues"]))
    add("")
    recompiles = summary["recompiles"]
    add(f"Recompiles: {len(recompiles)}" + (" (grouped by cause further down)" if recompiles else ""))
    for recompile in recompiles[:RAW_RECOMPILES]:
        first = recompile["failed_guards"][0]["plain"] if recompile["failed_guards"] else "reason not recorded"
        add(f"  {recompile['compile_id']} {recompile['shown']}: {first}")
    if len(recompiles) > RAW_RECOMPILES:
        add(f"  … {len(recompiles) - RAW_RECOMPILES} more (every one in --json)")
    lines.extend(render_shapes(summary["shapes"]))
    timing = summary["compile_time"]
    add("")
    total = f"{timing['total_s']:.2f} s" if timing["total_s"] is not None else "not recorded"
    together = " (all ranks together)" if summary.get("per_rank") else ""
    add(f"Compile time{together}: {total} over {count(timing['units_measured'], 'measured unit')}")
    if timing["backward_s"] is not None:
        add(f"  of which backward graphs: {timing['backward_s']:.2f} s ({count(len(timing['backward_units']), 'unit')}: "
            f"{', '.join(timing['backward_units'])}), compiled at the first backward call")
    traced = sum(timing["self_s"].values())
    if traced:
        add("  where it went (own time of each stage, nested stages excluded):")
    for stage, seconds in list(timing["self_s"].items())[:8]:
        share = f"{seconds / traced:6.1%}" if traced else "     —"  # a log cut off early may hold only zeros
        add(f"  {stage:<45} {seconds:8.3f} s  {share}")
    if timing["open_stages"]:
        add(f"  stages that never ended (run died inside them): {', '.join(timing['open_stages'])}")
    kernels = summary["kernels"]
    add("")
    ratio = f"{kernels['fusion_ratio']:.2f}" if kernels["fusion_ratio"] is not None else "n/a"
    kinds = ", ".join(f"{count} {kind}" for kind, count in kernels["by_kind"].items()) or "none"
    add(f"Kernels: {kernels['total']} ({kinds}); ops {kernels['n_ops'] if kernels['n_ops'] is not None else 'n/a'}; "
        f"K = N_ops/N_kernels = {ratio}")
    for cache, entry in summary["cache"].items():
        rate = f"{entry['hit_rate']:.0%}" if entry["hit_rate"] is not None else "n/a"
        add(f"Cache {cache}: {entry['hit']} hit, {entry['miss']} miss, {entry['bypass']} bypass (hit rate {rate})")
    lines.extend(render_ranks(summary.get("per_rank")))
    lines.extend(render_verdict(summary))
    lines.extend(render_explanations(summary))
    lines.extend(render_regions(summary["regions"]))
    if summary["warnings"]:
        add("")
        add("Warnings:")
        lines.extend(f"  {warning}" for warning in summary["warnings"])
    if summary["unknown_record_kinds"]:
        add("")
        add("Record kinds this version does not interpret (kept raw): " +
            ", ".join(f"{kind} ×{count}" for kind, count in summary["unknown_record_kinds"].items()))
    if summary["unreadable"]:
        add("")
        add("Could not read:")
        for category, entry in summary["unreadable"].items():
            add(f"  {entry['count']} {entry['meaning']}" + (f" (e.g. {entry['examples'][0]})" if entry["examples"] else ""))
    return "\n".join(lines)


def render_not_breaks(summary: dict) -> list[str]:
    """Restarts that cut no graph and frames skipped whole, under the breaks but not counted with them."""
    lines = [f"  not a break: {restart['compile_id']} {restart['shown']} restarted analysis "
             f"({restart['reason']})" for restart in summary.get("analysis_restarts", [])]
    lines += [f"  frame skipped (runs eagerly, not a break): {skip['compile_id']} {skip['shown']}: {skip['type']}"
              for skip in summary.get("frame_skips", [])]
    counted = (summary.get("run") or {}).get("torch_counted_frame_skips") or {}
    lines += [f"  frames skipped per torch's counters (not breaks): {', '.join(f'{kind} ×{n}' for kind, n in counted.items())}"] \
        if counted else []
    return lines


def render_export_issues(issues: list[dict]) -> list[str]:
    """What torch.export worked around, each at the user's line with its fix (nothing without export)."""
    if not issues:
        return []
    lines = ["", f"Export issues: {len(issues)}"]
    for issue in issues:
        lines.append(f"  {issue['location'] or '?'}  ×{issue['count']}  [{issue['kind']}]  {issue['expression']}")
        if issue["code"]:
            lines.append(f"    code: {issue['code']}")
        lines.append(f"    {issue['what']}")
        lines.append(f"    fix: {issue['fix']}")
    return lines


SHAPE_GUARDS_SHOWN = 6


def render_shapes(shapes: list[dict]) -> list[str]:
    """Per unit with dynamic shapes: its symbols and specialisations, and its first guards."""
    if not shapes:
        return []
    lines = ["", "Dynamic shapes (symbols, specialisations, guards; at your lines):"]
    for unit in shapes:
        events = unit["events"]
        symbols = [e for e in events if e["kind"] in ("symbol", "unbacked")]
        lines.append(f"  {unit['compile_id']}: " + ", ".join(
            f"{e['shown_source'] or e['symbol']} → {e['detail']}" + (" (unbacked)" if e["kind"] == "unbacked" else "")
            for e in symbols))
        for event in events:
            if event["kind"] == "specialization":
                lines.append(f"    SPECIALISED {event['shown_source']}: {event['detail']} at {event['location'] or '?'}"
                             + (f": `{event['code']}`" if event["code"] else ""))
        guards = [e for e in events if e["kind"] == "guard"]
        for event in guards[:SHAPE_GUARDS_SHOWN]:
            lines.append(f"    guard {event['detail']}  at {event['location'] or '?'}")
        if len(guards) > SHAPE_GUARDS_SHOWN:
            lines.append(f"    … {len(guards) - SHAPE_GUARDS_SHOWN} more guard(s) (--json lists them all)")
    return lines


def render_regions(regions: dict | None) -> list[str]:
    """Each compiled region of a profiled call: how often it is entered and where its own time goes."""
    if regions is None:
        return []
    lines = ["", "Compiled regions at run time (profile; nested regions taken out of their parent's own time):"]
    if "reason" in regions:
        return lines + [f"  {regions['reason']}"]
    lines.append(f"  {regions['calls']} profiled calls of {regions['call_us']:.1f} µs; "
                 f"outside every region per call: {regions['overhead_outside_us']:.1f} µs of guard checks, "
                 f"{regions['eager_outside_us']:.1f} µs of eager work")
    lines.append(f"  {'region':<10} {'entered':>8} {'span µs':>10} {'own µs':>10} {'in graph':>10} {'overhead':>10} "
                 f"{'eager':>10}")
    for row in regions["regions"]:
        lines.append(f"  {row['compile_id']:<10} {row['entries_per_call']:>7.3g}× {row['span_us']:>10.1f} "
                     f"{row['own_us']:>10.1f} {row['graph_us']:>10.1f} {row['overhead_us']:>10.1f} {row['eager_us']:>10.1f}")
    return lines


def render_ranks(per_rank: dict | None) -> list[str]:
    """One row per rank and the divergence report (nothing for a single-process run)."""
    if not per_rank:
        return []
    lines = ["", "Per rank (the figures above are all ranks together):",
             "  (breaks: every graph break, not sites; cache: lookups of every cache together — FX graph, AOTAutograd, …)",
             f"  {'rank':>6} {'units':>6} {'breaks':>6} {'recompiles':>10} {'cache hit':>9} {'miss':>5} "
             f"{'failed':>6} {'compile s':>10} {'1st collective s':>16}"]
    stragglers = {rank for finding in per_rank["divergence"] if finding["kind"] == "straggler" for rank in finding["ranks"]}

    def seconds(value):
        return f"{value:.2f}" if value is not None else "—"

    for row in per_rank["figures"]:
        rank = row["rank"] if row["rank"] is not None else "?"
        lines.append(f"  {rank:>6} {row['units']:>6} {row['breaks']:>6} {row['recompiles']:>10} {row['cache_hits']:>9} "
                     f"{row['cache_misses']:>5} {row['failed']:>6} {seconds(row['compile_time_s']):>10} "
                     f"{seconds(row['first_collective_s']):>16}" + ("  straggler" if row["rank"] in stragglers else ""))
    divergence = per_rank["divergence"]
    lines.append("")
    lines.append(f"Rank divergence: {len(divergence)} finding(s)")
    agreeing = per_rank["groups"][0] if per_rank["groups"] else None
    if agreeing and len(agreeing["ranks"]) > 1:
        lines.append(f"  ranks {agreeing['ranks_text']} agree" + (" in everything compared" if not divergence else ""))
    for finding in divergence:
        plural = "s" if len(finding["ranks"]) > 1 else ""
        lines.append(f"  rank{plural} {finding['ranks_text']}: {finding['message']}  [{finding['kind']}]")
    return lines


def render_verdict(summary: dict) -> list[str]:
    """The verdict figures with their formulas, and what the capture saw of the run."""
    lines = ["", "Was it worth it?"]
    speedup = summary.get("speedup")
    if speedup and speedup["value"] is not None:
        lines.append(f"  {speedup['text']}")
    for figure in summary["verdict"]:
        shown = quantity(figure["value"], figure["unit"])
        lines.append(f"  {figure['label']:<18} {shown:<18} {figure['formula']}  [{figure['source']}]")
    run = summary.get("run")
    if not run:
        return lines
    if run["error"]:
        lines.append(f"  run failed ({run['error'].get('kind')}): {run['error'].get('message')}")
    for check in run.get("correctness") or []:
        verdict_word = "allclose" if check["allclose"] else "MISMATCH"
        lines.append(f"  correctness {check['inputs']}: {verdict_word}, max abs error {check['max_abs_error']:.3g}, "
                     f"max rel error {check['max_rel_error']:.3g}")
    memory = run.get("memory") or {}
    if memory.get("eager") and memory.get("compiled"):
        lines.append("  memory high-water: " + ", ".join(
            f"{key.replace('_mb', '')} {memory['eager'][key]:.0f} → {memory['compiled'][key]:.0f} MB"
            for key in memory["compiled"] if key in memory["eager"]))
    check = run.get("profile_check") or {}
    if check.get("consistent") is not None:
        lines.append(f"  {check['note']}")
    eager_check = run.get("eager_profile_check") or {}
    if eager_check.get("consistent") is False:  # eager op times are not listed here, but the GUI shows them
        lines.append(f"  {eager_check['note']}")
    if run["top_kernels"]:
        lines.append("  top kernels (compiled, profiler)" + (":" if check.get("consistent") is not False
                                                             else " — NOT CONSISTENT with the measured call, shares only:"))
        for row in run["top_kernels"][:8]:
            lines.append(f"    {row['time_us_per_call']:10.1f} µs/call {row['share']:6.1%}  {row['name'][:90]}")
    return lines
