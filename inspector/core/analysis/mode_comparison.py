"""Which mode pays off here? One row per capture of the same script in a different compile mode:
compile time cold (each mode in its own empty caches) and warm (again, from that cache), steady-state
time with its interval, speedup over eager, breaks and kernels, read from each saved session."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inspector.core.analysis.session_analysis import SessionAnalysis
from inspector.core.analysis.speedup import CONFIDENCE, MIN_ROUNDS, bootstrap_interval
from inspector.core.readers.session_loader import open_session


@dataclass(frozen=True)
class ModeRow:
    mode: str
    session: Path
    compile_s: float | None  # T_compile of the cold capture
    steady_s: float | None
    speedup: float | None  # S = T_eager / T_compiled (below 1: slower than eager)
    breaks: int
    recompiles: int
    kernels: int
    error: str | None
    steady_low_s: float | None = None  # CONFIDENCE interval of the median compiled call, over the rounds
    steady_high_s: float | None = None
    cache_hits: int = 0  # FX graph / AOTAutograd cache hits in the cold capture: 0 when it was cold
    warm_compile_s: float | None = None  # T_compile of the warm capture (None: not run)
    warm_cache_hits: int | None = None

    @property
    def cold(self) -> bool:
        return self.cache_hits == 0


@dataclass(frozen=True)
class Fastest:
    mode: str | None  # None: no mode is measurably fastest
    reason: str


def compare_modes(sessions: dict[str, Path], warm_sessions: dict[str, Path] | None = None) -> list[ModeRow]:
    rows = []
    for mode, folder in sessions.items():
        try:
            run = SessionAnalysis(open_session(folder))
        except (OSError, ValueError) as error:  # the capture wrote no log: say so in that mode's row
            rows.append(ModeRow(mode, folder, None, None, None, 0, 0, 0, f"cannot open the session: {error}"))
            continue
        error = run.run_error
        interval = _steady_interval(run)
        warm = _warm(warm_sessions.get(mode)) if warm_sessions and mode in warm_sessions else (None, None)
        rows.append(ModeRow(mode, folder, run.verdict.value("t_compile"), run.verdict.value("t_execute"),
                            run.verdict.value("speedup"), len(run.session.breaks), len(run.session.recompiles),
                            run.fusion.n_kernels, error.message if error is not None else None,
                            *interval, _cache_hits(run), *warm))
    return rows


def _warm(folder: Path) -> tuple[float | None, int | None]:
    try:
        run = SessionAnalysis(open_session(folder))
    except (OSError, ValueError):
        return None, None
    return run.verdict.value("t_compile"), _cache_hits(run)


def _cache_hits(run: SessionAnalysis) -> int:
    return sum(entry["hit"] for entry in run.cache.values())


def _steady_interval(run: SessionAnalysis) -> tuple[float | None, float | None]:
    """The CONFIDENCE interval of the median compiled call (percentile bootstrap over the rounds)."""
    results = run.session.results
    rounds = [r.compiled_s for r in (results.timing.rounds if results and results.timing else ())
              if r.compiled_s and r.compiled_s > 0]
    if len(rounds) < MIN_ROUNDS:
        return None, None
    return bootstrap_interval([(seconds, 1.0) for seconds in rounds])


def fastest_mode(rows: list[ModeRow]) -> Fastest:
    """The mode whose steady-state interval lies wholly below every other measured mode's: the one
    decision of "fastest" (to be the shared comparison of two samples once there is one)."""
    measured = [row for row in rows if row.steady_s is not None and row.error is None]
    if not measured:
        return Fastest(None, "no mode finished a measured run")
    best = min(measured, key=lambda row: row.steady_s)
    if len(measured) == 1:
        return Fastest(best.mode, "the only mode measured")
    if best.steady_high_s is None or any(row.steady_low_s is None for row in measured if row is not best):
        return Fastest(None, f"no mode measurably fastest: fewer than {MIN_ROUNDS} timing rounds for an interval")
    overlapping = [row.mode for row in measured if row is not best and row.steady_low_s <= best.steady_high_s]
    if overlapping:
        return Fastest(None, f"no mode measurably fastest: {best.mode}'s {CONFIDENCE:.0%} interval overlaps "
                             f"{', '.join(overlapping)}'s")
    return Fastest(best.mode, f"its {CONFIDENCE:.0%} interval lies below every other mode's")


def best_mode(rows: list[ModeRow]) -> str | None:
    """The measurably fastest mode (None when the intervals do not separate)."""
    return fastest_mode(rows).mode


def eager_relation(rows: list[ModeRow]) -> str:
    """Each measured mode against eager in one line: "every mode slower than eager (default 600× slower, …)"."""
    measured = [row for row in rows if row.speedup and row.error is None]
    if not measured:
        return ""

    def against(row: ModeRow) -> str:
        return (f"{row.mode} {row.speedup:.3g}× faster" if row.speedup >= 1
                else f"{row.mode} {1 / row.speedup:.3g}× slower")

    parts = ", ".join(against(row) for row in measured)
    if all(row.speedup < 1 for row in measured):
        return f"every mode slower than eager: {parts}"
    if all(row.speedup >= 1 for row in measured):
        return f"every mode faster than eager: {parts}"
    return f"against eager: {parts}"


def cold_warm_text(row: ModeRow) -> str:
    """The row's compile cost in words: cold (and whether the cache was truly empty), warm."""
    if row.compile_s is None:
        return ""
    text = f"cold {row.compile_s:.2f} s" + ("" if row.cold else f" (NOT cold: {row.cache_hits} cache hit(s))")
    if row.warm_compile_s is not None:
        text += f", warm {row.warm_compile_s:.2f} s"
        if row.warm_compile_s > 0:
            text += f" ({row.compile_s / row.warm_compile_s:.3g}× less)"
    return text
