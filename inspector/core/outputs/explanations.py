"""The summary's expert sections: each break site's type in torch's registry, recompiles grouped by
cause with the fix, the recompile limit, and where a compiled call's time goes. One JSON shape for
scripts, rendered to text here, and read by the dashboard, the report and the CI outputs."""

from __future__ import annotations

from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.analysis.slowness import render_slowness


def explanations(analysis: SessionAnalysis) -> dict:
    """The summary keys this module adds: break_types, recompile_groups, recompile_limit, slowness."""
    registry = analysis.break_registry
    return {
        "break_types": {
            "registry": registry.to_json() if registry else None,
            "sites": [{"location": site.location, "reason": site.reason, "count": site.count,
                       "file": site.breaks[0].location.file if site.breaks[0].location else None,
                       "line": site.breaks[0].location.line if site.breaks[0].location else None,
                       "type": match.to_json() if match else None, **({"via": site.via} if site.via else {})}
                      for site, match in analysis.site_types],
        },
        "recompile_groups": [group.to_json() for group in analysis.recompile_groups],
        "recompile_limit": analysis.recompile_limit.to_json(),
        "slowness": analysis.slowness.to_json(),
    }


def render_explanations(summary: dict) -> list[str]:
    """Text lines of the expert sections, for the terminal summary."""
    lines = ["", "Break types (torch's graph-break registry):"]
    registry = summary["break_types"]["registry"]
    lines.append(f"  registry: {registry['described']}" if registry else "  no registry found (torch < 2.7 and no bundled copy)")
    for site in summary["break_types"]["sites"]:
        kind = site["type"]
        where = site["location"] + (f" ({site['via']})" if site.get("via") else "")
        if kind is None:
            lines.append(f"  {where}: type not identified ({site['reason'][:100]})")
            continue
        lines.append(f"  {where}  {kind['gb_id']} {kind['gb_type']}  ×{site['count']}")
        if kind["explanation"]:
            lines.append(f"    {kind['explanation']}")
        lines += [f"    hint: {hint}" for hint in kind["hints"][:3]]
        lines.append(f"    docs: {kind['url']}  (matched by {kind['matched_by']})")
    groups = summary["recompile_groups"]
    lines += ["", f"Recompiles by cause: {sum(g['count'] for g in groups)} in {len(groups)} group(s)"]
    for group in groups:
        rank = f"rank {group['rank']} " if group["rank"] is not None else ""
        history = " → ".join(group["history"])
        lines.append(f"  {rank}frame {group['frame']} {group['shown']}: {group['shown_subject']} {group['aspect']}"
                     f"  ×{group['count']}" + (f"  ({history})" if history else ""))
        lines.append(f"    why: {group['diagnosis']}")
        lines.append(f"    fix: {group['fix']}")
    if groups:
        lines.append(f"  also: {groups[0]['stance']}")
    lines.append(f"  limit: {summary['recompile_limit']['text']}")
    return lines + render_slowness(summary["slowness"])

