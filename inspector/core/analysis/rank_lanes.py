"""Distributed runs, one lane per rank: each rank's compile units as bars on a timeline, the units a
divergence finding names marked. Built from the figures alone, so it shows with the overview."""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.core.analysis.timeline import Bar, Timeline

if TYPE_CHECKING:
    from inspector.core.analysis.rank_figures import RankReport

DIFFERS = "differs"  # the step key of a compile unit named by a divergence finding


def rank_timeline(report: RankReport, wall_clock: bool = False) -> Timeline:
    """One lane per rank, one bar per compile unit (`_unit_times`), each rank from its own
    first compile unless `wall_clock`; units a finding names are marked `DIFFERS`, a compile that
    failed or was cut off is marked open. Built from the index alone, so it shows with the overview."""
    named = {(rank, compile_id) for finding in report.findings for rank in finding.ranks
             for compile_id in finding.compile_ids}  # (a report of ranks sharing a number names no unit)
    starts = [min((u.start_s for u in f.unit_prints if u.start_s is not None), default=None) for f in report.figures]
    known = [start for start in starts if start is not None]
    bars = []
    for lane, figures in enumerate(report.figures):
        origin = min(known, default=0.0) if wall_clock else starts[lane]
        for unit in figures.unit_prints:
            if unit.start_s is None or unit.end_s is None:
                continue
            bars.append(Bar(lane, 0, unit.start_s - origin, unit.end_s - origin, unit.compile_id, unit.compile_id,
                            unit.outcome != "ok", DIFFERS if (figures.rank, unit.compile_id) in named else None))
    return Timeline(bars, [f.label for f in report.figures], 1, [], min(known, default=0.0) * 1e6,
                    tuple(f.rank for f in report.figures), wall_clock)

