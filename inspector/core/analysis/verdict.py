"""Was compiling worth it? The figures of the verdict, each with its formula and where it comes
from; a figure without data says what is missing instead of showing 0."""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.analysis.fallbacks import failure
from inspector.core.analysis.figures import BreakSite, FusionStats
from inspector.core.analysis.profile_ops import ProfileCheck, profile_ops
from inspector.core.analysis.slowness import Slowness
from inspector.core.analysis.speedup import INCONCLUSIVE, UNMEASURED, Speedup, break_even_calls, unmeasured_reason
from inspector.core.model.run_results import RunResults
from inspector.core.model.session import Session
from inspector.core.numbers import seconds

AMORTISE_CALLS = 1000


@dataclass
class Figure:
    key: str
    label: str
    value: float | None
    unit: str
    formula: str
    source: str  # where the number comes from, or why it is missing

    def to_json(self) -> dict:
        return {"key": self.key, "label": self.label, "value": self.value, "unit": self.unit,
                "formula": self.formula, "source": self.source}


def verdict(session: Session, sites: list[BreakSite], fusion: FusionStats, cache_rates: dict[str, dict],
            speedup: Speedup, compile_time: dict, slowness: Slowness) -> list[Figure]:
    """The figures in display order, from the facts the session's analysis holds (break sites,
    fusion, cache rates, the speedup estimate, compile time, where a compiled call's time goes):
    each is computed once, there."""
    results = session.results or RunResults()
    measured = results.eager is not None and results.compiled is not None
    missing = f"not measured: {unmeasured_reason(session.results)}"
    t_compile, units_measured = compile_time["total_s"], compile_time["units_measured"]
    t_eager = results.eager.median_s if results.eager is not None else None
    t_exec = results.compiled.median_s if results.compiled is not None else None
    break_even, break_even_source = break_even_calls(speedup, t_compile, t_eager, t_exec)
    eager = _eager_part(session, sites, slowness)
    gap = t_exec * eager.share if measured and eager.share is not None else None
    ceiling = t_eager / gap if gap and t_eager else None
    cache = cache_rates.get("fx_graph", {})

    def need(value, source):
        return source if value is not None else missing

    figures = [
        Figure("t_compile", "T_compile", t_compile, "s", "Σ compile time of every unit (frame + backward graph)",
               f"compilation_metrics of {units_measured} unit(s)" if units_measured else "no compilation_metrics in the log"),
        Figure("t_eager", "T_eager", t_eager, "s/call", _median_of(results, "eager"), need(t_eager, _runs_note(results, "eager"))),
        Figure("t_execute", "T_execute", t_exec, "s/call", _median_of(results, "compiled"),
               need(t_exec, _runs_note(results, "compiled"))),
        Figure("t_total", "T_total", t_compile + t_exec if t_compile is not None and t_exec is not None else None, "s",
               "T_compile + T_execute (one call)", need(t_exec, "compilation_metrics + measured run")),
        Figure("speedup", "S", speedup.value, "×", "median eager round / median compiled round",
               _speedup_source(speedup)),
        Figure("break_even", "break-even calls", break_even, "calls", "T_compile / (T_eager − T_compiled)",
               break_even_source),
        Figure("amortised", f"B ({AMORTISE_CALLS:,} calls)",
               t_compile / AMORTISE_CALLS if t_compile is not None else None, "s/call",
               f"T_compile / m, m = {AMORTISE_CALLS:,}: the compile time each call carries if the model runs m times",
               "compilation_metrics" if t_compile is not None else "no compile time"),
        Figure("fusion", "K", fusion.fusion_ratio, "ops/kernel", "N_ops / N_kernels",
               f"{fusion.n_ops} ops, {fusion.n_kernels} kernels ({fusion.source})" if fusion.fusion_ratio is not None
               else "no output code or graph to count"),
        Figure("fused_ops", "N_fused", fusion.n_fused, "ops", "N_op − N_eliminated",
               f"{fusion.n_eliminated} ops eliminated, from provenance maps" if fusion.n_fused is not None
               else "no kernels in this session: nothing was fused" if not fusion.n_kernels
               else "needs provenance tracking (INDUCTOR_PROVENANCE=1) for every kernel"),
        Figure("break_cost", "T_overhead", gap, "s/call",
               "N_break × T_fallback ≈ T_execute × (eager share of a compiled call)",
               eager.source if gap is not None or eager.share is None else missing),
        Figure("amdahl", "S_max", ceiling, "×", "T_eager / T_gap (T_gap = T_overhead: the part compiling left eager)",
               _amdahl_source(gap, t_eager, eager, speedup)),
        Figure("cache_hit_rate", "cache hit rate", cache["hit_rate"] * 100 if cache.get("hit_rate") is not None else None,
               "%", "FX graph cache hits / lookups",
               _cache_source(cache, cache_rates) if cache else "no cache events in the log"),
    ]
    return figures


