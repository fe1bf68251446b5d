"""Was compiling worth it? The figures of the verdict, each with its formula and where it comes
from; a figure without data says what is missing instead of showing 0."""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.analysis.fallbacks import failure
from inspector.core.analysis.figures import BreakSite, CacheCount, CompileTime, FusionStats, model_compile_s
from inspector.core.analysis.profile_ops import ProfileCheck, TopKernel, profile_ops
from inspector.core.analysis.slowness import Slowness
from inspector.core.analysis.comparison import Speedup, timed_rounds
from inspector.core.analysis.speedup import break_even_calls, unmeasured_reason
from inspector.core.model.records import Record
from inspector.core.model.run_results import RunResults
from inspector.core.model.session import Session
from inspector.core.numbers import seconds

AMORTISE_CALLS = 1000


@dataclass(frozen=True)
class Figure(Record):
    """One figure of the verdict: its value with the formula and where the number comes from."""

    key: str
    label: str
    value: float | None
    unit: str
    formula: str
    source: str  # where the number comes from, or why it is missing


def verdict(session: Session, sites: list[BreakSite], fusion: FusionStats, cache_rates: dict[str, CacheCount],
            speedup: Speedup, compile_time: CompileTime, slowness: Slowness) -> list[Figure]:
    """The figures in display order, from the facts the session's analysis holds (break sites,
    fusion, cache rates, the speedup estimate, compile time, where a compiled call's time goes):
    each is computed once, there."""
    results = session.results or RunResults()
    measured = results.eager is not None and results.compiled is not None
    missing = f"not measured: {unmeasured_reason(session.results)}"
    t_compile, units_measured, torch_s, torch_started = model_compile_s(session.units)
    t_eager = results.eager.median_s if results.eager is not None else None
    t_exec = results.compiled.median_s if results.compiled is not None else None
    break_even, break_even_source = break_even_calls(speedup, t_compile, t_eager, t_exec, timed_rounds(results))
    eager = _eager_part(session, sites, slowness)
    gap = t_exec * eager.share if measured and eager.share is not None else None
    ceiling, ceiling_source = amdahl_ceiling(results, eager, speedup, t_eager, gap)
    cache = cache_rates.get("fx_graph")

    def need(value, source):
        return source if value is not None else missing

    figures = [
        Figure("t_compile", "T_compile", t_compile, "s",
               "Σ compile time of the model's units (frame + backward graph)",
               (f"compilation_metrics of {units_measured} unit(s)" if units_measured
                else "no compilation_metrics of the model's units in the log")
               + _torch_started(torch_s, torch_started)),
        Figure("t_eager", "T_eager", t_eager, "s/call", _median_of(results, "eager"),
               need(t_eager, _runs_note(results, "eager"))),
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
        Figure("fusion", "K", fusion.fusion_ratio, "ops/launch", "N_ops / N_launches (kernel launches per graph call)",
               f"{fusion.n_ops} ops, {fusion.n_launch_sites} launch sites of {fusion.n_kernels} kernels "
               f"({fusion.source})" if fusion.fusion_ratio is not None else "no output code or graph to count"),
        Figure("fused_ops", "N_fused", fusion.n_fused, "ops", "ops inside generated kernels made from ≥ 2 ops",
               f"of {fusion.n_ops} ops, from the kernels' source nodes"
               + (f"; {fusion.n_eliminated} became no kernel at all" if fusion.n_eliminated is not None else "")
               if fusion.n_fused is not None
               else "no kernels in this session: nothing was fused" if not fusion.n_kernels
               else "needs provenance tracking (INDUCTOR_PROVENANCE=1) for every kernel"),
        Figure("break_cost", "T_overhead", gap, "s/call",
               "N_break × T_fallback ≈ T_execute × (eager share of a compiled call)",
               eager.source if gap is not None or eager.share is None else missing),
        Figure("amdahl", "S_max", ceiling, "×", "T_eager / T_gap (T_gap: the part of a compiled call outside its "
               "compiled graphs), both from the profiles", ceiling_source),
        Figure("cache_hit_rate", "cache hit rate",
               cache.hit_rate * 100 if cache is not None and cache.hit_rate is not None else None,
               "%", "FX graph cache hits / lookups",
               _cache_source(cache, cache_rates) if cache is not None else "no cache events in the log"),
    ]
    return figures


def _torch_started(seconds: float | None, started: list) -> str:
    """The compiles T_compile leaves out, named: torch's own, for eager operator calls."""
    if not started:
        return ""
    operators = ", ".join(sorted({operator for _, operator in started}))
    spent = f", {seconds:.3g} s" if seconds is not None else ""
    return (f"; not counted: {len(started)} compile(s){spent} that torch started itself for eager {operators} "
            f"call(s) ({', '.join(str(unit.compile_id) for unit, _ in started)}), not the model's")


@dataclass(frozen=True)
class EagerPart:
    """The share of a profiled compiled call that ran eagerly because of breaks or fallbacks — the
    profile's "eager Python and ops between compiled regions" row, so the ceiling and the profile
    section state one figure — or None with why."""

    share: float | None
    source: str
    us_per_call: float | None = None  # the same part in µs per profiled compiled call
    # all of a profiled compiled call outside its compiled graphs (the eager part, guard checks, torch's
    # wrappers): what stays however fast the graphs become, the denominator of the Amdahl ceiling
    outside_graphs_us: float | None = None
    call_us: float | None = None  # one profiled compiled call


