"""The summary's expert sections: each break site's type in torch's registry, recompiles grouped by
cause with the fix, the recompile limit, and where a compiled call's time goes. One JSON shape for
scripts, which every human output renders through the summary model."""

from __future__ import annotations

from inspector.core.analysis.break_types import failure_type
from inspector.core.analysis.session_analysis import SessionAnalysis


def explanations(analysis: SessionAnalysis) -> dict:
    """The summary keys this module adds: break_types, recompile_groups, recompile_limit, slowness."""
    registry = analysis.break_registry
    return {
        "break_types": {
            "registry": registry.get_state() if registry else None,
            "sites": [{"location": site.location, "reason": site.reason, "count": site.count,
                       "file": site.breaks[0].location.file if site.breaks[0].location else None,
                       "line": site.breaks[0].location.line if site.breaks[0].location else None,
                       "type": match.get_state() if match else None, **({"via": site.via} if site.via else {})}
                      for site, match in analysis.site_types],
            # compiles that failed where a graph would have broken, with their type: torch counts them as breaks
            "failures": [{"compile_id": str(unit.compile_id), "rank": unit.rank, "fail_type": unit.fail_type,
                          "type": match.get_state()}
                         for unit in analysis.session.units
                         if unit.fail_type and (match := failure_type(unit, registry)) is not None],
        },
        "recompile_groups": [group.get_state() for group in analysis.recompile_groups],
        "recompile_limit": analysis.recompile_limit.get_state(),
        "slowness": analysis.slowness.get_state(),
    }