@dataclass(frozen=True)
class EagerPart:
    """The share of a profiled compiled call that ran eagerly because of breaks or fallbacks — the
    profile's "eager Python and ops between compiled regions" row, so the ceiling and the profile
    section state one figure — or None with why."""

    share: float | None
    source: str


def _eager_part(session: Session, sites: list[BreakSite], slowness: Slowness) -> EagerPart:
    fallbacks = [unit for unit in session.units if (failed := failure(unit)) is not None and failed.runs_eagerly]
    if not sites and not fallbacks:
        return EagerPart(None, "no graph break and no eager fallback: the model runs inside compiled graphs "
                               "(the Python around them is the call's own overhead, not a break's)")
    between = next((cost for cost in slowness.costs if cost.key == "eager_between"), None)
    if between is None or between.share is None:
        return EagerPart(None, "needs a profile of the compiled run")
    causes = ", ".join(part for part in (f"{len(sites)} break site(s)" if sites else "",
                                         f"{len(fallbacks)} unit(s) fell back to eager" if fallbacks else "") if part)
    return EagerPart(between.share, f"{causes}; {between.share:.0%} of a profiled compiled call is eager work "
                                    "between and inside compiled regions (see where a compiled call's time goes)")


def _cache_source(cache: dict, cache_rates: dict[str, dict]) -> str:
    """The FX graph cache's lookups, and every cache's together where there are others (the Ranks tab
    counts those: 17 hit, 5 miss here and 34, 10 there are the same run)."""
    words = f"{cache.get('hit', 0)} hit, {cache.get('miss', 0)} miss"
    if len(cache_rates) < 2:
        return words
    hits, misses = (sum(entry.get(key, 0) for entry in cache_rates.values()) for key in ("hit", "miss"))
    return f"{words}; every cache together ({', '.join(cache_rates)}): {hits} hit, {misses} miss"


def _amdahl_source(gap: float | None, t_eager: float | None, eager: EagerPart, speedup: Speedup) -> str:
    if eager.share is None:
        return eager.source
    if eager.share <= 0:
        return "the profile leaves no eager time between compiled graphs: no ceiling from eager gaps"
    if gap is None or not t_eager:
        return "needs a measured run with a profile"
    if gap >= t_eager:
        words = (f"the eager part of a compiled call ({gap * 1e6:.0f} µs) is as long as the whole eager call "
                 f"({t_eager * 1e6:.0f} µs): faster compiled graphs cannot make the call faster, only fewer breaks can")
    else:
        words = "the eager part of a compiled call bounds the speedup, from the profile"
    if speedup.state in (INCONCLUSIVE, UNMEASURED):
        words += "; the timing is INCONCLUSIVE, so this ceiling is as uncertain as S"
    elif not speedup.has_interval:
        words += "; S was timed without an interval, so this ceiling has none either"
    if speedup.has_interval:
        words += (f"; with S's interval the ceiling lies in {speedup.low / eager.share:.3g}–"
                  f"{speedup.high / eager.share:.3g}× (S_max = S / eager share)")
    return words


def _speedup_source(speedup) -> str:
    if speedup.value is None:
        return f"not measured: {speedup.reason}"
    words = f"{speedup.state.upper()}: {speedup.interval_text()}; {speedup.reason}"
    if speedup.machine is not None and speedup.machine.busy:
        words += f"; {speedup.machine.note}"
    return words


def _median_of(results: RunResults, key: str) -> str:
    if results.timing is not None and results.timing.rounds:
        return f"median over interleaved rounds of {key} calls (seconds per call)"
    return f"median of {key} calls" + (" after warm-up" if key == "compiled" else "")


def _runs_note(results: RunResults, key: str) -> str:
    entry = results.timed(key)
    spread = (f", spread {seconds(entry.min_s)}–{seconds(entry.max_s)}"
              if entry is not None and entry.min_s is not None and entry.max_s is not None else "")
    timing = results.timing
    if timing is not None and timing.rounds:
        calls = sum((row.eager_calls if key == "eager" else row.compiled_calls) or 0 for row in timing.rounds)
        return (f"{len(timing.rounds)} rounds of ~{seconds(timing.round_budget_s or 0)} ({calls:,} calls), "
                f"interleaved with the other{spread}, {results.threads} thread(s)")
    calls = entry.n if entry is not None and entry.n is not None else "?"
    return f"{calls} timed calls{spread}, {results.threads} thread(s)"


def top_kernels(results: RunResults | None, check: ProfileCheck, label: str = "compiled", limit: int = 10) -> list[dict]:
    """The profile's most expensive ops with their share of the profiled time (`check`: the
    session's profile check, whether those times agree with the measured call)."""
    ops = profile_ops(results, label)
    if ops is None:
        return []
    total = ops.total
    consistent = check.consistent is not False
    return [{**row.get_state(), "share": row.time(ops.key) / total, "time_us_per_call": ops.per_call_us(row),
             "time_consistent": consistent} for row in ops.rows[:limit]]