def _eager_part(session: Session, sites: list[BreakSite], slowness: Slowness) -> EagerPart:
    fallbacks = [unit for unit in session.units if (failed := failure(unit)) is not None and failed.runs_eagerly]
    if not sites and not fallbacks:
        return EagerPart(None, "no graph break and no eager fallback: the model runs inside compiled graphs "
                               "(the Python around them is the call's own overhead, not a break's)")
    between = next((cost for cost in slowness.costs if cost.key == "eager_between"), None)
    if between is None or between.share is None:
        return EagerPart(None, "needs a profile of the compiled run")
    graphs = next((cost.us_per_call for cost in slowness.costs if cost.key == "compiled_graphs"), 0.0) or 0.0
    causes = ", ".join(part for part in (f"{len(sites)} break site(s)" if sites else "",
                                         f"{len(fallbacks)} unit(s) fell back to eager" if fallbacks else "") if part)
    return EagerPart(between.share, f"{causes}; {between.share:.0%} of a profiled compiled call is eager work "
                                    "between and inside compiled regions (see where a compiled call's time goes)",
                     between.us_per_call, max(0.0, slowness.call_us - graphs), slowness.call_us)


def _cache_source(cache: CacheCount, cache_rates: dict[str, CacheCount]) -> str:
    """The FX graph cache's lookups, and every cache's together where there are others (the Ranks tab
    counts those: 17 hit, 5 miss here and 34, 10 there are the same run)."""
    words = f"{cache.hit} hit, {cache.miss} miss"
    if len(cache_rates) < 2:
        return words
    hits, misses = (sum(entry.hit for entry in cache_rates.values()), sum(entry.miss for entry in cache_rates.values()))
    return f"{words}; every cache together ({', '.join(cache_rates)}): {hits} hit, {misses} miss"


PROFILE_AGREEMENT = 2.0  # the profiles' own S may differ from the timed S by this factor beyond its interval


def amdahl_ceiling(results: RunResults, eager: EagerPart, speedup: Speedup, t_eager: float | None,
                   gap: float | None) -> tuple[float | None, str]:
    """S_max = T_eager / T_gap, the speedup no faster compiled graph can pass: T_gap is what a compiled
    call spends outside its compiled graphs — the eager part the breaks leave, and the guard checks
    and torch's wrappers around each graph, none of which a faster graph shortens. Taken from the two
    profiles (an eager call against that part of a compiled call, both under the same profiler) so it
    does not inherit the timing's noise through S; without an eager profile, from the timing only when
    S is conclusive with a certain size. Not stated when its inputs are too noisy: the profiles
    disagree with the timing beyond PROFILE_AGREEMENT."""
    if eager.share is None:
        return None, eager.source
    if eager.share <= 0 or not eager.us_per_call:
        return None, "the profile leaves no eager time between compiled graphs: no ceiling from eager gaps"
    outside_us = eager.outside_graphs_us or eager.us_per_call
    outside_share = outside_us / eager.call_us if eager.call_us else eager.share
    profiled = results.profile.get("eager")
    eager_us = profiled.wall_s * 1e6 / (profiled.runs or 1) if profiled is not None and profiled.wall_s else None
    if eager_us is not None:
        ceiling = eager_us / outside_us
        words = (f"a profiled eager call ({eager_us:.0f} µs) / the part of a profiled compiled call outside its "
                 f"compiled graphs ({outside_us:.0f} µs, {outside_share:.0%} of it: eager work "
                 f"{eager.us_per_call:.0f} µs, the rest guard checks and torch's wrappers, which faster graphs do "
                 f"not shorten): both from the profiles, not through S")
        compiled_us = eager.call_us or eager.us_per_call / eager.share
        profile_s = eager_us / compiled_us
        low, high = (speedup.low, speedup.high) if speedup.has_interval else (speedup.value, speedup.value)
        if low is not None and not low / PROFILE_AGREEMENT <= profile_s <= high * PROFILE_AGREEMENT:
            return None, (f"not stated: inputs too noisy — the profiles' own speedup ({profile_s:.3g}×) and the "
                          f"timing's ({speedup.interval_text()}) differ by more than {PROFILE_AGREEMENT:g}×: the "
                          f"profiler's cost or the machine changed what was measured; {words}")
    else:
        if gap is None or not t_eager:
            return None, "needs a measured run with a profile"
        if not speedup.conclusive or not speedup.size_certain or not speedup.has_interval:
            why = speedup.reason if speedup.has_interval else "S has no interval"
            return None, (f"not stated: inputs too noisy — without an eager profile S_max = S / eager share, and S "
                          f"is {speedup.word()} ({why})")
        ceiling = t_eager / (gap * outside_share / eager.share)
        words = (f"T_eager / (T_execute × {outside_share:.0%} of a compiled call outside its compiled graphs) = "
                 f"S / that share; with S's interval it lies in {speedup.low / outside_share:.3g}–"
                 f"{speedup.high / outside_share:.3g}×")
    if ceiling <= 1:
        words += ("; a compiled call spends as long outside its compiled graphs as the whole eager call takes: "
                  "faster compiled graphs cannot make the call faster, only fewer breaks can")
    return ceiling, words


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


def top_kernels(results: RunResults | None, check: ProfileCheck, label: str = "compiled",
                limit: int = 10) -> list[TopKernel]:
    """The profile's most expensive ops with their share of the profiled time (`check`: the
    session's profile check, whether those times agree with the measured call)."""
    ops = profile_ops(results, label)
    if ops is None:
        return []
    total = ops.total
    consistent = check.consistent is not False
    return [TopKernel.of(row, row.time(ops.key) / total, ops.per_call_us(row), consistent) for row in ops.rows[:limit]]

