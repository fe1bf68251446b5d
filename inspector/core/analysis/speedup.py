"""Is compiled faster than eager, and how sure can we be? S = T_eager / T_compiled of a capture's
interleaved timing rounds, decided by the one comparison rule (comparison.py: faster, slower, no
measurable difference, inconclusive — with the reason), and the state of the machine while it was
measured (busy, oversubscribed). One owner for these facts: the summary, the dashboard, the HTML
report, the run diff and the CI gate all read them from here."""

from __future__ import annotations

import statistics

from inspector.core.analysis.comparison import (CONFIDENCE, INCONCLUSIVE, MIN_ROUNDS, NO_DIFFERENCE, OLDER_CAPTURE,
                                                 SLOWER, UNMEASURED, Cause, Machine, Speedup, bootstrap,
                                                 compare_rounds, decide, positive_time, timed_rounds)
from inspector.core.model.run_results import MachineLoad, RunResults
from inspector.core.numbers import seconds

BUSY_SHARE = 0.25  # others' use of the machine's cores that makes it busy


def unmeasured_reason(results: RunResults | None) -> str:
    """Why a capture has no run time: a script without inspector_model() is not timed; one with it was
    meant to be and did not get there (it raised, was cancelled or died first)."""
    if results is None or not results.entry_point:
        return "capture an entry-point script (inspector_model()) to measure run time"
    if results.error is not None:
        return f"the run failed before it was timed ({results.error.kind or 'error'}; see Problems)"
    return "the run ended before it was timed (cancelled, or the process died)"


def estimate(results: RunResults | None) -> Speedup:
    """The speedup of a capture's results.json, decided by the one comparison rule
    (comparison.decide). Older captures (no rounds) keep their point estimate and say they have no
    interval: within the threshold around 1 no measurable difference, else their direction, flagged
    as a point."""
    timing = results.timing if results is not None else None
    machine = machine_state(timing.environment if timing is not None else None)
    if timing is not None and timing.rounds:
        rounds = timed_rounds(results)
        if not rounds:
            return Speedup(UNMEASURED, None, None, None, len(timing.rounds), "a round has a zero, negative or missing "
                           "time: the timing is nonsense", machine, cause=Cause.UNMEASURED)
        return compare_rounds(rounds, machine)
    if results is None or results.eager is None or results.compiled is None:
        return Speedup(UNMEASURED, None, None, None, 0, unmeasured_reason(results), None, cause=Cause.UNMEASURED)
    eager, compiled = results.eager.median_s, results.compiled.median_s
    if not positive_time(eager) or not positive_time(compiled):
        return Speedup(UNMEASURED, None, None, None, 0, "a zero or negative time: the timing is nonsense", None,
                       cause=Cause.UNMEASURED)
    return decide(eager / compiled, None, None, 0, None)


def machine_state(environment: MachineLoad | None) -> Machine | None:
    """Busy when other processes used a quarter of the cores during the benchmark (or, where that
    could not be read, the load average exceeded the cores), or torch had more threads than the
    cores left free."""
    if environment is None:
        return None
    cores = environment.cores or 0
    threads = environment.torch_threads
    others = environment.others_cpu_cores
    load_before, load_during = environment.load_before, environment.load_during
    figures = []
    if others is not None:
        figures.append(f"other processes used {others:.1f} of {cores} cores during the benchmark")
    if load_before is not None and load_during is not None:
        figures.append(f"load average {load_before:.2f} before, {load_during:.2f} after, on {cores} cores")
    if threads is not None:
        figures.append(f"{threads} torch thread(s)")
    figures += [f"{key}={value}" for key, value in environment.thread_variables.items()]
    reasons = []
    if cores and others is not None and others >= BUSY_SHARE * cores:
        reasons.append("other processes competed for the cores")
    elif cores and others is None and load_during is not None and load_during > cores:
        reasons.append("load above the core count")
    free = oversubscribed_cores(environment)
    if free is not None:
        reasons.append(f"{threads} torch threads on about {free:.1f} free core(s)")
    if reasons:
        return Machine(True, f"machine busy: timing unreliable ({'; '.join(reasons)}: {', '.join(figures)})",
                       oversubscribed=free is not None,
                       suggested_threads=max(1, int(free)) if free is not None else None,
                       crowding=f"{threads} torch threads on about {free:.1f} free core(s)" if free is not None else "")
    return Machine(False, "machine quiet: " + ", ".join(figures) if figures else "machine state not recorded")


def oversubscribed_cores(environment: MachineLoad) -> float | None:
    """The free cores when torch ran more threads than there were (half a core of slack, and one core
    always counted free), else None: its threads then wait on each other and on the other processes."""
    cores, threads, others = environment.cores or 0, environment.torch_threads, environment.others_cpu_cores
    if cores and threads and others is not None and threads > max(1.0, cores - others) + 0.5:
        return max(0.0, cores - others)
    return None


def break_even_calls(speedup: Speedup, t_compile: float | None, t_eager: float | None,
                     t_compiled: float | None,
                     rounds: list[tuple[float, float]] | None = None) -> tuple[float | None, str]:
    """Calls after which the compile has paid for itself, only when the verdict is 'faster'; with the
    capture's interleaved `rounds`, its 95 % interval (the rounds resampled as S's are): the saving per
    call it divides by is a difference of two medians, so its spread is wider than S's."""
    if speedup.value is None or t_compile is None or t_eager is None or t_compiled is None:
        return None, "needs a measured run and compile time"
    if speedup.state == INCONCLUSIVE:
        return None, f"not stated: the speedup is inconclusive ({speedup.reason})"
    if speedup.state == NO_DIFFERENCE:
        return None, f"not stated: no measurable difference ({speedup.reason})"
    if speedup.state == SLOWER or t_eager <= t_compiled:
        return None, "compiled is not faster: never pays off"
    if not speedup.size_certain:
        return None, f"not stated: compiled is faster, but by how much is uncertain ({speedup.range_text()})"
    calls = t_compile / (t_eager - t_compiled)
    if not speedup.has_interval:
        return calls, f"measured run; {OLDER_CAPTURE}"
    if not rounds or len(rounds) < MIN_ROUNDS:
        return calls, "measured run"
    low, high = bootstrap([rounds], _saving_per_call)  # seconds saved per call, the same resamples as S's
    most = _calls(t_compile / low) if low > 0 else "never (the interval reaches no saving)"
    return calls, (f"measured run; {CONFIDENCE:.0%} interval {_calls(t_compile / high)}–{most} calls "
                   f"(the saving per call, T_eager − T_compiled = {seconds(t_eager - t_compiled)}, lies in "
                   f"{seconds(low)}–{seconds(high)} over the rounds resampled)")


def _calls(value: float) -> str:
    """A call count to three significant figures (an interval's end is no more precise): 94,000."""
    return f"{float(f'{value:.3g}'):,.0f}"


def _saving_per_call(rounds: list[tuple[float, float]]) -> float:
    return statistics.median(e for e, _ in rounds) - statistics.median(c for _, c in rounds)
