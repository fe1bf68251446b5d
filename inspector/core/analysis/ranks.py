"""Distributed runs: what the app, the command line and the Dask engine import to compare ranks. The
work is in three modules, each with one job:

- rank_figures.py: the small figures of each rank (units, breaks, recompiles, cache, compile time, time
  to the first collective, a fingerprint of each unit), read one log per task over any executor, and
  the report that holds them;
- divergence_rules.py: the findings across ranks, one rule per kind of finding;
- rank_lanes.py: one lane per rank on a timeline.
"""

from __future__ import annotations

from inspector.core.analysis.divergence_rules import DIVERGENCE_RULES, rank_report, session_rank_report
from inspector.core.analysis.rank_figures import (EXECUTOR_BATCH, STRAGGLER_RULE, Finding, RankFigures, RankReport,
                                                  UnitPrint, index_ranks, rank_figures, rank_ranges, report_so_far)
from inspector.core.analysis.rank_lanes import DIFFERS, rank_timeline

__all__ = ["DIFFERS", "DIVERGENCE_RULES", "EXECUTOR_BATCH", "STRAGGLER_RULE", "Finding", "RankFigures", "RankReport",
           "UnitPrint", "index_ranks", "rank_figures", "rank_ranges", "rank_report", "rank_timeline", "report_so_far",
           "session_rank_report"]
