"""A self-contained HTML report of a session — verdict, breaks, recompiles, units, kernels and a
compile timeline drawn as inline SVG — one file that opens offline, for bug reports. Everything taken
from a log (code, names, reasons, paths) is HTML-escaped; the page carries no script."""

from __future__ import annotations

from html import escape

from inspector.core.analysis.region_time import RegionAccounting
from inspector.core.analysis.session_analysis import SessionAnalysis, as_analysis
from inspector.core.analysis.timeline import rank_clocks
from inspector.core.model.session import Session
from inspector.core.model.read_problems import said_of
from inspector.core.outputs.plain_text import show_controls
from inspector.core.outputs.summary import summarize
from inspector.core.outputs.summary_model import Part, Summary

CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1200px;color:#1f2a37;padding:0 16px}
h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;width:100%;margin:8px 0}td,th{border:1px solid #d0d7de;padding:4px 8px;
text-align:left;vertical-align:top}th{background:#f3f5f7}code,pre{font:12px/1.4 ui-monospace,monospace}
pre{background:#f6f8fa;padding:8px;overflow:auto;white-space:pre-wrap}.muted{color:#667}.bad{color:#b42318}
"""
LANE_HEIGHT = 18
TIMELINE_WIDTH = 1100
TIMELINE_DEPTH = 3
KERNELS_LISTED = 500  # the kernel table's rows at most (a big job has tens of thousands)
PALETTE = ("#2b7bb9", "#2e9d4f", "#e0a526", "#d9822b", "#8e5bb6", "#5c6f82")


def _e(value) -> str:
    return escape(show_controls("" if value is None else str(value)), quote=True)


def _regions_section(regions: RegionAccounting | None) -> list[str]:
    if regions is None:
        return []
    title = "<h2>Compiled regions at run time</h2>"
    if regions.reason is not None:
        return [title, f"<p class='muted'>{_e(regions.reason)}</p>"]
    return [title, f"<p class='muted'>Per profiled call ({regions.calls} calls of {regions.call_us:.1f} µs); "
                   f"a region's own time leaves out the regions entered inside it. Outside every region: "
                   f"{regions.overhead_outside_us:.1f} µs of guard checks, {regions.eager_outside_us:.1f} µs "
                   "of eager work.</p>",
            _table(["Region", "Entered per call", "Span µs", "Own µs", "In compiled graph µs", "Guards and wrappers µs",
                    "Eager µs"],
                   [[row.compile_id, f"{row.entries_per_call:.3g}", f"{row.span_us:.1f}", f"{row.own_us:.1f}",
                     f"{row.graph_us:.1f}", f"{row.overhead_us:.1f}", f"{row.eager_us:.1f}"]
                    for row in regions.regions])]


def _table(headers: list[str], rows: list[list]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_e(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def render_report(subject: Session | SessionAnalysis) -> str:
    analysis = as_analysis(subject)
    summary = Summary.from_state(summarize(analysis))
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'>"
             f"<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; style-src 'unsafe-inline'\">"
             f"<title>torch.compile report — {_e(summary.source)}</title><style>{CSS}</style></head><body>",
             f"<h1>{_e(summary.headline)}</h1>",
             f"<p class='muted'>{_e(summary.source)} — {_e(summary.kind)}, torch "
             f"{_e(summary.torch_version or 'unknown')}, {'complete' if summary.complete else 'INCOMPLETE'}; "
             f"torch-compile-inspector {_e(summary.tool_version)}</p>",
             *(f"<p class='bad'><b>Attention:</b> {_e(notice.text)}</p>" for notice in summary.notices),
             "<h2>Was it worth it?</h2>",
             _speedup_paragraph(summary),
             _table(["Figure", "Value", "Formula", "Where it comes from"],
                    [[f.label, "—" if f.value is None else f"{f.value:.4g} {f.unit}", f.formula, f.source]
                     for f in summary.verdict]),
             _heading(summary, Part.BREAKS)]
    for site in summary.break_sites:
        via = f" ({_e(site.via)})" if site.via else ""
        parts.append(f"<p><b>{_e(site.location)}</b>{via} ×{site.count} [{_e(site.kind)}] in "
                     f"{_e(', '.join(site.compile_ids))}<br>{_e(site.reason)}</p>")
        if site.code:
            parts.append(f"<pre>{_e(site.code)}</pre>")
        parts += [f"<p class='muted'>Hint: {_e(hint)}</p>" for hint in site.hints[:2]]
    if summary.export_issues:
        parts.append(_heading(summary, Part.EXPORT_ISSUES))
        parts.append(_table(["Where", "Kind", "Expression or op", "What happened", "Fix"],
                            [[issue.location, issue.kind, issue.expression, issue.what, issue.fix]
                             for issue in summary.export_issues]))
    parts.append(_heading(summary, Part.RECOMPILES))
    parts.append(_recompiles_table(summary))
    parts += _explained_sections(summary)
    parts += _regions_section(summary.regions)
    parts.append(_heading(summary, Part.UNITS))
    parts.append(_table(["Rank", "Unit", "Function", "Status", "Compile s", "of it backward s", "Kernels", "Where"],
                        [[u.rank, u.compile_id, u.shown, u.status,
                          "—" if u.compile_time_s is None else f"{u.compile_time_s:.2f}",
                          f"{u.backward_compile_time_s:.2f}" if u.backward_compile_time_s is not None
                          else ("not recorded" if u.backward_graph else "no backward graph"),
                          u.kernels, u.location]
                         for u in summary.units]))
    parts.append("<h2>Compile timeline</h2>")
    parts.append(timeline_svg(analysis.session))
    stages = summary.compile_time.per_stage_s
    parts.append(_table(["Stage", "Seconds (all units)"],
                        [[name, f"{seconds:.3f}"] for name, seconds in list(stages.items())[:15]]))
    kernels = summary.run.top_kernels if summary.run else ()
    if kernels:
        parts.append("<h2>Top kernels (compiled run, profiler)</h2>")
        check = summary.run.profile_check
        if check is not None and check.note:
            parts.append(f"<p class='{'bad' if check.consistent is False else 'muted'}'>{_e(check.note)}</p>")
        parts.append(_table(["µs per call", "Share", "Kernel / op"],
                            [[f"{k.time_us_per_call:.1f}", f"{k.share:.1%}", k.name] for k in kernels]))
    kernel_names = [(u.compile_id, name) for u in summary.units for name in u.kernel_names]
    parts.append(_heading(summary, Part.KERNELS))
    parts.append(_table(["Unit", "Kernel"], kernel_names[:KERNELS_LISTED]))
    if summary.kernels.compiles:
        parts.append("<h2>Compiling the Triton kernels (torch's record, the slowest first)</h2>")
        parts.append(_table(["Unit", "Kernel", "What it cost"], [[row.where, row.kernel, row.described()]
                                                                 for row in summary.kernels.compiles[:KERNELS_LISTED]]))
    if summary.warnings:
        parts.append("<h2>Warnings</h2><ul>" + "".join(f"<li>{_e(w)}</li>" for w in summary.warnings) + "</ul>")
    if summary.unreadable:
        parts.append("<h2 class='bad'>Could not read</h2>")
        parts.append(_table(["Count", "What", "Example"],
                            [[v.count, said_of(v.count, v.meaning), (v.examples or [""])[0]]
                             for v in summary.unreadable.values()]))
    parts.append("</body></html>")
    return "\n".join(parts)


def _heading(summary: Summary, part: Part) -> str:
    return f"<h2>{_e(summary.section(part).heading)}</h2>"


def _recompiles_table(summary: Summary) -> str:
    """A row for every recompile (one per failed guard, three at most; one without a recorded reason
    says so), with its rank where the run has ranks: [0/1] of rank 1 and [0/1] of rank 3 are two."""
    recompiles = summary.recompiles
    ranked = any(r.rank is not None for r in recompiles)
    rows = [([r.rank] if ranked else []) + [r.compile_id, r.shown, *guard]
            for r in recompiles
            for guard in ([[g.plain, f"{g.against}: {g.guard}"] for g in r.failed_guards[:3]]
                          or [["reason not recorded", "—"]])]
    return _table((["Rank"] if ranked else []) + ["Unit", "Function", "Failed guard", "In torch's words"], rows)


def _speedup_paragraph(summary: Summary) -> str:
    """The speedup verdict with its interval; in red when it is not to be relied on."""
    speedup = summary.speedup
    if speedup is None or speedup.value is None:
        return ""
    return f"<p class='{'bad' if summary.speedup_doubtful else 'muted'}'>{_e(speedup.sentence())}</p>"


def timeline_svg(session: Session) -> str:
    """Compile stages per unit as a Gantt chart: one lane group per unit, nesting as depth. In a
    distributed run each rank's lanes count from that rank's first compile event, as in the app."""
    clocks = rank_clocks(session)
    many_ranks = len(session.ranks) > 1
    rows = []
    for unit in session.units:
        lane = (f"rank {unit.rank} " if many_ranks else "") + str(unit.compile_id)
        for root in unit.spans:
            stack = [(root, 0)]
            while stack:
                span, depth = stack.pop()
                if depth < TIMELINE_DEPTH:
                    rows.append((lane, unit.rank, span, depth))
                    stack.extend((child, depth + 1) for child in span.children)
    if not rows:
        return "<p class='muted'>No compile-stage events in this session.</p>"
    longest = max(last - origin for origin, last in clocks.values())
    scale = (TIMELINE_WIDTH - 120) / max(1.0, longest)
    lanes = {uid: index for index, uid in enumerate(dict.fromkeys(uid for uid, _, _, _ in rows))}
    height = len(lanes) * LANE_HEIGHT * TIMELINE_DEPTH + 20
    shapes = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{TIMELINE_WIDTH}' height='{height}' "
              f"font-family='sans-serif' font-size='10'>"]
    for uid, lane in lanes.items():
        shapes.append(f"<text x='2' y='{lane * LANE_HEIGHT * TIMELINE_DEPTH + 12}'>{_e(uid)}</text>")
    for uid, rank, span, depth in rows:
        origin, last = clocks[rank]
        x = 120 + (span.start_us - origin) * scale
        width = max(1.0, ((span.end_us or last) - span.start_us) * scale)
        y = lanes[uid] * LANE_HEIGHT * TIMELINE_DEPTH + depth * LANE_HEIGHT
        colour = PALETTE[depth % len(PALETTE)]
        tip = f"{span.name}: {span.duration_us(last) / 1e6:.3f} s" + (" (never ended)" if span.is_open else "")
        shapes.append(f"<rect x='{x:.1f}' y='{y}' width='{width:.1f}' height='{LANE_HEIGHT - 2}' fill='{colour}'>"
                      f"<title>{_e(tip)}</title></rect>")
        if width > 60:
            shapes.append(f"<text x='{x + 3:.1f}' y='{y + 12}' fill='white'>{_e(span.name[: int(width / 6)])}</text>")
    zero = "0 s (each rank from its first compile event)" if many_ranks else "0 s"
    shapes.append(f"<text x='120' y='{height - 4}' class='muted'>{zero}</text>"
                  f"<text x='{TIMELINE_WIDTH - 60}' y='{height - 4}'>{longest / 1e6:.2f} s</text></svg>")
    return "".join(shapes)


def _explained_sections(summary: Summary) -> list[str]:
    """Break types (torch's registry), recompiles by cause with the fix, where a compiled call's time goes."""
    registry = summary.break_types.registry
    parts = ["<h2>Break types</h2>",
             f"<p class='muted'>Registry: {_e(registry.described if registry else 'none found')}</p>"]
    for site in summary.break_types.sites:
        kind = site.type
        where = f"<b>{_e(site.location)}</b>" + (f" ({_e(site.via)})" if site.via else "")
        if kind is None:
            parts.append(f"<p>{where}: type not identified</p>")
            continue
        parts.append(f"<p>{where} ×{site.count}: <a href='{_e(kind.url)}'>{_e(kind.gb_id)}</a> "
                     f"{_e(kind.gb_type)}<br>{_e(kind.explanation)}</p>")
        parts += [f"<p class='muted'>Hint: {_e(hint)}</p>" for hint in kind.hints[:3]]
        parts += [f"<p class='muted'>Then: {_e(chained)}</p>" for chained in kind.chained]
    groups = summary.recompile_groups
    parts.append(_heading(summary, Part.RECOMPILE_GROUPS))
    ranked = any(g.rank is not None for g in groups)  # rank 1's `kernel` and rank 3's are two groups
    parts.append(_table((["Rank"] if ranked else []) + ["Frame", "Guarded value", "Count", "Values", "Guards failed",
                                                         "Why", "Fix"],
                        [([g.rank] if ranked else []) + [g.shown, f"{g.shown_subject} {g.aspect}", g.count,
                                                          " → ".join(g.history), " | ".join(g.failed), g.diagnosis,
                                                          g.fix] for g in groups]))
    parts.append(f"<p class='muted'>{_e(groups[0].stance if groups else '')} {_e(summary.recompile_limit.text)}</p>")
    slow = summary.slowness
    parts.append("<h2>Where a compiled call's time goes</h2>")
    if slow.call_us is None:
        parts.append(f"<p class='muted'>{_e(slow.note)}</p>")
    else:
        parts.append(f"<p class='muted'>{slow.call_us:.1f} µs per profiled call; {_e(slow.note)}</p>")
        parts.append(_table(["Part", "µs per call", "Share", "Measured as"],
                            [[c.label, f"{c.us_per_call:.1f}", f"{c.share:.1%}", c.detail] for c in slow.costs]))
        if slow.launches_per_call is not None:
            parts.append(f"<p>{_e(slow.launch_detail)}</p>")
    if slow.cudagraph_skips:
        parts.append(_table(["Unit", "CUDA graphs skipped because"],
                            [[s.compile_id, s.reason] for s in slow.cudagraph_skips]))
    return parts
